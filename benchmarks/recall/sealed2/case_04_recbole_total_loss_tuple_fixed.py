# Fixed twin of case 04: the losses are turned into floats with .item() before they are summed (the merged fix).
# Thread: https://github.com/RUCAIBox/RecBole/pull/307
# Reported: training runs out of memory over an epoch in the Trainer ("storing loss in each batch").
# Confirmed cause: the merged fix: `_train_epoch` stored each batch's loss tensors in `total_loss`
#   (a running sum, or an element-wise tuple sum for multi-part losses), keeping every batch's graph
#   alive for the epoch; the PR converts them with `.item()` before summing.
# Class: a running total, scalar or tuple built with map/zip, of graph-carrying losses
import torch
from tqdm import tqdm


class Trainer:
    def __init__(self, config, model):
        self.model = model
        self.device = config["device"]
        self.clip_grad_norm = config.get("clip_grad_norm")
        self.optimizer = torch.optim.Adam(model.parameters(), lr=config["learning_rate"])

    def _train_epoch(self, train_data, epoch_idx, loss_func=None, show_progress=False):
        self.model.train()
        loss_func = loss_func or self.model.calculate_loss
        total_loss = None
        iter_data = tqdm(train_data, desc=f"Train {epoch_idx:>5}") if show_progress else train_data
        for batch_idx, interaction in enumerate(iter_data):
            interaction = interaction.to(self.device)
            self.optimizer.zero_grad()
            losses = loss_func(interaction)
            if isinstance(losses, tuple):
                loss = sum(losses)
                loss_tuple = tuple(per_loss.item() for per_loss in losses)
                total_loss = loss_tuple if total_loss is None else tuple(map(sum, zip(total_loss, loss_tuple)))
            else:
                loss = losses
                total_loss = losses.item() if total_loss is None else total_loss + losses.item()
            self._check_nan(loss)
            loss.backward()
            if self.clip_grad_norm:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), **self.clip_grad_norm)
            self.optimizer.step()
        return total_loss

    def _check_nan(self, loss):
        if torch.isnan(loss):
            raise ValueError("Training loss is nan")

    def fit(self, train_data, epochs):
        for epoch_idx in range(epochs):
            train_loss = self._train_epoch(train_data, epoch_idx)
            if isinstance(train_loss, tuple):
                print(epoch_idx, ", ".join(f"loss{i}: {float(l):.4f}" for i, l in enumerate(train_loss)))
            else:
                print(epoch_idx, f"train loss: {float(train_loss):.4f}")
