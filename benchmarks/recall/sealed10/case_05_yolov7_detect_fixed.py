# Fixed twin of case 05: the detector forward runs inside torch.no_grad()
# Thread: https://github.com/WongKinYiu/yolov7/pull/900
# Reported: GPU memory leak/growth while running detect.py on many images or a video stream
# Confirmed cause: inference in detect() was not wrapped in torch.no_grad(), so autograd state is built for every frame; merged PR "Fix a GPU memory leak in detect" wraps it ("no need to calculate gradients in inference")
# Class: inference/predict loop without no_grad
import argparse
import time

import torch
import torch.nn as nn


class TinyYOLO(nn.Module):
    def __init__(self, nc=80):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 32, 3, 2, 1), nn.SiLU(),
            nn.Conv2d(32, 64, 3, 2, 1), nn.SiLU(),
            nn.Conv2d(64, 128, 3, 2, 1), nn.SiLU(),
        )
        self.head = nn.Conv2d(128, 3 * (5 + nc), 1)

    def forward(self, x, augment=False):
        p = self.head(self.backbone(x))
        b, _, h, w = p.shape
        return (p.view(b, 3 * h * w, -1).sigmoid(),)


def non_max_suppression(pred, conf_thres=0.25):
    out = []
    for x in pred:
        x = x[x[:, 4] > conf_thres]
        out.append(x[:300])
    return out


class LoadImages:
    def __init__(self, n=5000, img_size=640):
        self.n, self.img_size = n, img_size

    def __iter__(self):
        for i in range(self.n):
            yield f"frame_{i}.jpg", torch.rand(3, self.img_size, self.img_size)


def detect(opt):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TinyYOLO().to(device).eval()
    dataset = LoadImages(img_size=opt.img_size)
    t0 = time.time()
    for path, img in dataset:
        img = img.to(device).unsqueeze(0)
        with torch.no_grad():
            pred = model(img, augment=opt.augment)[0]
        pred = non_max_suppression(pred, opt.conf_thres)
        for det in pred:
            if len(det):
                print(path, f"{len(det)} objects")
    print(f"Done. ({time.time() - t0:.3f}s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--img-size", type=int, default=640)
    parser.add_argument("--conf-thres", type=float, default=0.25)
    parser.add_argument("--augment", action="store_true")
    opt = parser.parse_args()
    detect(opt)
