# Recall case 07 (sealed12): during the critic updates the generator forward is recorded by autograd, storing netG activations that are never backpropagated
# Thread: https://github.com/martinarjovsky/WassersteinGAN/pull/25
# Reported: training the critic also built and kept the generator's graph: slower steps and more memory than needed
# Confirmed cause: fake = netG(noisev) built netG's graph although only netD is trained in that phase; merged PR (soumith: 'if you do this, you dont need detach') makes the generator forward gradient-free for the critic step
# Class: forward through a frozen/other network with grad on when only its output values are needed (waste; .detach() afterwards does not avoid recording)
import torch
import torch.nn as nn


def make_nets(nz=100, ngf=64, ndf=64):
    netG = nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 4, 3, 4, 2, 1), nn.Tanh())
    netD = nn.Sequential(
        nn.Conv2d(3, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1), nn.LeakyReLU(0.2, True),
        nn.Conv2d(ndf * 2, 1, 4, 1, 0))
    return netG, netD


def train(dataloader, niter=25, Diters=5, nz=100, clamp=0.01, device="cuda"):
    netG, netD = make_nets(nz)
    netG, netD = netG.to(device), netD.to(device)
    optD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
    optG = torch.optim.RMSprop(netG.parameters(), lr=5e-5)
    noise = torch.empty(64, nz, 1, 1, device=device)
    for epoch in range(niter):
        data_iter = iter(dataloader)
        for real, _ in data_iter:
            for p in netD.parameters():
                p.requires_grad = True
            for _ in range(Diters):
                for p in netD.parameters():
                    p.data.clamp_(-clamp, clamp)
                netD.zero_grad()
                errD_real = netD(real.to(device)).mean()
                noise.normal_(0, 1)
                fake = netG(noise)  # leak: ANY
                errD_fake = netD(fake.detach()).mean()
                errD = errD_fake - errD_real
                errD.backward()
                optD.step()
            for p in netD.parameters():
                p.requires_grad = False
            netG.zero_grad()
            noise.normal_(0, 1)
            errG = -netD(netG(noise)).mean()
            errG.backward()
            optG.step()
