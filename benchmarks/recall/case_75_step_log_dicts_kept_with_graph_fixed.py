# Fixed twin of case 75: tensors are detached before they are kept for the epoch end.
# Thread: https://github.com/sktime/pytorch-forecasting/pull/1924
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
        self.log(f"{['val', 'train'][self.training]}_loss", loss.detach(), on_step=self.training,
                 on_epoch=True, batch_size=len(x["decoder_target"]))
        return {"loss": loss, "n_samples": x["decoder_lengths"].size(0)}, out

    def training_step(self, batch, batch_idx):
        x, y = batch
        log, out = self.step(x, y, batch_idx)
        self.training_step_outputs.append(
            {k: v.detach() if isinstance(v, torch.Tensor) else v for k, v in log.items()}
        )
        return log

    def on_train_epoch_end(self):
        losses = torch.stack([o["loss"] for o in self.training_step_outputs])
        self.log("train_loss_epoch_mean", losses.mean())
        self.training_step_outputs.clear()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        log, out = self.step(x, y, batch_idx)
        self.validation_step_outputs.append(
            {k: v.detach() if isinstance(v, torch.Tensor) else v for k, v in log.items()}
        )
        return log

    def on_validation_epoch_end(self):
        losses = torch.stack([o["loss"] for o in self.validation_step_outputs])
        self.log("val_loss_epoch_mean", losses.mean())
        self.validation_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.learning_rate)
