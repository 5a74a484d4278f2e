# Fixed twin of case 10: the global checkpoint dict is dropped once the model and optimizer states are loaded
# Thread: https://github.com/karpathy/nanoGPT/pull/236
# Reported: a model that trains fine from scratch hits "CUDA out of memory" on the first forward pass after --init_from=resume
# Confirmed cause: `checkpoint = torch.load(ckpt_path, map_location=device)` keeps model and optimizer tensors on the GPU
#   and, being a module-level global, is never released after the load_state_dict calls; the merged PR sets
#   `checkpoint = None` after loading (see also https://github.com/karpathy/nanoGPT/issues/158)
# Class: torch.load onto the device into a long-lived (global) reference that outlives its use
import math
import os
import time

import numpy as np
import torch
from torch import nn

out_dir = "out"
init_from = "resume"  # 'scratch' or 'resume'
device = "cuda"
batch_size = 12
block_size = 1024
learning_rate = 6e-4
max_iters = 600000
eval_interval = 2000
grad_clip = 1.0


class GPT(nn.Module):
    def __init__(self, vocab_size=50304, n_layer=12, n_head=12, n_embd=768):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        layer = nn.TransformerEncoderLayer(n_embd, n_head, 4 * n_embd, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, n_layer)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        mask = nn.Transformer.generate_square_subsequent_mask(idx.size(1), device=idx.device)
        x = self.blocks(self.wte(idx), mask=mask, is_causal=True)
        logits = self.lm_head(x)
        loss = None
        if targets is not None:
            loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


data = np.memmap(os.path.join("data", "openwebtext", "train.bin"), dtype=np.uint16, mode="r")


def get_batch():
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy(data[i:i + block_size].astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + block_size].astype(np.int64)) for i in ix])
    return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)


iter_num = 0
best_val_loss = 1e9
if init_from == "scratch":
    model = GPT()
elif init_from == "resume":
    ckpt_path = os.path.join(out_dir, "ckpt.pt")
    checkpoint = torch.load(ckpt_path, map_location=device)
    model = GPT(**checkpoint["model_args"])
    state_dict = checkpoint["model"]
    unwanted_prefix = "_orig_mod."
    for k, v in list(state_dict.items()):
        if k.startswith(unwanted_prefix):
            state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
    model.load_state_dict(state_dict)
    iter_num = checkpoint["iter_num"]
    best_val_loss = checkpoint["best_val_loss"]
model.to(device)

optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, betas=(0.9, 0.95), weight_decay=0.1)
if init_from == "resume":
    optimizer.load_state_dict(checkpoint["optimizer"])
checkpoint = None  # free up memory

scaler = torch.cuda.amp.GradScaler()
X, Y = get_batch()
t0 = time.time()
while iter_num <= max_iters:
    lr = learning_rate * 0.5 * (1.0 + math.cos(math.pi * iter_num / max_iters))
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        logits, loss = model(X, Y)
    X, Y = get_batch()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    if iter_num % eval_interval == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "model_args": {}, "iter_num": iter_num, "best_val_loss": best_val_loss},
                   os.path.join(out_dir, "ckpt.pt"))
        print(f"iter {iter_num}: loss {loss.item():.4f}, {time.time() - t0:.1f}s")
    iter_num += 1
