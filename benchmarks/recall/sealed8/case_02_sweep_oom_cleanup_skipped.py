# Recall case 02 (sealed8): after one sweep trial hits CUDA OOM its model stays alive, so every later trial OOMs too
# Thread: https://github.com/CUNY-CL/yoyodyne/issues/227
# Reported: "if you have a OOM in the inner loop of the sweep script, the memory is not freed and all subsequent runs
#   will also OOM immediately" (cascading OOMs in the W&B sweep script)
# Confirmed cause: the deallocation (`del model`, `torch.cuda.empty_cache()`) sat after the training call and was never
#   reached when training raised; maintainer's merged PR #231 (https://github.com/CUNY-CL/yoyodyne/pull/231) wraps the
#   training call in try/except with a `finally:` that clears the cache, and was tested with deliberately huge batches
# Class: model/trainer built per trial in a sweep loop; cleanup only on the success path, exception keeps trial alive
import argparse
import functools
import traceback

import torch
from torch import nn
import pytorch_lightning as pl
import wandb


class Seq2SeqModel(pl.LightningModule):
    def __init__(self, vocab_size: int, embedding_size: int, hidden_size: int, encoder_layers: int):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embedding_size)
        self.encoder = nn.LSTM(embedding_size, hidden_size, num_layers=encoder_layers, batch_first=True)
        self.out = nn.Linear(hidden_size, vocab_size)

    def training_step(self, batch, batch_idx):
        source, target = batch
        hidden, _ = self.encoder(self.embed(source))
        logits = self.out(hidden)
        loss = nn.functional.cross_entropy(logits.transpose(1, 2), target)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


class DataModule(pl.LightningDataModule):
    def __init__(self, batch_size: int):
        super().__init__()
        self.batch_size = batch_size

    def train_dataloader(self):
        source = torch.randint(0, 500, (20000, 40))
        data = torch.utils.data.TensorDataset(source, source.flip(1))
        return torch.utils.data.DataLoader(data, batch_size=self.batch_size, shuffle=True)


def train(trainer: pl.Trainer, model: pl.LightningModule, datamodule: pl.LightningDataModule) -> str:
    trainer.fit(model, datamodule)
    return trainer.checkpoint_callback.best_model_path


def train_sweep(args: argparse.Namespace) -> None:
    """Runs a single training run; hyperparameters come from the sweep config."""
    wandb.init()
    for key, value in dict(wandb.config).items():
        setattr(args, key, value)
    pl.seed_everything(args.seed)
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=args.max_epochs)
    datamodule = DataModule(args.batch_size)
    model = Seq2SeqModel(500, args.embedding_size, args.hidden_size, args.encoder_layers)
    best_checkpoint = train(trainer, model, datamodule)  # leak: ANY
    print(f"Best checkpoint: {best_checkpoint}")
    # Explicitly deallocates model and clears the cache.
    del model  # leak: ANY
    torch.cuda.empty_cache()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sweep_id", required=True)
    parser.add_argument("--entity", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--count", type=int)
    parser.add_argument("--seed", type=int, default=49)
    parser.add_argument("--max_epochs", type=int, default=20)
    args = parser.parse_args()
    try:
        wandb.agent(
            sweep_id=args.sweep_id,
            entity=args.entity,
            project=args.project,
            function=functools.partial(train_sweep, args),
            count=args.count,
        )
    except Exception:
        print(traceback.format_exc())
        exit(1)
    finally:
        wandb.finish()


if __name__ == "__main__":
    main()
