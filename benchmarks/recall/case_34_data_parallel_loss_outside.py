# Recall case 34: nn.DataParallel model, loss computed on the gathered outputs
# Thread: https://github.com/facebookresearch/DeepSDF/pull/20
# Reported: imbalanced GPU memory: training does not fit an 11 GB GTX 1080 Ti without cutting
#   the batch size.
# Confirmed cause: with DataParallel the outputs are gathered on GPU 0 and the loss (and its
#   backward inputs) live there; the PR computes the loss "in the DataParallel model during
#   training", i.e. inside the replicated forward, which balances the memory (the PR author's
#   measurement; the PR is not merged).
# Class: DataParallel with the loss on the first device
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self, latent_size, dims=(512,) * 8):
        super().__init__()
        layers, in_dim = [], latent_size + 3
        for d in dims:
            layers += [nn.Linear(in_dim, d), nn.ReLU()]
            in_dim = d
        self.net = nn.Sequential(*layers, nn.Linear(in_dim, 1), nn.Tanh())

    def forward(self, latent_and_xyz):
        return self.net(latent_and_xyz)


def train(specs, sdf_loader, lat_vecs, epochs, clamp_dist=0.1):
    decoder = Decoder(specs["CodeLength"]).cuda()
    decoder = torch.nn.DataParallel(decoder)  # leak: ML206
    loss_l1 = torch.nn.L1Loss(reduction="sum")
    optimizer = torch.optim.Adam([{"params": decoder.parameters(), "lr": 5e-4},
                                  {"params": lat_vecs.parameters(), "lr": 1e-3}])
    for epoch in range(epochs):
        decoder.train()
        for sdf_data, indices in sdf_loader:
            sdf_data = sdf_data.reshape(-1, 4)
            num_sdf_samples = sdf_data.shape[0]
            xyz = sdf_data[:, 0:3]
            sdf_gt = torch.clamp(sdf_data[:, 3].unsqueeze(1), -clamp_dist, clamp_dist)
            batch_vecs = lat_vecs(indices.unsqueeze(-1).repeat(1, sdf_data.shape[0] // indices.shape[0]).view(-1).cuda())
            optimizer.zero_grad()
            pred_sdf = torch.clamp(decoder(torch.cat([batch_vecs, xyz.cuda()], dim=1)), -clamp_dist, clamp_dist)
            loss = loss_l1(pred_sdf, sdf_gt.cuda()) / num_sdf_samples  # leak: ML206
            loss.backward()
            optimizer.step()
