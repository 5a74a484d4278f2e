# Fixed twin of case 14: plain numbers reach the metrics (.item() at the call, float conversion in update), as the thread's fixes do.
import torch
import torch.nn as nn


def to_float(val):
    if torch.is_tensor(val):
        assert val.numel() == 1
        return float(val.detach().reshape(-1)[0])
    return float(val)


class Accumulator_(object):
    def __init__(self, name, tag):
        self.name = name
        self.tag = tag
        self.reset()

    def reset(self):
        self.acc = 0
        self.count = 0

    def update(self, val, n=1):
        self.acc += to_float(val) * n
        self.count += n


class AvgMetric_(Accumulator_):
    def get(self):
        return self.acc * 1. / self.count


class ParentWrapper_(object):
    def __init__(self, children):
        self.children = {child.name: child for child in children}

    def update(self, n=1, **kwargs):
        for key, value in kwargs.items():
            self.children[key].update(value, n)

    def reset(self):
        for child in self.children.values():
            child.reset()


def softplus(x):
    return torch.log(1.0 + torch.exp(x))


def train(dataloader, netGx, netGz, netDx, netDz, netDxz, optimizerD, optimizerG, train_metrics, nz, device):
    for batch_id, (real_cpu, _) in enumerate(dataloader):
        x = real_cpu.to(device)
        z = torch.randn(x.size(0), nz, 1, 1, device=device)
        noise = torch.randn(x.size(0), 1, 1, 1, device=device)

        z_hat = netGz(x)
        mu, sigma = z_hat[:, :nz], z_hat[:, nz:].exp()
        z_hat = mu + sigma * noise.expand_as(sigma)
        x_hat = netGx(z)
        data_preds = netDxz(torch.cat([netDx(x), netDz(z_hat)], 1))
        sample_preds = netDxz(torch.cat([netDx(x_hat), netDz(z)], 1))

        D_loss = torch.mean(softplus(-data_preds) + softplus(sample_preds))
        G_loss = torch.mean(softplus(data_preds) + softplus(-sample_preds))

        optimizerD.zero_grad()
        D_loss.backward(retain_graph=True)
        optimizerD.step()
        optimizerG.zero_grad()
        G_loss.backward()
        optimizerG.step()

        train_metrics.update(loss1=D_loss.item(), loss2=G_loss.item(), n=len(real_cpu))


def main(dataloader, nets, optimizers, nz, device, n_epochs):
    train_metrics = ParentWrapper_(children=(AvgMetric_(name='loss1', tag='train'), AvgMetric_(name='loss2', tag='train')))
    for epoch in range(n_epochs):
        train(dataloader, *nets, *optimizers, train_metrics, nz, device)
        print(epoch, {k: c.get() for k, c in train_metrics.children.items()})
        train_metrics.reset()
