# Recall case 09 (sealed7): the validation epoch runs the feature network with autograd enabled
# Thread: https://github.com/chrischoy/FCGF/issues/15
# Reported: validation uses more memory (and time) than needed; suggestion to wrap it in torch.no_grad()
# Confirmed cause: _valid_epoch computes features for both point clouds without torch.no_grad(), so each batch builds a full backward graph; the maintainer agreed and said he would update the evaluation code
# Class: validation/eval helper calling the model with grad on
import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


class PointFeatureNet(nn.Module):
    def __init__(self, in_dim=1, dim=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim + 3, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, dim))

    def forward(self, xyz, feats):
        return nn.functional.normalize(self.net(torch.cat([xyz, feats], -1)), dim=-1)


class ContrastiveLossTrainer:
    def __init__(self, model, val_loader, hit_ratio_thresh=0.1):
        self.model = model.cuda()
        self.val_data_loader = val_loader
        self.hit_ratio_thresh = hit_ratio_thresh

    def evaluate_hit_ratio(self, xyz0, xyz1, F0, F1, trans):
        nn_idx = torch.cdist(F0, F1).argmin(1)
        xyz0_t = xyz0 @ trans[:3, :3].t() + trans[:3, 3]
        dist = (xyz0_t - xyz1[nn_idx]).norm(dim=1)
        return (dist < self.hit_ratio_thresh).float().mean().item()

    def _valid_epoch(self):
        self.model.eval()
        hit_ratio_meter = AverageMeter()
        for input_dict in self.val_data_loader:
            xyz0, xyz1 = input_dict["pcd0"].cuda(), input_dict["pcd1"].cuda()
            F0 = self.model(xyz0, input_dict["sinput0_F"].cuda())  # leak: ANY
            F1 = self.model(xyz1, input_dict["sinput1_F"].cuda())  # leak: ANY
            hit_ratio_meter.update(self.evaluate_hit_ratio(xyz0, xyz1, F0, F1, input_dict["T_gt"].cuda()))
        return {"hit_ratio": hit_ratio_meter.avg}
