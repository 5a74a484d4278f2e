# Recall case 06 (sealed9): an inference-only code predictor writes hidden states into a persistent module buffer while autograd is on
# Thread: https://github.com/sgl-project/sglang-omni/pull/1720
# Reported: live tensor memory grew by about 170 MiB per 50-request pass in the eager serving path
# Confirmed cause: code_predictor_forward ran under the scheduler thread's grad mode; tracked writes made the model buffers keep request graphs alive; merged PR adds @torch.no_grad()
# Class: evaluation/inference helper without no_grad whose outputs are stored in long-lived state
import torch
import torch.nn as nn


class Qwen3OmniTalker(nn.Module):
    def __init__(self, hidden=1024, codebooks=16, vocab=2048, max_batch=64):
        super().__init__()
        self.backbone = nn.GRU(hidden, hidden, batch_first=True)
        self.code_heads = nn.ModuleList(nn.Linear(hidden, vocab) for _ in range(codebooks))
        self.code_embed = nn.Embedding(vocab, hidden)
        self.register_buffer("last_hidden", torch.zeros(max_batch, hidden), persistent=False)
        self.register_buffer("codes", torch.zeros(max_batch, codebooks, dtype=torch.long), persistent=False)

    @torch.no_grad()
    def forward(self, embeds):
        out, _ = self.backbone(embeds)
        return out[:, -1]

    def code_predictor_forward(self, hidden_states):
        n = hidden_states.shape[0]
        h = hidden_states
        for i, head in enumerate(self.code_heads):
            code = head(h).argmax(-1)
            self.codes[:n, i] = code
            h = h + self.code_embed(code)
        self.last_hidden[:n] = h  # leak: ANY
        return self.codes[:n].clone()


class QwenTalkerModelRunner:
    def __init__(self, model):
        self.model = model

    def post_prefill(self, embeds):
        hidden = self.model(embeds)
        hidden = hidden + self.model.code_embed.weight[:1]
        return self.model.code_predictor_forward(hidden)


if __name__ == "__main__":
    runner = QwenTalkerModelRunner(Qwen3OmniTalker().cuda())
    for request in range(5000):
        codes = runner.post_prefill(torch.randn(8, 32, 1024, device="cuda"))
