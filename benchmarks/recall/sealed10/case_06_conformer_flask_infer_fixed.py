# Fixed twin of case 06: requests run under torch.no_grad(), so the kept attention/hidden tensors carry no graph
# Thread: https://github.com/burchim/EfficientConformer/issues/7
# Reported: during CPU inference in a Flask web app, memory used at `x, attention, hidden = block(x, mask)` is never released and the server eventually OOMs
# Confirmed cause: requests ran without torch.no_grad(), and the attention weights / hidden states returned by each block are not detached, so graph state accumulates; reporter confirmed torch.no_grad() fixed it, maintainer confirmed the undetached attention/hidden tensors
# Class: inference service without no_grad; per-layer outputs kept with graph
import torch
import torch.nn as nn

try:
    from flask import Flask, request, jsonify
except ImportError:  # the service needs flask at runtime
    Flask = None


class ConformerBlock(nn.Module):
    def __init__(self, dim=144, heads=4):
        super().__init__()
        self.att = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.SiLU(), nn.Linear(4 * dim, dim))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, mask=None):
        a, attention = self.att(x, x, x, key_padding_mask=mask)
        x = x + a
        hidden = x + self.ff(x)
        return self.norm(hidden), attention, hidden


class ConformerEncoder(nn.Module):
    def __init__(self, n_blocks=16, dim=144, n_mels=80, vocab=256):
        super().__init__()
        self.proj = nn.Linear(n_mels, dim)
        self.blocks = nn.ModuleList([ConformerBlock(dim) for _ in range(n_blocks)])
        self.out = nn.Linear(dim, vocab)
        self.attentions = []
        self.hiddens = []

    def forward(self, feats, mask=None):
        x = self.proj(feats)
        self.attentions, self.hiddens = [], []
        for block in self.blocks:
            x, attention, hidden = block(x, mask)
            self.attentions.append(attention)
            self.hiddens.append(hidden)
        return self.out(x)


model = ConformerEncoder()
model.eval()


def greedy_decode(logits):
    return logits.argmax(-1).squeeze(0).tolist()


def transcribe(feats):
    with torch.no_grad():
        logits = model(feats)
    return greedy_decode(logits)


if Flask is not None:
    app = Flask(__name__)

    @app.route("/transcribe", methods=["POST"])
    def transcribe_route():
        n_frames = int(request.json.get("frames", 1500))
        feats = torch.randn(1, n_frames, 80)
        return jsonify({"tokens": transcribe(feats)})


if __name__ == "__main__":
    for _ in range(10000):
        transcribe(torch.randn(1, 1500, 80))
