# Fixed twin of case 12: validate() is decorated with @torch.no_grad()
# Thread: https://github.com/mapbox/robosat/pull/109
# Reported: possible CUDA out-of-memory errors during validation after training epochs
# Confirmed cause: validation built autograd graphs it never used; merged PR (maintainer: "Ouch, good catch!") runs validation under no_grad
# Class: evaluation helper called with grad on
import torch
import torch.nn as nn
import torch.nn.functional as F


class UNet(nn.Module):
    def __init__(self, num_classes=2):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, padding=1), nn.ReLU())
        self.dec = nn.Conv2d(128, num_classes, 1)

    def forward(self, x):
        return self.dec(self.enc(x))


def train(loader, num_classes, device, net, optimizer, criterion):
    net.train()
    running = 0.0
    for images, masks in loader:
        images, masks = images.to(device), masks.to(device)
        optimizer.zero_grad()
        loss = criterion(net(images), masks)
        loss.backward()
        optimizer.step()
        running += loss.item()
    return running / len(loader)


@torch.no_grad()
def validate(loader, num_classes, device, net, criterion):
    net.eval()
    running = 0.0
    correct = total = 0
    for images, masks in loader:
        images, masks = images.to(device), masks.to(device)
        outputs = net(images)
        loss = criterion(outputs, masks)
        running += loss.item()
        correct += (outputs.argmax(1) == masks).sum().item()
        total += masks.numel()
    return running / len(loader), correct / total


if __name__ == "__main__":
    dev = torch.device("cuda")
    net = UNet().to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    data = [(torch.randn(8, 3, 512, 512), torch.randint(0, 2, (8, 512, 512))) for _ in range(50)]
    for epoch in range(10):
        train(data, 2, dev, net, opt, F.cross_entropy)
        print(validate(data[:20], 2, dev, net, F.cross_entropy))
