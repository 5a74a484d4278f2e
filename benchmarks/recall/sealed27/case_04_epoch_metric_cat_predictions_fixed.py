# Fixed twin of case 04: update() detaches y_pred before accumulating it, as the maintainers
#   agreed.
import torch
from ignite.engine import Events, create_supervised_trainer
from ignite.metrics import Metric


class EpochMetric(Metric):
    """Stores every prediction and target of the epoch, applies compute_fn at the end."""

    def __init__(self, compute_fn, output_transform=lambda x: x):
        self.compute_fn = compute_fn
        super(EpochMetric, self).__init__(output_transform=output_transform)

    def reset(self):
        self._predictions = torch.tensor([], dtype=torch.float32)
        self._targets = torch.tensor([], dtype=torch.long)

    def update(self, output):
        y_pred, y = output
        y_pred = y_pred.detach()
        self._predictions = torch.cat([self._predictions, y_pred.float()], dim=0)
        self._targets = torch.cat([self._targets, y.long()], dim=0)

    def compute(self):
        return self.compute_fn(self._predictions, self._targets)


def roc_auc_compute_fn(y_preds, y_targets):
    from sklearn.metrics import roc_auc_score
    return roc_auc_score(y_targets.numpy(), y_preds.numpy())


def run(model, optimizer, loss_fn, train_loader, max_epochs=10):
    trainer = create_supervised_trainer(
        model, optimizer, loss_fn,
        output_transform=lambda x, y, y_pred, loss: (torch.sigmoid(y_pred).cpu(), y.cpu()),
    )
    EpochMetric(roc_auc_compute_fn).attach(trainer, "train_auc")

    @trainer.on(Events.EPOCH_COMPLETED)
    def log(engine):
        print(engine.state.epoch, engine.state.metrics["train_auc"])

    trainer.run(train_loader, max_epochs=max_epochs)
