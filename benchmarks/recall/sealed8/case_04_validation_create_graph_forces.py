# Recall case 04 (sealed8): force derivative is taken with create_graph=True even in validation, keeping a double-backward graph
# Thread: https://github.com/atomistic-machine-learning/schnetpack/issues/250
# Reported: validation batches use much more GPU memory than training batches (max train batch 55 vs validation 30)
# Confirmed cause: the output module always called autograd.grad(..., create_graph=True) for forces, also in eval;
#   maintainer fixed it in the merged PR #261 ("evaluation mode without graph creation",
#   https://github.com/atomistic-machine-learning/schnetpack/pull/261): create_graph = self.create_graph if self.training else False
# Class: evaluation path builds a graph it never backpropagates (autograd.grad create_graph=True outside training)
import torch
from torch import nn
from torch.autograd import grad


class Atomwise(nn.Module):
    """Predicts an energy per structure and, optionally, forces as its negative derivative."""

    def __init__(self, n_in: int = 128, derivative: str = "forces", create_graph: bool = True):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(n_in, n_in // 2), nn.SiLU(), nn.Linear(n_in // 2, 1))
        self.derivative = derivative
        self.create_graph = create_graph

    def forward(self, inputs: dict, representation: torch.Tensor) -> dict:
        yi = self.mlp(representation)
        y = yi.sum(dim=1)
        result = {"energy": y}
        if self.derivative is not None:
            dy = grad(  # leak: ANY
                y,
                inputs["_positions"],
                grad_outputs=torch.ones_like(y),
                create_graph=self.create_graph,  # leak: ANY
            )[0]
            result[self.derivative] = -dy
        return result


class SchNetLike(nn.Module):
    def __init__(self, n_atom_basis: int = 128):
        super().__init__()
        self.embedding = nn.Embedding(100, n_atom_basis)
        self.filter = nn.Sequential(nn.Linear(3, n_atom_basis), nn.SiLU(), nn.Linear(n_atom_basis, n_atom_basis))
        self.output_module = Atomwise(n_atom_basis)

    def forward(self, inputs: dict) -> dict:
        inputs["_positions"].requires_grad_()
        rep = self.embedding(inputs["_atomic_numbers"]) * self.filter(inputs["_positions"])
        return self.output_module(inputs, rep)


def validate(model: nn.Module, val_loader, device: str) -> float:
    model.eval()
    total, count = 0.0, 0
    for batch in val_loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        result = model(batch)
        err = ((result["forces"] - batch["forces"]) ** 2).mean()
        total += err.item()
        count += 1
    model.train()
    return total / count


if __name__ == "__main__":
    device = "cuda"
    model = SchNetLike().to(device)
    val_loader = [
        {
            "_atomic_numbers": torch.randint(1, 10, (30, 64)),
            "_positions": torch.randn(30, 64, 3),
            "forces": torch.randn(30, 64, 3),
        }
        for _ in range(50)
    ]
    print(validate(model, val_loader, device))
