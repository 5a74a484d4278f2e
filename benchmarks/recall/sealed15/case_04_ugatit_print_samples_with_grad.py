# Recall case 04 (sealed15): U-GAT-IT train() renders sample translations every print_freq steps with the generators run outside torch.no_grad()
# Thread: https://github.com/znxlwm/UGATIT-pytorch/pull/74
# Reported: CUDA out of memory at the 1000th iteration (print_freq) although training itself fits; issue #23
# Confirmed cause: suggested in issue #23 and confirmed by the PR author: the sample-image block at each print step runs genA2B/genB2A forward passes with autograd on, on top of the live training step; wrapping that block in torch.no_grad() removed the OOM and memory stayed flat for 128k iterations
# Class: visualisation forward passes with grad enabled inside the training loop
import numpy as np
import torch
import torch.nn as nn


def tensor2numpy(x):
    return x.detach().cpu().numpy().transpose(1, 2, 0)


class ResnetGenerator(nn.Module):
    def __init__(self, ngf=64):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, ngf, 7, padding=3), nn.ReLU(), nn.Conv2d(ngf, ngf, 3, padding=1), nn.ReLU(), nn.Conv2d(ngf, 3, 7, padding=3), nn.Tanh())
        self.cam = nn.Conv2d(3, 1, 1)

    def forward(self, x):
        out = self.body(x)
        return out, out.mean((1, 2, 3)), self.cam(out)


class UGATIT:
    def __init__(self, device, print_freq=1000, iteration=1000000):
        self.device = device
        self.print_freq = print_freq
        self.iteration = iteration
        self.genA2B = ResnetGenerator().to(device)
        self.genB2A = ResnetGenerator().to(device)
        self.G_optim = torch.optim.Adam(list(self.genA2B.parameters()) + list(self.genB2A.parameters()), lr=1e-4)

    def batch(self):
        return torch.randn(1, 3, 256, 256, device=self.device), torch.randn(1, 3, 256, 256, device=self.device)

    def train(self, train_sample_num=5):
        for step in range(1, self.iteration + 1):
            self.genA2B.train(), self.genB2A.train()
            real_A, real_B = self.batch()
            fake_A2B, _, _ = self.genA2B(real_A)
            fake_B2A, _, _ = self.genB2A(real_B)
            fake_A2B2A, _, _ = self.genB2A(fake_A2B)
            G_loss = (fake_A2B2A - real_A).abs().mean() + (fake_B2A - real_B).abs().mean()
            self.G_optim.zero_grad()
            G_loss.backward()
            self.G_optim.step()

            if step % self.print_freq == 0:
                A2B = np.zeros((256 * 3, 0, 3))
                self.genA2B.eval(), self.genB2A.eval()  # leak: ANY
                for _ in range(train_sample_num):
                    real_A, _ = self.batch()
                    fake_A2B, _, fake_A2B_heatmap = self.genA2B(real_A)  # leak: ANY
                    fake_A2B2A, _, fake_A2B2A_heatmap = self.genB2A(fake_A2B)
                    A2B = np.concatenate((A2B, np.concatenate((tensor2numpy(real_A[0]), tensor2numpy(fake_A2B[0]), tensor2numpy(fake_A2B2A[0])), 0)), 1)
                np.save("A2B_%07d.npy" % step, A2B)


if __name__ == "__main__":
    UGATIT(torch.device("cuda")).train()
