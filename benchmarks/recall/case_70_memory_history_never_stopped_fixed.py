# Fixed twin of case 70: recording stops when the active profiling window ends, and the profiler
#   is stepped every iteration so its schedule advances (as in the PR); the epoch loop also
#   leaves with `break` rather than `return`, so `self._profiler.stop()` is reached.
# Thread: https://github.com/meta-pytorch/torchtune/pull/2522
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
                first_active = self.profiler_wait_steps + self.profiler_warmup_steps
                if (
                    self._is_rank_zero
                    and curr_epoch == 0
                    and self.profiler_profile_memory
                    and idx == first_active
                    and self._device.type == "cuda"
                ):
                    torch.cuda.memory._record_memory_history()

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

                if (
                    self._is_rank_zero
                    and curr_epoch == 0
                    and self.profiler_profile_memory
                    and idx == first_active + self.profiler_active_steps
                    and self._device.type == "cuda"
                ):
                    torch.cuda.memory._record_memory_history(enabled=None)

                self._steps_run += 1
                if self._steps_run % self._log_every_n_steps == 0:
                    self.log_metrics(trajectory, grpo_stats, grad_norm=grad_norm)
                self.cleanup_after_step(trajectory, grpo_stats)
                self._profiler.step()
                pbar.update(1)

                if self._steps_run == self._total_steps:
                    training_completed = True
                    break

            self._epochs_run += 1
            if self._epochs_run % self._save_every_n_epochs == 0:
                self.save_checkpoint(curr_epoch)
            if training_completed:
                break

        self._profiler.stop()
