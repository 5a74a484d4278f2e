# Fixed twin of case 15: the epoch sum accumulates loss.item() (a Python float) instead of the tensor
# Thread: https://github.com/open-mmlab/Amphion/issues/263
# Reported: memory usage of valle_v2 training grows after each epoch, forcing stop-and-resume every few epochs
# Confirmed cause: maintainer located it in base_trainer.py: `epoch_sum_loss += loss` must be `epoch_sum_loss += loss.item()`
#   ("We have located the problem ... I'll create a pr on this")
# Class: `total += loss` accumulates a tensor with grad history across all steps of an epoch
import torch
from torch import nn
from accelerate import Accelerator


class ValleAR(nn.Module):
    def __init__(self, vocab=1024, d_model=1024, n_layers=12):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, 16, 4 * d_model, batch_first=True)
        self.decoder = nn.TransformerEncoder(layer, n_layers)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, input_ids, labels):
        logits = self.head(self.decoder(self.embed(input_ids)))
        return nn.functional.cross_entropy(logits.transpose(1, 2), labels)


class BaseTrainer:
    def __init__(self, model, train_dataloader, lr=1e-4):
        self.accelerator = Accelerator()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        self.model, self.optimizer, self.train_dataloader = self.accelerator.prepare(
            model, self.optimizer, train_dataloader
        )
        self.step = 0
        self.epoch = 0

    def _train_step(self, batch):
        input_ids, labels = batch
        loss = self.model(input_ids, labels)
        self.optimizer.zero_grad()
        self.accelerator.backward(loss)
        self.accelerator.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        return loss

    def _train_epoch(self):
        self.model.train()
        epoch_sum_loss = 0.0
        for batch in self.train_dataloader:
            loss = self._train_step(batch)
            epoch_sum_loss += loss.item()
            self.step += 1
            if self.step % 100 == 0:
                self.accelerator.log({"train/loss": loss.item()}, step=self.step)
        return epoch_sum_loss / len(self.train_dataloader)

    def train_loop(self, max_epoch=100):
        while self.epoch < max_epoch:
            train_loss = self._train_epoch()
            self.accelerator.print(f"epoch {self.epoch}: train loss {float(train_loss):.4f}")
            self.epoch += 1


if __name__ == "__main__":
    data = torch.utils.data.TensorDataset(torch.randint(0, 1024, (20000, 256)), torch.randint(0, 1024, (20000, 256)))
    trainer = BaseTrainer(ValleAR(), torch.utils.data.DataLoader(data, batch_size=8, shuffle=True))
    trainer.train_loop()
