# Fixed twin of case 02: pass map_location='cpu' to torch.load
# Thread: https://github.com/ecmwf/anemoi-core/pull/1145
# Reported: CUDA/HIP OOM while reloading a 13GB checkpoint with load_weights_only=true on a model that trained fine
# Confirmed cause: torch.load with implicit map_location=None revives every tensor on the saving rank's GPU before load_state_dict copies them; merged PR loads on 'cpu' (maintainer extended it to transfer learning)
# Class: torch.load of a training checkpoint without map_location before the trainer moves the model to the GPU
import torch
import torch.nn as nn
import pytorch_lightning as pl


class GraphForecaster(pl.LightningModule):
    def __init__(self, channels=512, depth=16):
        super().__init__()
        self.processor = nn.Sequential(*[nn.Linear(channels, channels) for _ in range(depth)])
        self.head = nn.Linear(channels, channels)

    def training_step(self, batch, batch_idx):
        x, y = batch
        y_hat = self.head(self.processor(x))
        return nn.functional.mse_loss(y_hat, y)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=6.25e-4)


class AnemoiTrainer:
    def __init__(self, config):
        self.config = config
        self.model = GraphForecaster()

    def load_weights_only(self, checkpoint_path):
        # implicit map_location=None: tensors go back to the device rank 0 saved them from
        checkpoint = torch.load(checkpoint_path, map_location="cpu", weights_only=False)
        self.model.load_state_dict(checkpoint["state_dict"], strict=False)
        return self.model

    def train(self, datamodule):
        if self.config.get("load_weights_only"):
            self.load_weights_only(self.config["warm_start"])
        trainer = pl.Trainer(accelerator="gpu", devices=8, strategy="ddp", max_epochs=1)
        trainer.fit(self.model, datamodule=datamodule)


if __name__ == "__main__":
    AnemoiTrainer({"load_weights_only": True, "warm_start": "last.ckpt"}).train(None)
