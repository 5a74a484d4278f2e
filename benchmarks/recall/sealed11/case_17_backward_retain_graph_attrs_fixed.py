# Fixed twin of case 17: calls backward(retain_graph=False) on the group losses
# Thread: https://github.com/jolibrain/joliGEN/pull/281
# Reported: GAN training uses more GPU memory than necessary; the generator/discriminator graphs are kept after their backward pass
# Confirmed cause: optimize_parameters called ll.backward(retain_graph=True) on each group loss (stored as self.loss_G_tot / self.loss_D_tot), so the saved activations of each graph stay alive until the attribute is overwritten next iteration; maintainer's merged fix "no need for retain_graph to be True on losses" switched to retain_graph=False
# Class: backward(retain_graph=True) in the training loop without a later backward needing the graph
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_block(cin, cout, down=True):
    conv = nn.Conv2d(cin, cout, 4, 2, 1) if down else nn.ConvTranspose2d(cin, cout, 4, 2, 1)
    return nn.Sequential(conv, nn.InstanceNorm2d(cout), nn.LeakyReLU(0.2))


class NetworkGroup:
    def __init__(self, networks_to_optimize, forward_functions, backward_functions, loss_backward, optimizer):
        self.networks_to_optimize = networks_to_optimize
        self.forward_functions = forward_functions
        self.backward_functions = backward_functions
        self.loss_backward = loss_backward
        self.optimizer = optimizer


class CycleLikeModel:
    def __init__(self, opt):
        self.opt = opt
        self.netG_A = nn.Sequential(conv_block(3, 64), conv_block(64, 128), conv_block(128, 64, down=False),
                                    nn.ConvTranspose2d(64, 3, 4, 2, 1), nn.Tanh()).cuda()
        self.netD_A = nn.Sequential(conv_block(3, 64), conv_block(64, 128), nn.Conv2d(128, 1, 4, 1, 1)).cuda()
        self.model_names = ["G_A", "D_A"]
        self.optimizer_G = torch.optim.Adam(self.netG_A.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD_A.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.networks_groups = [
            NetworkGroup(["G_A"], ["forward"], ["compute_G_loss"], ["loss_G_tot"], self.optimizer_G),
            NetworkGroup(["D_A"], None, ["compute_D_loss"], ["loss_D_tot"], self.optimizer_D),
        ]
        self.niter = 0

    def set_input(self, real_A, real_B):
        self.real_A, self.real_B = real_A.cuda(), real_B.cuda()

    def set_requires_grad(self, net, flag):
        for p in net.parameters():
            p.requires_grad = flag

    def forward(self):
        self.fake_B = self.netG_A(self.real_A)

    def compute_G_loss(self):
        pred_fake = self.netD_A(self.fake_B)
        self.loss_G_GAN = F.mse_loss(pred_fake, torch.ones_like(pred_fake))
        self.loss_G_idt = F.l1_loss(self.fake_B, self.real_A) * 10.0
        self.loss_G_tot = self.loss_G_GAN + self.loss_G_idt

    def compute_D_loss(self):
        pred_real = self.netD_A(self.real_B)
        pred_fake = self.netD_A(self.fake_B.detach())
        self.loss_D_tot = 0.5 * (F.mse_loss(pred_real, torch.ones_like(pred_real))
                                 + F.mse_loss(pred_fake, torch.zeros_like(pred_fake)))

    def optimize_parameters(self):
        self.niter += 1
        for group in self.networks_groups:
            for network in self.model_names:
                self.set_requires_grad(getattr(self, "net" + network), network in group.networks_to_optimize)
            if group.forward_functions is not None:
                for forward in group.forward_functions:
                    getattr(self, forward)()
            for backward in group.backward_functions:
                getattr(self, backward)()
            for loss in group.loss_backward:
                ll = getattr(self, loss) / self.opt.train_iter_size
                ll.backward(retain_graph=False)
            if self.niter % self.opt.train_iter_size == 0:
                group.optimizer.step()
                group.optimizer.zero_grad()


if __name__ == "__main__":
    opt = SimpleNamespace(train_iter_size=1)
    model = CycleLikeModel(opt)
    for it in range(100_000):
        model.set_input(torch.randn(4, 3, 512, 512), torch.randn(4, 3, 512, 512))
        model.optimize_parameters()
        if it % 100 == 0:
            print(it, float(model.loss_G_tot), float(model.loss_D_tot), torch.cuda.max_memory_allocated() / 2**30)
