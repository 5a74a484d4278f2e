# Thread: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/512
# Reported: on a spring-2018 offshoot of the CycleGAN code, training on large images runs out of
#   GPU memory; the reporter wanted to spread the fake-image pool over several GPUs.
# Confirmed cause: the reporter (after fixing it): the pool kept the generated images with their
#   autograd history; "simply making sure that detached images are placed on the pool already
#   reduces the memory footprint significantly" (the pool only feeds the discriminator's backward).
# Class: history buffer (GAN image pool) on an object stores generator outputs with their graph every step
import random

import torch


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
            image = torch.unsqueeze(image, 0)  # leak: ANY
            if self.num_imgs < self.pool_size:
                self.num_imgs = self.num_imgs + 1
                self.images.append(image)  # leak: ANY
                return_images.append(image)
            else:
                p = random.uniform(0, 1)
                if p > 0.5:
                    random_id = random.randint(0, self.pool_size - 1)
                    tmp = self.images[random_id].clone()
                    self.images[random_id] = image  # leak: ANY
                    return_images.append(tmp)
                else:
                    return_images.append(image)
        return torch.cat(return_images, 0)


def backward_D_basic(netD, criterionGAN, real, fake):
    pred_real = netD(real)
    loss_D_real = criterionGAN(pred_real, torch.ones_like(pred_real))
    pred_fake = netD(fake.detach())
    loss_D_fake = criterionGAN(pred_fake, torch.zeros_like(pred_fake))
    loss_D = (loss_D_real + loss_D_fake) * 0.5
    loss_D.backward()
    return loss_D


def train(netG_A, netD_A, loader, optimizer_G, optimizer_D, criterionGAN, device, pool_size=50):
    fake_B_pool = ImagePool(pool_size)
    for real_A, real_B in loader:
        real_A = real_A.to(device)
        real_B = real_B.to(device)

        optimizer_G.zero_grad()
        fake_B = netG_A(real_A)
        pred = netD_A(fake_B)
        loss_G = criterionGAN(pred, torch.ones_like(pred))
        loss_G.backward()
        optimizer_G.step()

        optimizer_D.zero_grad()
        fake_B_pooled = fake_B_pool.query(fake_B)
        backward_D_basic(netD_A, criterionGAN, real_B, fake_B_pooled)
        optimizer_D.step()
