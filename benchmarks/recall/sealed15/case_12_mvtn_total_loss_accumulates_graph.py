# Recall case 12 (sealed15): MVTN training loop sums the loss tensor into total_loss for logging
# Thread: https://github.com/ajhamdi/MVTN/issues/2
# Reported: the process is 'killed' in the second epoch of training; memory is fully used
# Confirmed cause: the reporter found it in the loss bookkeeping: changing 'total_loss += loss' to 'total_loss += loss.item()' removed the leak; the author updated the code as recommended
# Class: `total_loss += loss` (tensor with graph) across an epoch
import torch
import torch.nn as nn
import torch.nn.functional as F


class MVTN(nn.Module):
    def __init__(self, nb_views=12):
        super().__init__()
        self.nb_views = nb_views
        self.point_encoder = nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 2 * nb_views))

    def forward(self, points):
        return torch.tanh(self.point_encoder(points).max(1).values) * 180


class MVNetwork(nn.Module):
    def __init__(self, num_classes=40, nb_views=12):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(1, 32, 5, 2), nn.ReLU(), nn.Conv2d(32, 64, 5, 2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(64, num_classes)
        self.nb_views = nb_views

    def forward(self, views):
        b = views.shape[0]
        feats = self.backbone(views.flatten(0, 1)).view(b, self.nb_views, -1).max(1).values
        return self.fc(feats)


def render(points, azim_elev, nb_views=12, size=224):
    b = points.shape[0]
    base = points[:, :, :2].mean(1, keepdim=True).unsqueeze(-1)
    return (torch.sin(azim_elev.view(b, -1, 1, 1)[:, :nb_views] / 57.3) + base).expand(b, nb_views, size, size).unsqueeze(2)


def train(mvtn, mvnetwork, optimizer, train_loader, device, epochs=100):
    for epoch in range(epochs):
        total_loss = 0.0
        n = 0
        for points, targets in train_loader:
            points, targets = points.to(device), targets.to(device)
            azim_elev = mvtn(points)
            rendered_images = render(points, azim_elev)
            outputs = mvnetwork(rendered_images)
            loss = F.cross_entropy(outputs, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total_loss += loss  # leak: ANY
            n += 1
        print(epoch, float(total_loss) / n)


if __name__ == "__main__":
    dev = torch.device("cuda")
    mvtn, net = MVTN().to(dev), MVNetwork().to(dev)
    opt = torch.optim.AdamW(list(mvtn.parameters()) + list(net.parameters()), lr=1e-3)
    loader = [(torch.randn(32, 2048, 3), torch.randint(0, 40, (32,))) for _ in range(300)]
    train(mvtn, net, opt, loader, dev)
