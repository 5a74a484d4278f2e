# Fixed twin of case 18: SRGAN validation loop runs the generator with autograd on after volatile=True was dropped
# Thread: https://github.com/leftthomas/SRGAN/issues/43
# Reported: first training epoch fine, then GPU memory explodes part-way through validation (19% into the loop)
# Confirmed cause: the port to PyTorch >= 0.4 left the validation forward outside torch.no_grad(), so the mse/ssim
#   accumulators and the kept images hold whole graphs; a second user confirmed "fixed it by adding
#   with torch.no_grad(): to the entire validation for loop"; the maintainer pointed at undetached tensors
# Class: evaluation helper running the model with grad enabled while accumulating results
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self, scale=4):
        super().__init__()
        self.head = nn.Sequential(nn.Conv2d(3, 64, 9, padding=4), nn.PReLU())
        self.body = nn.Sequential(*[nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.PReLU())
                                    for _ in range(16)])
        self.up = nn.Sequential(nn.Conv2d(64, 64 * scale * scale, 3, padding=1), nn.PixelShuffle(scale), nn.PReLU())
        self.tail = nn.Conv2d(64, 3, 9, padding=4)

    def forward(self, x):
        h = self.head(x)
        return (torch.tanh(self.tail(self.up(h + self.body(h)))) + 1) / 2


def ssim(img1, img2):
    mu1, mu2 = F.avg_pool2d(img1, 11, 1, 5), F.avg_pool2d(img2, 11, 1, 5)
    s1 = F.avg_pool2d(img1 * img1, 11, 1, 5) - mu1 ** 2
    s2 = F.avg_pool2d(img2 * img2, 11, 1, 5) - mu2 ** 2
    s12 = F.avg_pool2d(img1 * img2, 11, 1, 5) - mu1 * mu2
    c1, c2 = 0.01 ** 2, 0.03 ** 2
    return (((2 * mu1 * mu2 + c1) * (2 * s12 + c2)) / ((mu1 ** 2 + mu2 ** 2 + c1) * (s1 + s2 + c2))).mean()


def validate(netG, val_loader, device):
    netG.eval()
    valing_results = {"mse": 0, "ssims": 0, "psnr": 0, "ssim": 0, "batch_sizes": 0}
    val_images = []
    with torch.no_grad():
        for val_lr, val_hr_restore, val_hr in val_loader:
            batch_size = val_lr.size(0)
            valing_results["batch_sizes"] += batch_size
            lr, hr = val_lr.to(device), val_hr.to(device)
            sr = netG(lr)
            batch_mse = ((sr - hr) ** 2).data.mean()
            valing_results["mse"] += batch_mse * batch_size
            batch_ssim = ssim(sr, hr)
            valing_results["ssims"] += batch_ssim * batch_size
            valing_results["psnr"] = 10 * math.log10(1 / (valing_results["mse"] / valing_results["batch_sizes"]))
            valing_results["ssim"] = valing_results["ssims"] / valing_results["batch_sizes"]
            val_images.extend([val_hr_restore.squeeze(0), hr.squeeze(0).cpu(), sr.squeeze(0).cpu()])
    return valing_results, val_images


def val_loader(n=5000):
    for _ in range(n):
        hr = torch.rand(1, 3, 384, 384)
        lr = F.interpolate(hr, scale_factor=0.25, mode="bicubic", align_corners=False).clamp(0, 1)
        yield lr, F.interpolate(lr, scale_factor=4, mode="bicubic", align_corners=False), hr


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    netG = Generator().to(device)
    results, images = validate(netG, val_loader(), device)
    print(results["psnr"], float(results["ssim"]))
