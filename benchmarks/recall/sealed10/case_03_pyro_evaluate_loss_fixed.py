# Fixed twin of case 03: evaluate_loss runs under torch.no_grad(), so no graph is built for the reported loss
# Thread: https://github.com/pyro-ppl/pyro/pull/1047
# Reported: memory blow-ups during evaluation when SVI.evaluate_loss is called on held-out data
# Confirmed cause: evaluate_loss computed the ELBO with grad enabled (the old `volatile` path was gone), building a graph nobody backpropagates; fixed by wrapping it in torch.no_grad() (merged PR by Pyro maintainer)
# Class: evaluation helper computing a loss with grad on
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, x_dim=784, z_dim=50, hidden=400):
        super().__init__()
        self.fc = nn.Linear(x_dim, hidden)
        self.loc = nn.Linear(hidden, z_dim)
        self.scale = nn.Linear(hidden, z_dim)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        return self.loc(h), torch.nn.functional.softplus(self.scale(h))


class Decoder(nn.Module):
    def __init__(self, x_dim=784, z_dim=50, hidden=400):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, hidden), nn.ReLU(), nn.Linear(hidden, x_dim))

    def forward(self, z):
        return torch.sigmoid(self.net(z))


def trace_elbo(model, guide, x):
    loc, scale = guide(x)
    z = loc + scale * torch.randn_like(scale)
    recon = model(z)
    log_lik = -nn.functional.binary_cross_entropy(recon, x, reduction="sum")
    kl = 0.5 * torch.sum(loc ** 2 + scale ** 2 - 2 * torch.log(scale) - 1)
    return -(log_lik - kl)


class SVI:
    def __init__(self, model, guide, optim, loss):
        self.model, self.guide, self.optim, self.loss = model, guide, optim, loss

    def step(self, x):
        loss = self.loss(self.model, self.guide, x)
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        return loss.item()

    def evaluate_loss(self, x):
        """Evaluate the loss function; does not take a gradient step."""
        with torch.no_grad():
            return self.loss(self.model, self.guide, x)


if __name__ == "__main__":
    encoder, decoder = Encoder(), Decoder()
    params = list(encoder.parameters()) + list(decoder.parameters())
    svi = SVI(decoder, encoder, torch.optim.Adam(params, lr=1e-3), trace_elbo)
    test_batches = [torch.rand(256, 784) for _ in range(40)]
    for epoch in range(100):
        for _ in range(100):
            svi.step(torch.rand(256, 784))
        test_losses = []
        for xb in test_batches:
            test_losses.append(svi.evaluate_loss(xb))
        print(epoch, float(sum(test_losses)) / len(test_losses))
