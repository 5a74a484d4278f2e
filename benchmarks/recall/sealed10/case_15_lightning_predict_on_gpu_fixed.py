# Fixed twin of case 15: predict_step moves its outputs to the CPU before returning them
# Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/10156
# Reported: Trainer.predict accumulates the predictions on the GPU rather than the CPU, so large prediction sets run out of GPU memory
# Confirmed cause: Lightning stores whatever predict_step returns for the whole predict loop; tensors returned on the device stay on the device (maintainers closed it "working as intended"; move outputs to CPU in predict_step or use a prediction writer / return_predictions=False)
# Class: predict returning every batch's results on the GPU
import torch
from torch.utils.data import DataLoader, Dataset

import pytorch_lightning as pl


class RandomDataset(Dataset):
    def __init__(self, size, length):
        self.len = length
        self.data = torch.randn(length, size)

    def __getitem__(self, index):
        return self.data[index]

    def __len__(self):
        return self.len


class Segmenter(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(32, 512 * 512)

    def forward(self, x):
        return self.layer(x).view(-1, 512, 512)

    def training_step(self, batch, batch_idx):
        loss = self(batch).mean()
        self.log("train_loss", loss)
        return loss

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        masks = torch.sigmoid(self(batch))
        return masks.cpu()

    def configure_optimizers(self):
        return torch.optim.SGD(self.layer.parameters(), lr=0.1)


if __name__ == "__main__":
    model = Segmenter()
    trainer = pl.Trainer(accelerator="auto", devices=1, max_epochs=1, logger=False)
    trainer.fit(model, DataLoader(RandomDataset(32, 64), batch_size=8))
    predictions = trainer.predict(model, DataLoader(RandomDataset(32, 20000), batch_size=64))
    print(len(predictions))
