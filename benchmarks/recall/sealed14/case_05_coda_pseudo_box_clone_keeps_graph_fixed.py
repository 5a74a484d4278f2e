# Fixed twin of case 05: store outputs['...'].detach().clone() instead of .clone()
# Thread: https://github.com/yangcaoai/CoDA_NeurIPS2023/issues/20
# Reported: GPU memory rises gradually during training until it runs out (also reported earlier in issue #15)
# Confirmed cause: outputs['box_corners_xyz'] / outputs['objectness_prob'] were cloned without detach, keeping the graph alive through the stored pseudo labels; reporter's fix adds .detach().clone(), merged by the maintainer as PR #21
# Class: tensors from the forward pass stored across iterations via .clone() (no detach) in a discovery memory
import torch
import torch.nn as nn


class Model3DETR(nn.Module):
    def __init__(self, dim=256, n_queries=128):
        super().__init__()
        self.n_queries = n_queries
        self.encoder = nn.Sequential(nn.Linear(3, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.box_head = nn.Linear(dim, 8 * 3)
        self.obj_head = nn.Linear(dim, 1)
        self.novel_bank = []  # pseudo boxes collected for novel-class discovery

    def forward(self, points):
        feats = self.encoder(points)[:, : self.n_queries]
        outputs = {
            "box_corners_xyz": self.box_head(feats).view(points.shape[0], -1, 8, 3),
            "objectness_prob": torch.sigmoid(self.obj_head(feats)).squeeze(-1),
        }
        self.discover_novel(outputs)
        return outputs

    def discover_novel(self, outputs):
        gt_center_ori = outputs["box_corners_xyz"].detach().clone()
        objectness_prob = outputs["objectness_prob"].detach().clone()
        keep = objectness_prob > 0.9
        self.novel_bank.append((gt_center_ori[keep], objectness_prob[keep]))


def train_one_epoch(model, optimizer, loader, device):
    model.train()
    for points, target in loader:
        points, target = points.to(device), target.to(device)
        outputs = model(points)
        loss = nn.functional.smooth_l1_loss(outputs["box_corners_xyz"], target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    dev = torch.device("cuda")
    m = Model3DETR().to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=4e-4)
    data = [(torch.randn(8, 2048, 3), torch.randn(8, 128, 8, 3)) for _ in range(100)]
    for _ in range(10):
        train_one_epoch(m, opt, data, dev)
