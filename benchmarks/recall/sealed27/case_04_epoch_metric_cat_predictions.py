# Thread: https://github.com/pytorch/ignite/issues/221
# Reported: an EpochMetric attached to the training engine keeps growing the autograd graph:
#   when y_pred are accumulated without detaching "we update the graph" on every iteration.
# Confirmed cause: the maintainers (vfdev-5, jasonkriss): metrics are normally safe because the
#   evaluator runs under torch.no_grad(), but a metric accumulated on a trainer concatenates
#   y_pred that still carry the graph; the agreed fix is to detach y_pred in the metric's update.
# Class: metric class accumulating predictions with their autograd graph for a whole epoch
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
        self._predictions = torch.cat([self._predictions, y_pred.float()], dim=0)  # leak: ANY
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
