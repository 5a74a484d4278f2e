# Thread: https://github.com/facebookresearch/fairchem/issues/2099
# Reported: computing the analytical Hessian at inference with the "memory-efficient" row loop
#   (hessian_vmap=False) uses essentially the same peak memory as the vmap path and runs out of
#   memory at the same system size, while being ~10x slower.
# Confirmed cause: MLP_EFS_Head.forward passes create_graph (= self.training or hessian) into the
#   Hessian's own backward, so at inference every one of the 3N row gradients is taken with
#   create_graph=True and retains its graph (only needed for a third derivative nothing consumes).
#   The merged PR #2100 gates the Hessian backward on self.training instead ("training=self.training
#   # was: training=create_graph"); forces still use create_graph. Loop path ~17x lighter.
# Class: autograd.grad(create_graph=True) in a loop where no higher derivative is taken
import torch
import torch.nn as nn


def compute_hessian_loop(forces_flat, pos, create_graph):
    n_forces = forces_flat.numel()
    hessian = torch.zeros((n_forces, n_forces), device=forces_flat.device, dtype=forces_flat.dtype)
    for i in range(n_forces):
        (row,) = torch.autograd.grad(
            -forces_flat[i],
            pos,
            retain_graph=i < n_forces - 1,
            create_graph=create_graph,
        )
        hessian[:, i] = row.reshape(-1)
    return hessian


def compute_hessian(forces, pos, vmap=True, training=False):
    forces_flat = forces.reshape(-1)
    if vmap:
        eye = torch.eye(forces_flat.numel(), device=forces_flat.device, dtype=forces_flat.dtype)

        def one_row(v):
            return torch.autograd.grad(-forces_flat, pos, grad_outputs=v, retain_graph=True, create_graph=training)[0]

        hessian = torch.vmap(one_row)(eye).reshape(forces_flat.numel(), -1)
    else:
        hessian = compute_hessian_loop(forces_flat, pos, create_graph=training)
    return hessian.unsqueeze(0)


class MLP_EFS_Head(nn.Module):
    def __init__(self, sphere_channels, hidden_channels, regress_hessian=False, hessian_vmap=True):
        super().__init__()
        self.regress_hessian = regress_hessian
        self.hessian_vmap = hessian_vmap
        self.energy_block = nn.Sequential(
            nn.Linear(sphere_channels, hidden_channels), nn.SiLU(),
            nn.Linear(hidden_channels, hidden_channels), nn.SiLU(),
            nn.Linear(hidden_channels, 1),
        )

    def forward(self, data, emb):
        create_graph = self.training or self.regress_hessian
        scalar_embedding = emb["node_embedding"][:, 0, :]
        node_energy = self.energy_block(scalar_embedding).view(-1)
        energy = torch.zeros(data["num_systems"], device=node_energy.device, dtype=node_energy.dtype)
        energy = energy.index_add(0, data["batch"], node_energy)

        (grad,) = torch.autograd.grad(energy.sum(), data["pos"], create_graph=create_graph)
        forces = -grad
        outputs = {"energy": energy, "forces": forces}
        if self.regress_hessian:
            outputs["hessian"] = compute_hessian(
                forces,
                data["pos"],
                vmap=self.hessian_vmap,
                training=create_graph,  # leak: ANY
            )
        return outputs


def predict_hessian(backbone, head, data):
    backbone.eval()
    head.eval()
    data["pos"].requires_grad_(True)
    with torch.enable_grad():
        emb = backbone(data)
        outputs = head(data, emb)
    return outputs["hessian"].detach().cpu()
