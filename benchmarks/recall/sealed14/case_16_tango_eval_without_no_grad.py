# Recall case 16 (sealed14): eval.py renders and scores every view with autograd on, holding graphs the evaluation never backpropagates
# Thread: https://github.com/Gorilla-Lab-SCUT/tango/issues/6
# Reported: GPU memory cannot hold the evaluation run ('显存撑不住') unless torch.no_grad() is added to eval.py
# Confirmed cause: the reporter found that adding torch.no_grad() to eval.py fixes the memory blow-up (no maintainer reply: weaker)
# Class: evaluation script calling the model without torch.no_grad()
import torch
import torch.nn as nn


class NeuralStyleField(nn.Module):
    def __init__(self, width=256, depth=6):
        super().__init__()
        layers = [nn.Linear(3, width), nn.ReLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.ReLU()]
        self.mlp = nn.Sequential(*layers, nn.Linear(width, 3))

    def forward(self, xyz):
        return torch.sigmoid(self.mlp(xyz))


def render_view(model, vertices, elev, azim):
    rot = torch.tensor([[torch.cos(azim), 0, torch.sin(azim)], [0, 1, 0], [-torch.sin(azim), 0, torch.cos(azim)]], device=vertices.device)
    colors = model(vertices @ rot.T)
    return colors.view(1, -1, 3)


def evaluate(model, vertices, n_views=64):
    images = []
    for i in range(n_views):  # leak: ANY
        azim = torch.tensor(2 * 3.14159 * i / n_views)
        img = render_view(model, vertices, elev=torch.tensor(0.3), azim=azim)
        images.append(img)
    return torch.cat(images)


if __name__ == "__main__":
    dev = torch.device("cuda")
    model = NeuralStyleField().to(dev)
    model.eval()
    verts = torch.rand(200000, 3, device=dev)
    out = evaluate(model, verts)
    torch.save(out.cpu(), "renders.pt")
