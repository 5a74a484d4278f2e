# Fixed twin of case 12: call optimizer.zero_grad() after the global-batch loop to release gradient memory before the next rollout
# Thread: https://github.com/NVIDIA-NeMo/RL/pull/1147
# Reported: GRPO/SFT training with the DTensor policy worker is likely to run out of GPU memory at the beginning of the second step's rollouts
# Confirmed cause: the merged PR states it: gradient memory is not freed after policy training; train() calls optimizer.zero_grad() before each global batch but never after the last optimizer.step(), so a full set of .grad tensors stays resident while generation runs; the fix calls optimizer.zero_grad() after the batch loop ("release gradient memory before rollouts")
# Class: parameter gradients left allocated after the last optimizer step (peak waste in the following phase)
from contextlib import nullcontext

import torch


class DTensorPolicyWorker:
    def __init__(self, model, optimizer, scheduler, dp_size=1):
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.dp_size = dp_size

    def train(self, data, loss_fn, num_global_batches, local_gbs, mbs, eval_mode=False):
        if eval_mode:
            ctx = torch.no_grad()
            self.model.eval()
        else:
            ctx = nullcontext()
            self.model.train()

        with ctx:
            losses = []
            for gb_idx in range(num_global_batches):
                batch = data.get_batch(batch_idx=gb_idx, batch_size=local_gbs)
                self.optimizer.zero_grad()
                mb_losses = []
                for mb in batch.make_microbatch_iterator(mbs):
                    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                        logits = self.model(input_ids=mb["input_ids"], attention_mask=mb["attention_mask"]).logits
                    loss, metrics = loss_fn(logits, mb)
                    del logits
                    if not eval_mode:
                        loss = loss * self.dp_size
                        loss.backward()
                    mb_losses.append(loss.item())

                if not eval_mode:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                    self.optimizer.step()
                losses.append(torch.tensor(mb_losses).sum().item())

            # release gradient memory before rollouts
            self.optimizer.zero_grad()
            if not eval_mode:
                self.scheduler.step()
            torch.cuda.empty_cache()
        return {"loss": sum(losses)}

    @torch.no_grad()
    def generate(self, prompts, max_new_tokens=512):
        self.model.eval()
        return self.model.generate(**prompts, max_new_tokens=max_new_tokens, do_sample=True)


def grpo_loop(worker, dataloader, loss_fn, steps, local_gbs, mbs):
    for step, prompts in zip(range(steps), dataloader):
        rollouts = worker.generate(prompts)
        data = build_training_batch(prompts, rollouts)
        worker.train(data, loss_fn, num_global_batches=1, local_gbs=local_gbs, mbs=mbs)


def build_training_batch(prompts, rollouts):
    raise NotImplementedError
