# Recall case 70: CUDA memory-history recording is switched on for profiling and never switched off
# Thread: https://github.com/meta-pytorch/torchtune/pull/2522
# Reported: profiling the GRPO full-finetune recipe with memory profiling enabled does not behave
#   as configured: recording runs for the whole training run instead of the active window.
# Confirmed cause: the merged PR ("Fix GRPO profiling"): the recipe starts
#   `torch.cuda.memory._record_memory_history()` when the profiler's wait+warmup steps are done,
#   but never stops it, and never calls `self._profiler.step()`, so the profiler schedule never
#   advances and every allocation of the rest of the run is recorded (host memory keeps
#   growing with the history). The fix stops the recording (`enabled=None`) once the active
#   steps are over and steps the profiler every iteration.
# Class: profiler / debugging switch left on for the whole run
import torch
from tqdm import tqdm


class FullGRPOFinetuneRecipeDistributed:
    def train(self) -> None:
        self._optimizer.zero_grad()
        grad_norm = None
        training_completed = False
        self._profiler.start()
        for curr_epoch in range(self._epochs_run, self.total_epochs):
            pbar = tqdm(total=self._steps_per_epoch, disable=not self._is_rank_zero)
            self._dataloader.sampler.set_epoch(curr_epoch)
            for idx, batch in enumerate(self._dataloader):
                if (
                    self._is_rank_zero
                    and curr_epoch == 0
                    and self.profiler_profile_memory
                    and idx == self.profiler_wait_steps + self.profiler_warmup_steps
                ):
                    torch.cuda.memory._record_memory_history()  # leak: ANY

                tokens = batch["tokens"].to(self._device)
                _, context_length = tokens.shape
                trajectory = self.generate_trajectory_batched(tokens, batch["answers"])

                grpo_stats = []
                for _ in range(self._ppo_epochs):
                    grpo_stats.append(self.grpo_step(trajectory, context_length))
                    if self._clip_grad_norm is not None:
                        grad_norm = torch.nn.utils.clip_grad_norm_(
                            self._model.parameters(), max_norm=float(self._clip_grad_norm)
                        )
                    self._optimizer.step()
                    self._optimizer.zero_grad(set_to_none=True)
                    self.global_step += 1
                    if self._lr_scheduler is not None:
                        self._lr_scheduler.step()

                self._steps_run += 1
                if self._steps_run % self._log_every_n_steps == 0:
                    self.log_metrics(trajectory, grpo_stats, grad_norm=grad_norm)
                self.cleanup_after_step(trajectory, grpo_stats)
                pbar.update(1)

                if self._steps_run == self._total_steps:
                    training_completed = True
                    break

            self._epochs_run += 1
            if self._epochs_run % self._save_every_n_epochs == 0:
                self.save_checkpoint(curr_epoch)
            if training_completed:
                return

        self._profiler.stop()
