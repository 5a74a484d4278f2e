# Thread: https://github.com/espnet/espnet/pull/2040
# Reported: resuming an ESPnet2 training run from checkpoint.pth uses more memory for the whole
#   run than starting the same run from scratch.
# Confirmed cause (PR author, merged): "The intermediate states from checkpoint survives during
#   training, so it increases the memory usage by that size." The loaded `states` dict (model,
#   optimizer, scheduler state on the GPU) was a local of the long-running run() method; the PR
#   moved the resume code into its own function so those values are freed when it returns.
# Class: checkpoint restore keeps a second copy of the weights/optimizer state alive
from pathlib import Path

import torch


class Trainer:
    @classmethod
    def train_one_epoch(cls, model, iterator, optimizers, schedulers, reporter):
        model.train()
        for batch in iterator:
            batch = {k: v.cuda() for k, v in batch.items()}
            loss, stats, weight = model(**batch)
            for optimizer in optimizers:
                optimizer.zero_grad()
            loss.backward()
            for optimizer in optimizers:
                optimizer.step()
            reporter.register(stats, weight)
        for scheduler in schedulers:
            scheduler.step()

    @classmethod
    def run(cls, model, optimizers, schedulers, train_iter, reporter, output_dir: Path,
            max_epoch: int, resume: bool, ngpu: int):
        if resume and (output_dir / "checkpoint.pth").exists():
            states = torch.load(  # leak: ANY
                output_dir / "checkpoint.pth",
                map_location=f"cuda:{torch.cuda.current_device()}" if ngpu > 0 else "cpu",
            )
            model.load_state_dict(states["model"])
            reporter.load_state_dict(states["reporter"])
            for optimizer, state in zip(optimizers, states["optimizers"]):
                optimizer.load_state_dict(state)
            for scheduler, state in zip(schedulers, states["schedulers"]):
                if scheduler is not None:
                    scheduler.load_state_dict(state)

        start_epoch = reporter.get_epoch() + 1
        for iepoch in range(start_epoch, max_epoch + 1):
            reporter.set_epoch(iepoch)
            cls.train_one_epoch(model, train_iter, optimizers, schedulers, reporter)
            torch.save(
                {
                    "model": model.state_dict(),
                    "reporter": reporter.state_dict(),
                    "optimizers": [o.state_dict() for o in optimizers],
                    "schedulers": [s.state_dict() if s is not None else None for s in schedulers],
                },
                output_dir / "checkpoint.pth",
            )
