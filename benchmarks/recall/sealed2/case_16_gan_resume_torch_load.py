# Recall case 16 (sealed2): StyleGAN2 training resumes from a checkpoint loaded straight onto the GPU
# Thread: https://github.com/rosinality/stylegan2-pytorch/pull/31
# Reported: resuming training from a checkpoint uses too much GPU memory (the PR's workaround empties
#   the CUDA cache after loading).
# Confirmed cause: `torch.load(args.ckpt)` restores every tensor of the checkpoint (generator,
#   discriminator, EMA generator, both optimizer states) onto the GPU it was saved from, next to the
#   models already there; the maintainer's fix is to load on the CPU:
#   `torch.load(args.ckpt, map_location=lambda storage, loc: storage)`.
# Class: torch.load without map_location of a training checkpoint while resuming
import argparse

import torch
from torch import optim

from model import Discriminator, Generator


def setup(args, device="cuda"):
    generator = Generator(args.size, args.latent, args.n_mlp, channel_multiplier=args.channel_multiplier).to(device)
    discriminator = Discriminator(args.size, channel_multiplier=args.channel_multiplier).to(device)
    g_ema = Generator(args.size, args.latent, args.n_mlp, channel_multiplier=args.channel_multiplier).to(device)
    g_ema.eval()
    g_reg_ratio = args.g_reg_every / (args.g_reg_every + 1)
    d_reg_ratio = args.d_reg_every / (args.d_reg_every + 1)
    g_optim = optim.Adam(generator.parameters(), lr=args.lr * g_reg_ratio,
                         betas=(0 ** g_reg_ratio, 0.99 ** g_reg_ratio))
    d_optim = optim.Adam(discriminator.parameters(), lr=args.lr * d_reg_ratio,
                         betas=(0 ** d_reg_ratio, 0.99 ** d_reg_ratio))

    if args.ckpt is not None:
        print("load model:", args.ckpt)
        ckpt = torch.load(args.ckpt)  # leak: ANY
        try:
            args.start_iter = int(args.ckpt.split("/")[-1].split(".")[0])
        except ValueError:
            pass
        generator.load_state_dict(ckpt["g"])
        discriminator.load_state_dict(ckpt["d"])
        g_ema.load_state_dict(ckpt["g_ema"])
        g_optim.load_state_dict(ckpt["g_optim"])
        d_optim.load_state_dict(ckpt["d_optim"])
    return generator, discriminator, g_ema, g_optim, d_optim


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt", type=str, default=None)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--latent", type=int, default=512)
    parser.add_argument("--n_mlp", type=int, default=8)
    parser.add_argument("--channel_multiplier", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.002)
    parser.add_argument("--g_reg_every", type=int, default=4)
    parser.add_argument("--d_reg_every", type=int, default=16)
    args = parser.parse_args()
    args.start_iter = 0
    setup(args)
