# Fixed twin of case 02: the adversarial loss is appended as adv_loss.item()
# Thread: https://github.com/rishikksh20/VocGAN/pull/24
# Reported: severe memory accumulation while training VocGAN with utils/train.py
# Confirmed cause: avg_adv_loss.append(adv_loss) stored the graph-carrying adversarial loss every step; the merged PR appends adv_loss.item() and the accumulation is gone
# Class: loss tensor appended to a logging list next to values that were already .item()-ed
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


class Generator(nn.Module):
    def __init__(self, n_mel=80, hop=256):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(n_mel, 256, 7, padding=3), nn.LeakyReLU(0.2),
            nn.ConvTranspose1d(256, 64, hop, stride=hop), nn.LeakyReLU(0.2),
            nn.Conv1d(64, 1, 7, padding=3), nn.Tanh(),
        )

    def forward(self, mel):
        return self.net(mel)


class MultiScaleDiscriminator(nn.Module):
    def __init__(self, n_scales=3):
        super().__init__()
        self.blocks = nn.ModuleList([
            nn.Sequential(nn.Conv1d(1, 16, 15, padding=7), nn.LeakyReLU(0.2), nn.Conv1d(16, 1, 3, padding=1))
            for _ in range(n_scales)
        ])

    def forward(self, audio):
        scores = []
        for block in self.blocks:
            scores.append(block(audio))
            audio = F.avg_pool1d(audio, 4, stride=2, padding=1)
        return scores


def train(trainloader, hp, logger, device="cuda"):
    model_g = Generator().to(device)
    model_d = MultiScaleDiscriminator().to(device)
    optim_g = torch.optim.Adam(model_g.parameters(), lr=hp["lr"], betas=(0.5, 0.9))
    optim_d = torch.optim.Adam(model_d.parameters(), lr=hp["lr"], betas=(0.5, 0.9))

    step = 0
    for epoch in range(hp["epochs"]):
        avg_g_loss, avg_d_loss, avg_adv_loss = [], [], []
        for mel, audio in trainloader:
            mel, audio = mel.to(device), audio.to(device)

            # generator
            optim_g.zero_grad()
            fake_audio = model_g(mel)[..., : audio.size(-1)]
            stft_loss = F.l1_loss(fake_audio, audio)
            disc_fake = model_d(fake_audio)
            adv_loss = 0.0
            for score_fake in disc_fake:
                adv_loss += torch.mean(torch.sum(torch.pow(score_fake - 1.0, 2), dim=[1, 2]))
            adv_loss = adv_loss / len(disc_fake)
            loss_g = hp["lambda_adv"] * adv_loss + stft_loss
            loss_g.backward()
            optim_g.step()

            # discriminator
            optim_d.zero_grad()
            disc_fake = model_d(fake_audio.detach())
            disc_real = model_d(audio)
            loss_d = 0.0
            for score_fake, score_real in zip(disc_fake, disc_real):
                loss_d += torch.mean(torch.sum(torch.pow(score_real - 1.0, 2), dim=[1, 2]))
                loss_d += torch.mean(torch.sum(torch.pow(score_fake, 2), dim=[1, 2]))
            loss_d = loss_d / len(disc_fake)
            loss_d.backward()
            optim_d.step()

            step += 1
            loss_g = loss_g.item()
            loss_d_avg = loss_d.item()
            avg_g_loss.append(loss_g)
            avg_d_loss.append(loss_d_avg)
            avg_adv_loss.append(adv_loss.item())
            if any([loss_g > 1e8, math.isnan(loss_g), loss_d_avg > 1e8, math.isnan(loss_d_avg)]):
                logger.error("loss_g %.01f loss_d_avg %.01f at step %d!" % (loss_g, loss_d_avg, step))
                raise Exception("Loss exploded")

        logger.info("epoch %d g %.4f d %.4f adv %.4f" % (
            epoch, sum(avg_g_loss) / len(avg_g_loss), sum(avg_d_loss) / len(avg_d_loss),
            float(sum(avg_adv_loss) / len(avg_adv_loss))))
