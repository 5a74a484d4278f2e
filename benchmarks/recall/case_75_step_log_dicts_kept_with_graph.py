# Recall case 75: a LightningModule keeps every step's log dict (loss with graph) for the epoch end
# Thread: https://github.com/sktime/pytorch-forecasting/pull/1924
# Reported: (pytorch-forecasting #1369, #1461) CPU/GPU memory grows steadily within each epoch
#   when training forecasting models.
# Confirmed cause: the merged PR: the step builds a log dict holding the loss (and outputs) and
#   appends it to `self.training_step_outputs` / `validation_step_outputs`, "retaining the
#   computation graph for every batch throughout an entire epoch"; prediction results were
#   also kept on the GPU. Fixed by detaching the tensors in the log dict before appending,
#   detaching the loss used for logging (and moving prediction results to the CPU, a separate
#   part of the PR left out of this case).
# Class: per-step outputs kept on self for the epoch end, with their graph
import torch
import lightning.pytorch as pl


class BaseModel(pl.LightningModule):
    def __init__(self, loss, learning_rate=1e-3):
        super().__init__()
        self.loss = loss
        self.learning_rate = learning_rate
        self.training_step_outputs = []
        self.validation_step_outputs = []

    def step(self, x, y, batch_idx):
        out = self(x)
        prediction = out["prediction"]
        loss = self.loss(prediction, y)
        self.log(f"{['val', 'train'][self.training]}_loss", loss, on_step=self.training,
                 on_epoch=True, batch_size=len(x["decoder_target"]))
        return {"loss": loss, "n_samples": x["decoder_lengths"].size(0)}, out

    def training_step(self, batch, batch_idx):
        x, y = batch
        log, out = self.step(x, y, batch_idx)
        self.training_step_outputs.append(log)  # leak: ANY
        return log

    def on_train_epoch_end(self):
        losses = torch.stack([o["loss"] for o in self.training_step_outputs])
        self.log("train_loss_epoch_mean", losses.mean())
        self.training_step_outputs.clear()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        log, out = self.step(x, y, batch_idx)
        self.validation_step_outputs.append(log)
        return log

    def on_validation_epoch_end(self):
        losses = torch.stack([o["loss"] for o in self.validation_step_outputs])
        self.log("val_loss_epoch_mean", losses.mean())
        self.validation_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.learning_rate)
