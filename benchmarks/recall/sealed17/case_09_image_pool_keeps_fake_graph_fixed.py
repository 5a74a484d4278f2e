# Fixed twin of case 09: the pools are fed detached images (`self.fake_B_pool.query(self.fake_B.detach())`, same for fake_A), so the history buffer holds no generator graph
# Thread: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/139
# Reported: GPU memory keeps increasing during CycleGAN training until it runs out of memory
# Confirmed cause: ImagePool.query kept the fake images produced by the generators (with their autograd history) in its 50-image history buffer, so every stored image pinned a generator graph; the fix merged in PR #141 (https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/pull/141) feeds the pool plain tensors (the data of the generated images) instead of graph-carrying Variables; later versions do the same inside the pool (image.data)
# Class: history buffer filled with graph-carrying outputs
import random

import torch
import torch.nn as nn


class ImagePool:
    def __init__(self, pool_size):
        self.pool_size = pool_size
        if self.pool_size > 0:
            self.num_imgs = 0
            self.images = []

    def query(self, images):
        if self.pool_size == 0:
            return images
        return_images = []
        for image in images:
            image = torch.unsqueeze(image, 0)
            if self.num_imgs < self.pool_size:
                self.num_imgs += 1
                self.images.append(image)
                return_images.append(image)
            else:
                p = random.uniform(0, 1)
                if p > 0.5:
                    random_id = random.randint(0, self.pool_size - 1)
                    tmp = self.images[random_id].clone()
                    self.images[random_id] = image
                    return_images.append(tmp)
                else:
                    return_images.append(image)
        return torch.cat(return_images, 0)


class CycleGANModel:
    def __init__(self, netG_A, netG_B, netD_A, netD_B, pool_size=50, lambda_cycle=10.0, device="cuda"):
        self.netG_A, self.netG_B = netG_A.to(device), netG_B.to(device)
        self.netD_A, self.netD_B = netD_A.to(device), netD_B.to(device)
        self.fake_A_pool = ImagePool(pool_size)
        self.fake_B_pool = ImagePool(pool_size)
        self.criterionGAN = nn.MSELoss()
        self.criterionCycle = nn.L1Loss()
        self.lambda_cycle = lambda_cycle
        self.optimizer_G = torch.optim.Adam(list(netG_A.parameters()) + list(netG_B.parameters()), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(list(netD_A.parameters()) + list(netD_B.parameters()), lr=2e-4, betas=(0.5, 0.999))
        self.device = device

    def set_input(self, real_A, real_B):
        self.real_A = real_A.to(self.device)
        self.real_B = real_B.to(self.device)

    def forward(self):
        self.fake_B = self.netG_A(self.real_A)
        self.rec_A = self.netG_B(self.fake_B)
        self.fake_A = self.netG_B(self.real_B)
        self.rec_B = self.netG_A(self.fake_A)

    def gan_loss(self, pred, target_is_real):
        target = torch.ones_like(pred) if target_is_real else torch.zeros_like(pred)
        return self.criterionGAN(pred, target)

    def backward_D_basic(self, netD, real, fake):
        loss_D_real = self.gan_loss(netD(real), True)
        loss_D_fake = self.gan_loss(netD(fake.detach()), False)
        loss_D = (loss_D_real + loss_D_fake) * 0.5
        loss_D.backward()
        return loss_D

    def backward_G(self):
        self.loss_G_A = self.gan_loss(self.netD_A(self.fake_B), True)
        self.loss_G_B = self.gan_loss(self.netD_B(self.fake_A), True)
        self.loss_cycle_A = self.criterionCycle(self.rec_A, self.real_A) * self.lambda_cycle
        self.loss_cycle_B = self.criterionCycle(self.rec_B, self.real_B) * self.lambda_cycle
        self.loss_G = self.loss_G_A + self.loss_G_B + self.loss_cycle_A + self.loss_cycle_B
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
        self.optimizer_D.zero_grad()
        fake_B = self.fake_B_pool.query(self.fake_B.detach())
        self.loss_D_A = self.backward_D_basic(self.netD_A, self.real_B, fake_B)
        fake_A = self.fake_A_pool.query(self.fake_A.detach())
        self.loss_D_B = self.backward_D_basic(self.netD_B, self.real_A, fake_A)
        self.optimizer_D.step()
