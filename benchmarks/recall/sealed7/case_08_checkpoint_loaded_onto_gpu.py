# Recall case 08 (sealed7): a checkpoint is torch.load-ed straight onto the GPU it was saved from before being copied into the model
# Thread: https://github.com/Lightning-AI/pytorch-lightning/pull/228
# Reported: loading a trained model directly to GPU doubles its memory footprint and causes many OOMs
# Confirmed cause: torch.load without map_location restores every storage onto its original CUDA device, then load_state_dict copies it again; the maintainer's merged PR loads weights to CPU first
# Class: torch.load of a checkpoint onto the GPU (no map_location) followed by load_state_dict / .cuda()
import argparse
import torch
import torch.nn as nn
import pytorch_lightning as pl


def load_hparams_from_tags_csv(tags_csv):
    import csv
    with open(tags_csv) as f:
        rows = {r["key"]: r["value"] for r in csv.DictReader(f)}
    return argparse.Namespace(**rows)


class CoolModel(pl.LightningModule):
    def __init__(self, hparams):
        super().__init__()
        self.hparams_ns = hparams
        self.encoder = nn.Sequential(nn.Linear(28 * 28, 4096), nn.ReLU(), nn.Linear(4096, 4096))
        self.head = nn.Linear(4096, 10)

    def forward(self, x):
        return self.head(self.encoder(x.view(x.size(0), -1)))

    @classmethod
    def load_from_metrics(cls, weights_path, tags_csv, on_gpu=True):
        hparams = load_hparams_from_tags_csv(tags_csv)
        hparams.on_gpu = on_gpu
        checkpoint = torch.load(weights_path)  # leak: ANY
        model = cls(hparams)
        model.load_state_dict(checkpoint["state_dict"])
        if on_gpu:
            model = model.cuda()
        return model


if __name__ == "__main__":
    model = CoolModel.load_from_metrics("lightning_logs/version_0/checkpoints/_ckpt_epoch_9.ckpt",
                                        "lightning_logs/version_0/meta_tags.csv")
    print(torch.cuda.memory_allocated() / 2**20)
