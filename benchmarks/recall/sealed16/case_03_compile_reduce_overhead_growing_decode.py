# Recall case 03 (sealed16): decode loop calls a reduce-overhead torch.compile model with a sequence that grows by one token per step
# Thread: https://github.com/pytorch/pytorch/issues/128424
# Reported: torch.compile(mode='reduce-overhead') takes very long and GPU memory keeps growing on the second pass over every sequence length (also with HF Llama/Gemma generate)
# Confirmed cause: a new CUDA graph is recorded for every distinct input size; the inductor maintainers' follow-up PR #131387 cites this issue as caused by re-recording one cudagraph per dynamic shape, which is only logged at info level
# Class: torch.compile reduce-overhead (CUDA graphs) fed many input shapes; one graph plus its memory per shape
import torch
import torch.nn as nn


class TinyDecoder(nn.Module):
    def __init__(self, vocab=32000, dim=1024):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.block = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.head = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        h = self.embed(input_ids)
        h = h + self.block(h)
        return self.head(h[:, -1])


model = TinyDecoder().cuda().eval()
compiled = torch.compile(model, mode="reduce-overhead")  # leak: ANY


@torch.no_grad()
def generate(prompt, max_len):
    ids = prompt
    while ids.shape[1] < max_len:
        logits = compiled(ids)  # leak: ANY
        next_id = logits.argmax(-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=1)
    return ids


if __name__ == "__main__":
    prompt = torch.randint(0, 32000, (1, 8), device="cuda")
    for outer in range(3):
        out = generate(prompt, max_len=2048)
        print(outer, torch.cuda.memory_allocated())
