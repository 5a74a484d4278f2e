# Fixed twin of case 21: the generator step calls backward(retain_graph=True) so the discriminator step can reuse it
# Thread: https://github.com/grey-eye/talking-heads/pull/7
# Reported: training the few-shot talking-heads GAN needs more GPU memory than necessary
# Confirmed cause: loss_EG.backward(retain_graph=True) keeps the whole E/G/D graph alive across the discriminator
#   update every iteration; the merged PR ("avoid using retain_graph=True to save memory") recomputes the
#   discriminator inputs from detached tensors instead
# Class: retain_graph=True inside the training loop
import torch
import torch.nn as nn
import torch.nn.functional as F


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(6, 64, 4, 2, 1), nn.ReLU(), nn.Conv2d(64, 512, 4, 2, 1),
                                 nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def forward(self, x, y):
        return self.net(torch.cat([x, y], 1)).mean(0, keepdim=True)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3 + 512, 256, 3, 1, 1), nn.ReLU(), nn.Conv2d(256, 3, 3, 1, 1))

    def forward(self, y, e):
        return torch.tanh(self.net(torch.cat([y, e[..., None, None].expand(y.size(0), -1, *y.shape[2:])], 1)))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(6, 128, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(128, 1, 4, 2, 1))

    def forward(self, x, y):
        return self.net(torch.cat([x, y], 1)).mean()


def train(E, G, D, batches, device):
    optimizer_E_G = torch.optim.Adam(list(E.parameters()) + list(G.parameters()), lr=5e-5)
    optimizer_D = torch.optim.Adam(D.parameters(), lr=2e-4)
    for i, (x, y, x_t, y_t) in enumerate(batches):
        x, y, x_t, y_t = x.to(device), y.to(device), x_t.to(device), y_t.to(device)
        optimizer_E_G.zero_grad()
        optimizer_D.zero_grad()
        e_hat = E(x, y)
        x_hat = G(y_t, e_hat)
        r_x_hat = D(x_hat, y_t)
        loss_EG = F.l1_loss(x_hat, x_t) - r_x_hat
        loss_EG.backward()

        r_x_hat = D(x_hat.detach(), y_t)
        r_x = D(x_t, y_t)
        loss_D = F.relu(1 + r_x_hat) + F.relu(1 - r_x)
        optimizer_D.zero_grad()
        loss_D.backward()
        optimizer_E_G.step()
        optimizer_D.step()
        if i % 100 == 0:
            print(i, loss_EG.item(), loss_D.item())


def batches(n):
    for _ in range(n):
        yield (torch.rand(8, 3, 256, 256), torch.rand(8, 3, 256, 256),
               torch.rand(1, 3, 256, 256), torch.rand(1, 3, 256, 256))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    train(Embedder().to(device), Generator().to(device), Discriminator().to(device), batches(100000), device)
