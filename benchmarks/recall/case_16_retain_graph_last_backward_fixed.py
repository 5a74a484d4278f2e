# Fixed twin of case 16: the last backward of the step frees the graph.
# Thread: https://github.com/GBLin5566/toward-controlled-generation-of-text-pytorch/issues/9
# Reported: setting retain_graph=True as suggested, memory blows up even on GPUs.
# Confirmed cause: the reporter: retain_graph=True is only needed before the last backward of
#   the step; the last call must free the graph, "otherwise will consume a lot of memory".
# Class: backward(retain_graph=True) every iteration on a graph never backpropagated again
import torch
import torch.nn.functional as F


def train_step(encoder, generator, discriminator, batch, opt_vae, opt_gen, kl_weight):
    x, lengths = batch
    mu, logvar = encoder(x, lengths)
    z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
    code = discriminator.sample_code(x.size(0))
    logits = generator(x, z, code)
    recon = F.cross_entropy(logits.view(-1, logits.size(-1)), x.view(-1), ignore_index=0)
    kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
    loss_vae = recon + kl_weight * kl
    opt_vae.zero_grad()
    loss_vae.backward(retain_graph=True)
    opt_vae.step()
    soft_sentence = F.gumbel_softmax(logits, tau=0.5)
    loss_attr = F.cross_entropy(discriminator(soft_sentence), code)
    loss_gen = recon + kl_weight * kl + 0.1 * loss_attr
    opt_gen.zero_grad()
    loss_gen.backward()
    opt_gen.step()
    return loss_vae.item(), loss_gen.item()


def train(encoder, generator, discriminator, loader, opt_vae, opt_gen, epochs):
    step = 0
    for epoch in range(epochs):
        for batch in loader:
            kl_weight = min(1.0, step / 10000)
            train_step(encoder, generator, discriminator, batch, opt_vae, opt_gen, kl_weight)
            step += 1
