# Recall case 01 (sealed2): a label model's fit loop sums the backpropagated loss into running_loss
# Thread: https://github.com/BatsResearch/labelmodels/issues/4
# Reported: GPU memory grows every step of LabelModel training until the process dies on a large set.
# Confirmed cause: `running_loss` is the sum of non-detached loss tensors, so every batch's graph is
#   held for the whole epoch; the reporter proposed `running_loss += loss.item()` and the maintainer
#   confirmed ("Ah, good catch") and merged it.
# Class: a loss tensor summed into an epoch accumulator with `+=` inside a model's own fit method
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class LearningConfig:
    def __init__(self, epochs=5, batch_size=64, step_size=0.01, random_seed=0):
        self.epochs = epochs
        self.batch_size = batch_size
        self.step_size = step_size
        self.random_seed = random_seed


class NaiveBayesLabelModel(nn.Module):
    def __init__(self, num_classes, num_lfs, acc_prior=0.025, device="cuda"):
        super().__init__()
        self.num_classes = num_classes
        self.acc_prior = acc_prior
        self.accuracy = nn.Parameter(torch.full((num_lfs,), 0.7))
        self.propensity = nn.Parameter(torch.zeros(num_lfs))
        self.class_balance = nn.Parameter(torch.zeros(num_classes))
        self.device = device
        self.to(device)

    def forward(self, votes):
        one_hot = nn.functional.one_hot(votes, self.num_classes + 1)[..., 1:].float()
        log_acc = nn.functional.logsigmoid(self.accuracy)
        log_prop = nn.functional.logsigmoid(self.propensity)
        per_class = one_hot * (log_acc + log_prop).unsqueeze(-1)
        joint = per_class.sum(dim=1) + nn.functional.log_softmax(self.class_balance, dim=0)
        return torch.logsumexp(joint, dim=1)

    def _regularization(self):
        return self.acc_prior * torch.norm(self.accuracy - 0.7)

    def estimate(self, votes, config=None):
        config = config or LearningConfig()
        torch.manual_seed(config.random_seed)
        loader = DataLoader(TensorDataset(torch.as_tensor(votes, dtype=torch.long)),
                            batch_size=config.batch_size, shuffle=True)
        optimizer = torch.optim.SGD(self.parameters(), lr=config.step_size)
        self.train()
        for epoch in range(config.epochs):
            running_loss = 0.0
            for (batch,) in loader:
                batch = batch.to(self.device)
                optimizer.zero_grad()
                loss = -1 * torch.mean(self(batch)) + self._regularization()
                loss.backward()
                optimizer.step()
                running_loss += loss  # leak: ANY
            epoch_loss = running_loss / len(loader)
            print(f"Epoch {epoch + 1}: loss {float(epoch_loss):.4f}")
