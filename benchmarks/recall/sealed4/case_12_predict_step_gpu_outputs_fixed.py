# Fixed twin of case 12: predict_step moves tokens / subject_idxs / trajectory_idxs to CPU before returning
# Thread: https://github.com/mmcdermott/MEDS_EIC_AR/pull/141
# Reported: Trainer.predict accumulates per-batch return values for the whole run; with the dataset expanded by n_trajectories the pinned per-batch GPU allocations can OOM on non-trivial cohorts
# Confirmed cause: predict_step returned `tokens`, `subject_idxs`, `trajectory_idxs` as device tensors; the merged PR moves them to CPU inside predict_step before returning
# Class: predict/generation results returned and kept on the GPU for the whole prediction run
import torch
import torch.nn as nn
import lightning.pytorch as pl
from torch.utils.data import DataLoader, Dataset


class RepeatedPredictionDataset(Dataset):
    def __init__(self, prompts, n_trajectories):
        self.prompts, self.n_trajectories = prompts, n_trajectories

    def __len__(self):
        return len(self.prompts) * self.n_trajectories

    def __getitem__(self, idx):
        subject_idx, trajectory_idx = divmod(idx, self.n_trajectories)
        return {"prompt": self.prompts[subject_idx], "subject_idx": subject_idx, "trajectory_idx": trajectory_idx}


class TinyDecoder(nn.Module):
    def __init__(self, vocab=4096, dim=512):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.block = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 8, batch_first=True), num_layers=4)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        mask = nn.Transformer.generate_square_subsequent_mask(ids.size(1), device=ids.device)
        return self.head(self.block(self.emb(ids), mask=mask))


class Model(pl.LightningModule):
    def __init__(self, max_new_tokens=256):
        super().__init__()
        self.model = TinyDecoder()
        self.max_new_tokens = max_new_tokens

    @torch.no_grad()
    def generate(self, ids):
        for _ in range(self.max_new_tokens):
            logits = self.model(ids)[:, -1]
            nxt = torch.multinomial(torch.softmax(logits, -1), 1)
            ids = torch.cat([ids, nxt], dim=1)
        return ids

    def predict_step(self, batch, batch_idx):
        tokens = self.generate(batch["prompt"])
        return {
            "tokens": tokens.cpu(),
            "subject_idxs": batch["subject_idx"].cpu(),
            "trajectory_idxs": batch["trajectory_idx"].cpu(),
        }


def format_trajectories(predictions):
    out = {}
    for p in predictions:
        for t, s, j in zip(p["tokens"].tolist(), p["subject_idxs"].tolist(), p["trajectory_idxs"].tolist()):
            out.setdefault(s, {})[j] = t
    return out


if __name__ == "__main__":
    prompts = [torch.randint(0, 4096, (64,)) for _ in range(5000)]
    loader = DataLoader(RepeatedPredictionDataset(prompts, n_trajectories=20), batch_size=64)
    trainer = pl.Trainer(accelerator="gpu", devices=1, logger=False)
    predictions = trainer.predict(Model(), dataloaders=loader)
    trajectories = format_trajectories(predictions)
