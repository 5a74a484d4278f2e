# Recall case 10 (sealed7): truncated-BPTT training_step hands its LSTM hidden state to the next split without detaching it
# Thread: https://github.com/Lightning-AI/pytorch-lightning/pull/8145
# Reported: with truncated_bptt_steps the hiddens returned from training_step were passed on still attached to the previous split's graph
# Confirmed cause: hiddens carried across splits must be detached (otherwise each split's graph stays reachable from the next); the merged PR detaches them and updates the docs example
# Class: recurrent hidden state carried across batches/splits without .detach()
import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl


class SequenceForecaster(pl.LightningModule):
    def __init__(self, n_features=16, hidden=512):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, n_features)
        self.truncated_bptt_steps = 50

    def training_step(self, batch, batch_idx, hiddens):
        x, y = batch
        out, hiddens = self.lstm(x, hiddens)
        loss = F.mse_loss(self.head(out), y)
        self.log("train_loss", loss)
        return {"loss": loss, "hiddens": hiddens}  # leak: ANY

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    ds = torch.utils.data.TensorDataset(torch.randn(64, 5000, 16), torch.randn(64, 5000, 16))
    trainer = pl.Trainer(max_epochs=3, accelerator="gpu", devices=1)
    trainer.fit(SequenceForecaster(), torch.utils.data.DataLoader(ds, batch_size=8))
