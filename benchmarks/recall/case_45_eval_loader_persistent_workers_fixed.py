# Fixed twin of case 45: the merged fix, the persistent eval loader is built once and reused.
# Thread: https://github.com/huggingface/transformers/issues/28469
# Reported: with `dataloader_persistent_workers=True`, training forks more and more processes
#   (a fork bomb) and eventually runs out of memory / file descriptors.
# Confirmed cause: `get_eval_dataloader()` builds a fresh DataLoader each time `evaluate()` runs;
#   with persistent workers, each one keeps its worker processes alive; fixed in #29538 ("the
#   dataloader for training should be recreated, but eval should not") by reusing the eval loader.
# Class: a persistent-workers DataLoader constructed per evaluation
import torch
from torch.utils.data import DataLoader


class SimpleTrainer:
    def __init__(self, model, args, train_dataset, eval_dataset, collate_fn):
        self.model = model
        self.args = args
        self.train_dataset = train_dataset
        self.eval_dataset = eval_dataset
        self.collate_fn = collate_fn
        self._eval_dataloader = None

    def get_eval_dataloader(self):
        if self._eval_dataloader is None:
            self._eval_dataloader = DataLoader(
                self.eval_dataset, batch_size=self.args.eval_batch_size, collate_fn=self.collate_fn,
                num_workers=self.args.dataloader_num_workers, pin_memory=True, persistent_workers=True)
        return self._eval_dataloader

    def evaluate(self):
        self.model.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            for batch in self.get_eval_dataloader():
                batch = {k: v.to(self.args.device) for k, v in batch.items()}
                total += self.model(**batch).loss.item()
                count += 1
        self.model.train()
        return total / max(count, 1)

    def train(self, optimizer):
        loader = DataLoader(self.train_dataset, batch_size=self.args.train_batch_size, shuffle=True,
                            collate_fn=self.collate_fn, num_workers=self.args.dataloader_num_workers)
        for step, batch in enumerate(loader):
            batch = {k: v.to(self.args.device) for k, v in batch.items()}
            loss = self.model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if step % self.args.eval_steps == 0:
                print({"step": step, "eval_loss": self.evaluate()})
