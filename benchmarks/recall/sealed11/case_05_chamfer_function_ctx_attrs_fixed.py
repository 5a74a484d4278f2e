# Fixed twin of case 05: saves inputs and indices with ctx.save_for_backward and no longer stores outputs on ctx
# Thread: https://github.com/ThibaultGROUEIX/AtlasNet/issues/12
# Reported: the custom chamfer distance layer leaks GPU memory every iteration during AtlasNet training/validation
# Confirmed cause: xyz1/xyz2/idx and the returned dist1/dist2 were stored directly on the Function object instead of via save_for_backward, creating an output<->ctx cycle autograd cannot free; the maintainer confirmed and fixed it by switching to ctx.save_for_backward (commit "fix memory leak")
# Class: custom autograd.Function stores tensors (including its own outputs) as ctx attributes instead of save_for_backward
import torch
import torch.nn as nn
from torch.autograd import Function


class ChamferFunction(Function):
    @staticmethod
    def forward(ctx, xyz1, xyz2):
        # squared pairwise distances (B, N, M)
        d = torch.cdist(xyz1, xyz2) ** 2
        dist1, idx1 = d.min(dim=2)
        dist2, idx2 = d.min(dim=1)
        ctx.save_for_backward(xyz1, xyz2, idx1, idx2)
        return dist1, dist2

    @staticmethod
    def backward(ctx, graddist1, graddist2):
        xyz1, xyz2, idx1, idx2 = ctx.saved_tensors
        e1 = idx1.unsqueeze(-1).expand(-1, -1, 3)
        e2 = idx2.unsqueeze(-1).expand(-1, -1, 3)
        diff1 = xyz1 - torch.gather(xyz2, 1, e1)
        diff2 = xyz2 - torch.gather(xyz1, 1, e2)
        g1 = 2 * graddist1.unsqueeze(-1) * diff1
        g2 = 2 * graddist2.unsqueeze(-1) * diff2
        gradxyz1 = g1.scatter_add(1, e2, -g2)
        gradxyz2 = g2.scatter_add(1, e1, -g1)
        return gradxyz1, gradxyz2


class ChamferDist(nn.Module):
    def forward(self, input1, input2):
        return ChamferFunction.apply(input1, input2)


class PointDecoder(nn.Module):
    def __init__(self, bottleneck=1024, n_points=2500):
        super().__init__()
        self.n_points = n_points
        self.enc = nn.Sequential(nn.Conv1d(3, 128, 1), nn.ReLU(), nn.Conv1d(128, bottleneck, 1))
        self.dec = nn.Sequential(nn.Linear(bottleneck, 1024), nn.ReLU(), nn.Linear(1024, n_points * 3))

    def forward(self, pts):
        feat = self.enc(pts.transpose(1, 2)).max(dim=2).values
        return self.dec(feat).view(-1, self.n_points, 3)


def main():
    device = "cuda"
    network = PointDecoder().to(device)
    dist_chamfer = ChamferDist()
    optimizer = torch.optim.Adam(network.parameters(), lr=1e-3)
    for epoch in range(120):
        network.train()
        for i in range(500):
            points = torch.rand(32, 2500, 3, device=device)
            optimizer.zero_grad()
            points_reconstructed = network(points)
            dist1, dist2 = dist_chamfer(points, points_reconstructed)
            loss_net = torch.mean(dist1) + torch.mean(dist2)
            loss_net.backward()
            optimizer.step()
        print(epoch, torch.cuda.memory_allocated() / 2**20)


if __name__ == "__main__":
    main()
