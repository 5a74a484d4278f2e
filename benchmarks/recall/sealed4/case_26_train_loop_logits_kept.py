# Recall case 26 (sealed4): pretraining loop keeps the full-vocabulary logits referenced through backward and into the next step
# Thread: https://github.com/foundation-model-stack/fms-fsdp/pull/152
# Reported: the training code holds onto `output` (the model logits) throughout the loop, so the previous iteration's logits are still alive while the next one runs (128k vocab x 4k seq in bf16 is ~1 GiB per sample)
# Confirmed cause: `output` stayed bound after the loss was computed, so its CUDA memory could not be freed/reused until reassigned in the next iteration; the merged PR deletes it right after the loss (`del output`) before backward
# Class: large intermediate (logits) kept alive by a loop variable across backward / the next iteration
import time

import torch
import torch.nn as nn


class LLaMALike(nn.Module):
    def __init__(self, vocab=128_256, dim=2048, layers=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.blocks = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 16, 4 * dim, batch_first=True), layers)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        mask = nn.Transformer.generate_square_subsequent_mask(ids.size(1), device=ids.device)
        return self.head(self.blocks(self.emb(ids), mask=mask, is_causal=True))


def train(cfg, model, local_rank, train_loader, optimizer, scheduler):
    model.train()
    ddp_stats = torch.zeros(3).to(local_rank)
    start = time.time()
    for batch_idx, (input, label) in enumerate(train_loader, start=1):
        if batch_idx > cfg["num_steps"]:
            break
        input, label = input.to(local_rank), label.to(local_rank)
        optimizer.zero_grad()
        output = model(input)  # leak: ANY
        output = output.logits if hasattr(output, "logits") else output
        ce_loss = torch.nn.CrossEntropyLoss()
        loss = ce_loss(output.view(-1, output.size(-1)), label.view(-1).long())

        loss.backward()
        ddp_stats[1] += torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["grad_clip_thresh"]).item()
        optimizer.step()
        scheduler.step()
        ddp_stats[0] += loss.item()
        ddp_stats[2] += 1
        if batch_idx % cfg["report_interval"] == 0:
            print(batch_idx, (ddp_stats[0] / ddp_stats[2]).item(), time.time() - start,
                  torch.cuda.max_memory_allocated() / 2**30)
            ddp_stats.zero_()


if __name__ == "__main__":
    cfg = {"num_steps": 10_000, "grad_clip_thresh": 1.0, "report_interval": 50}
    model = LLaMALike().to(0).to(torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, s / 1000))
    loader = ((torch.randint(0, 128_256, (2, 4096)), torch.randint(0, 128_256, (2, 4096))) for _ in range(10_000))
    train(cfg, model, 0, loader, optimizer, scheduler)
