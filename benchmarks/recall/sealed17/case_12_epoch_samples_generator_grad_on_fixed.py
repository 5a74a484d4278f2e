# Fixed twin of case 12: the samples are generated under `with torch.no_grad():` and stored as `samples_z.detach().cpu()`
# Thread: https://github.com/udacity/deep-learning-v2-pytorch/pull/106
# Reported: CUDA memory use grows after every epoch of the face-generation training loop
# Confirmed cause: the end-of-epoch sample generation `samples_z = G(fixed_z)` ran with autograd on and the graph-carrying GPU output was appended to the samples list kept for the whole training; the merged fix generates under torch.no_grad() and stores `samples_z.detach().cpu()`
# Class: generation / predict (samples kept on the device with their graph)
import pickle as pkl

import numpy as np
import torch
import torch.nn.functional as F
import torch.optim as optim

train_on_gpu = torch.cuda.is_available()
z_size = 100


def scale(x, feature_range=(-1, 1)):
    lo, hi = feature_range
    return x * (hi - lo) + lo


def real_loss(D_out):
    return F.binary_cross_entropy_with_logits(D_out.squeeze(), torch.ones(D_out.size(0), device=D_out.device))


def fake_loss(D_out):
    return F.binary_cross_entropy_with_logits(D_out.squeeze(), torch.zeros(D_out.size(0), device=D_out.device))


def train(D, G, celeba_train_loader, n_epochs, print_every=50):
    if train_on_gpu:
        D.cuda()
        G.cuda()
    d_optimizer = optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
    g_optimizer = optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))

    samples = []
    losses = []
    sample_size = 16
    fixed_z = np.random.uniform(-1, 1, size=(sample_size, z_size))
    fixed_z = torch.from_numpy(fixed_z).float()
    if train_on_gpu:
        fixed_z = fixed_z.cuda()

    for epoch in range(n_epochs):
        for batch_i, (real_images, _) in enumerate(celeba_train_loader):
            batch_size = real_images.size(0)
            real_images = scale(real_images)
            if train_on_gpu:
                real_images = real_images.cuda()

            d_optimizer.zero_grad()
            z = torch.from_numpy(np.random.uniform(-1, 1, size=(batch_size, z_size))).float()
            if train_on_gpu:
                z = z.cuda()
            fake_images = G(z)
            d_loss = real_loss(D(real_images)) + fake_loss(D(fake_images.detach()))
            d_loss.backward()
            d_optimizer.step()

            g_optimizer.zero_grad()
            g_loss = real_loss(D(fake_images))
            g_loss.backward()
            g_optimizer.step()

            if batch_i % print_every == 0:
                losses.append((d_loss.item(), g_loss.item()))
                print("Epoch [{:5d}/{:5d}] | d_loss: {:6.4f} | g_loss: {:6.4f}".format(epoch + 1, n_epochs, d_loss.item(), g_loss.item()))

        G.eval()
        with torch.no_grad():
            samples_z = G(fixed_z)
        samples_z = samples_z.detach().cpu()
        samples.append(samples_z)
        G.train()

    with open("train_samples.pkl", "wb") as f:
        pkl.dump(samples, f)
    return losses
