# Fixed twin of case 03: wrap the evaluation forward pass in torch.no_grad()
# Thread: https://github.com/facebookresearch/votenet/issues/30
# Reported: the periodic evaluation inside training takes about 2300 MiB of extra GPU memory (8.9 GB instead of about 6.6 GB at batch size 8)
# Confirmed cause: the reporter showed the evaluation forward passes build and keep autograd state that is never used; the author agreed ('very good suggestion') and updated train.py to run the evaluation under torch.no_grad()
# Class: evaluation forward pass with grad enabled inside the training script
import torch
import torch.nn as nn
import torch.nn.functional as F


class PointNetVotes(nn.Module):
    def __init__(self, num_class=18):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv1d(3, 128, 1), nn.ReLU(), nn.Conv1d(128, 256, 1), nn.ReLU())
        self.vote = nn.Conv1d(256, 3 + 256, 1)
        self.head = nn.Conv1d(256, num_class, 1)

    def forward(self, inputs):
        feats = self.backbone(inputs["point_clouds"].transpose(1, 2))
        votes = self.vote(feats)
        return {"vote_xyz": votes[:, :3], "sem_cls_scores": self.head(votes[:, 3:])}


def criterion(end_points):
    vote_loss = end_points["vote_xyz"].pow(2).mean()
    sem_loss = F.cross_entropy(end_points["sem_cls_scores"], end_points["sem_cls_label"])
    end_points["vote_loss"] = vote_loss
    end_points["sem_cls_loss"] = sem_loss
    end_points["loss"] = vote_loss + sem_loss
    return end_points["loss"], end_points


def train_one_epoch(net, optimizer, loader, device):
    net.train()
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        end_points = net({"point_clouds": batch["point_clouds"]})
        end_points.update(batch)
        loss, _ = criterion(end_points)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def evaluate_one_epoch(net, loader, device):
    stat_dict = {}
    net.eval()
    for batch_idx, batch in enumerate(loader):
        batch = {k: v.to(device) for k, v in batch.items()}
        inputs = {"point_clouds": batch["point_clouds"]}
        with torch.no_grad():
            end_points = net(inputs)
            end_points.update(batch)
            loss, end_points = criterion(end_points)
        for key in end_points:
            if "loss" in key:
                stat_dict[key] = stat_dict.get(key, 0.0) + end_points[key].item()
    return stat_dict["loss"] / float(batch_idx + 1)


def train(net, optimizer, train_loader, test_loader, device, max_epoch=180):
    for epoch in range(max_epoch):
        train_one_epoch(net, optimizer, train_loader, device)
        if epoch == 0 or epoch % 10 == 9:
            print(epoch, evaluate_one_epoch(net, test_loader, device))


if __name__ == "__main__":
    dev = torch.device("cuda")
    model = PointNetVotes().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    make = lambda: {"point_clouds": torch.randn(8, 20000, 3), "sem_cls_label": torch.randint(0, 18, (8, 20000))}
    train(model, opt, [make() for _ in range(4)], [make() for _ in range(4)], dev)
