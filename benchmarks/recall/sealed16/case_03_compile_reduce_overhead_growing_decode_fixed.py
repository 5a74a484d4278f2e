# Fixed twin of case 03: decode into a fixed-size padded buffer so the compiled model always sees one shape (one CUDA graph)
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

    def forward(self, input_ids, last_pos):
        h = self.embed(input_ids)
        h = h + self.block(h)
        last = h.gather(1, last_pos.view(-1, 1, 1).expand(-1, 1, h.shape[-1])).squeeze(1)
        return self.head(last)


model = TinyDecoder().cuda().eval()
compiled = torch.compile(model, mode="reduce-overhead")


@torch.no_grad()
def generate(prompt, max_len):
    ids = torch.zeros(1, max_len, dtype=torch.long, device="cuda")
    ids[:, : prompt.shape[1]] = prompt
    cur = prompt.shape[1]
    while cur < max_len:
        last_pos = torch.tensor([cur - 1], device="cuda")
        logits = compiled(ids, last_pos)
        ids[:, cur] = logits.argmax(-1)
        cur += 1
    return ids


if __name__ == "__main__":
    prompt = torch.randint(0, 32000, (1, 8), device="cuda")
    for outer in range(3):
        out = generate(prompt, max_len=2048)
        print(outer, torch.cuda.memory_allocated())
