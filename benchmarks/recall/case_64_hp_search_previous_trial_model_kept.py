# Recall case 64: each hyperparameter trial builds its model while the last one is still held
# Thread: https://github.com/huggingface/transformers/issues/13019
# Reported: `trainer.hyperparameter_search` with a large model and the Optuna backend runs out of
#   GPU memory after a few trials, although one trial fits comfortably.
# Confirmed cause: the reporter traced it and the merged fix (PR #35440, "Release GPU memory after
#   Optuna trial") confirms it: the trainer keeps `trainer.model` (and what hangs off it) from
#   the previous trial, and `train()` calls `model_init()` for the new trial while the old model
#   is still referenced, so two models (and leftover cached blocks) coexist on the GPU.
#   Fixed by deleting the trainer's model, collecting garbage and emptying the CUDA cache
#   before each new trial.
# Class: object lifetime -- per-trial models kept alive by a long-lived owner
import os

import optuna
import torch
from transformers import Trainer
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR, BestRun


def run_hp_search_optuna(trainer: Trainer, n_trials: int, direction: str, **kwargs) -> BestRun:
    def _objective(trial, checkpoint_dir=None):
        checkpoint = None
        if checkpoint_dir:
            for subdir in os.listdir(checkpoint_dir):
                if subdir.startswith(PREFIX_CHECKPOINT_DIR):
                    checkpoint = os.path.join(checkpoint_dir, subdir)
        trainer.objective = None
        trainer.train(resume_from_checkpoint=checkpoint, trial=trial)  # leak: ANY
        if getattr(trainer, "objective", None) is None:
            metrics = trainer.evaluate()
            trainer.objective = trainer.compute_objective(metrics)
        return trainer.objective

    timeout = kwargs.pop("timeout", None)
    n_jobs = kwargs.pop("n_jobs", 1)
    study = optuna.create_study(direction=direction, **kwargs)
    study.optimize(_objective, n_trials=n_trials, timeout=timeout, n_jobs=n_jobs)
    best_trial = study.best_trial
    return BestRun(str(best_trial.number), best_trial.value, best_trial.params)


def search(model_init, training_args, train_dataset, eval_dataset, hp_space, n_trials=20):
    trainer = Trainer(
        args=training_args,
        model_init=model_init,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
    )
    return run_hp_search_optuna(trainer, n_trials=n_trials, direction="minimize", hp_space=hp_space)
