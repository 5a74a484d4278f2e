# Fixed twin of case 12: detach the carried (h0, c0) and call backward() without retain_graph
# Thread: https://e-com-net.com/article/1600156146990088192.htm
# Reported: first 'Trying to backward through the graph a second time', then after setting retain_graph=True a CUDA out of memory after a while
# Confirmed cause: the author explains the hidden state is re-fed across batches with its graph attached and retain_graph=True keeps every batch's graph; the right fix is to cut the carried state (detach) and drop retain_graph
# Class: recurrent hidden state stored on the module and carried across batches without detach, plus backward(retain_graph=True) in the loop
import torch
import torch.nn as nn


class LSTMRegressor(nn.Module):
    def __init__(self, n_in=64, hidden=256, batch=32):
        super().__init__()
        self.flat = nn.Flatten(2)
        self.lstm = nn.LSTM(n_in, hidden, batch_first=True)
        self.model1 = nn.Linear(hidden, 1)
        self.h0 = torch.zeros(1, batch, hidden)
        self.c0 = torch.zeros(1, batch, hidden)

    def forward(self, inp):
        to_in = self.flat(inp)
        f, state = self.lstm(to_in, (self.h0, self.c0))
        (self.h0, self.c0) = (state[0].detach(), state[1].detach())
        return self.model1(f[:, -1])


def train(model, loader, device, epochs=50):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.h0, model.c0 = model.h0.to(device), model.c0.to(device)
    for _ in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    dev = torch.device("cuda")
    data = [(torch.randn(32, 100, 8, 8), torch.randn(32, 1)) for _ in range(200)]
    train(LSTMRegressor().to(dev), data, dev)
