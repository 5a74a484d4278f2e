# Recall case 01 (sealed8): final evaluation predicts every training trajectory with autograd on and keeps all predictions
# Thread: https://github.com/DAIRLab/dair_pll/pull/20
# Reported: final evaluation allocated huge amounts of memory; traced to SupervisedLearningExperiment.trajectory_predict
# Confirmed cause: trajectory_predict built computation graphs for the whole training set and kept them; the merged PR
#   (reviewed "LGTM") detaches and deletes the predicted tensors, which "completely fixes the issue"
# Class: evaluation helper rolls out a model with grad enabled and stores every predicted trajectory (graph attached)
import torch
from torch import nn, Tensor
from typing import List, Tuple


class LearnedDynamics(nn.Module):
    """Small learned contact dynamics model: x_{t+1} = x_t + f(x_t)."""

    def __init__(self, state_dim: int = 14, hidden: int = 256):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(state_dim, hidden), nn.Tanh(),
            nn.Linear(hidden, hidden), nn.Tanh(),
            nn.Linear(hidden, state_dim),
        )

    def step(self, x: Tensor) -> Tensor:
        return x + self.net(x)

    def simulate(self, x_0: Tensor, steps: int) -> Tensor:
        states = [x_0]
        for _ in range(steps):
            states.append(self.step(states[-1]))
        return torch.stack(states, dim=0)


class SupervisedLearningExperiment:
    def __init__(self, system: LearnedDynamics, device: str = "cuda"):
        self.system = system.to(device)
        self.device = device

    def trajectory_predict(self, x_trajectories: List[Tensor]) -> Tuple[List[Tensor], List[Tensor]]:
        """Roll out the learned system from each trajectory's initial state."""
        predictions, targets = [], []
        for traj in x_trajectories:
            traj = traj.to(self.device)
            x_pred = self.system.simulate(traj[0], traj.shape[0] - 1)
            predictions.append(x_pred)  # leak: ANY
            targets.append(traj)
        return predictions, targets

    def evaluation(self, trajectories: List[Tensor]) -> float:
        predictions, targets = self.trajectory_predict(trajectories)
        errors = [((p - t) ** 2).mean().item() for p, t in zip(predictions, targets)]
        return sum(errors) / len(errors)

    def final_evaluation(self, train_set: List[Tensor], valid_set: List[Tensor]) -> dict:
        return {
            "train_trajectory_mse": self.evaluation(train_set),
            "valid_trajectory_mse": self.evaluation(valid_set),
        }


if __name__ == "__main__":
    torch.manual_seed(0)
    train_set = [torch.randn(400, 14) for _ in range(2000)]
    valid_set = [torch.randn(400, 14) for _ in range(200)]
    experiment = SupervisedLearningExperiment(LearnedDynamics())
    # ... training happens here ...
    print(experiment.final_evaluation(train_set, valid_set))
