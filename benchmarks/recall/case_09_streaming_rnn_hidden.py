# Recall case 09: a long stream fed through an RNN step by step, hidden state fed back, no backward
# Thread: https://github.com/pytorch/pytorch/issues/2198
# Reported: memory keeps growing when running an LSTM/RNN over a long input one step at a time.
# Confirmed cause: `out, hidden = rnn(data, hidden)` in a 10,000-step loop: "out and hidden will
#   hold the whole history ... Memory is exhausted by storing the backward information of this
#   sequence" (Stonesjtu; apaszke: `hidden` keeps the whole graph alive, detach it periodically).
#   Nothing ever calls backward, so the graph is pure waste.
# Class: recurrent state fed back with grad enabled and no backward at all
import torch
from torch import nn

input_size, hidden_size = 256, 400


class StreamEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRUCell(input_size, hidden_size)
        self.head = nn.Linear(hidden_size, 16)

    def forward(self, frame, hidden):
        hidden = self.rnn(frame, hidden)
        return self.head(hidden), hidden


def encode_stream(model, frames, device="cuda"):
    """Run the encoder over a long feature stream and return one embedding per frame."""
    model.to(device)
    hidden = torch.zeros(16, hidden_size, device=device)
    embeddings = []
    for i in range(frames.shape[0]):
        data = frames[i].to(device)
        out, hidden = model(data, hidden)  # leak: ANY
        embeddings.append(out.cpu().numpy())
    return embeddings


if __name__ == "__main__":
    stream = torch.rand(10000, 16, input_size)
    print(len(encode_stream(StreamEncoder(), stream)))
