# Recall case 73: the epoch's running loss is summed from the graph-carrying loss tensor
# Thread: https://github.com/ray-project/ray/pull/40940
# Reported: (ray #40714) the DeepSpeed LLM fine-tuning template leaks memory over training
#   iterations and eventually runs out of memory in long runs.
# Confirmed cause: the merged PR ("Make sure that loss can be freed after every iteration",
#   validated by the maintainers over multi-epoch runs): `training_function` does
#   `loss_sum += loss`, so the sum holds every step's graph until the end of the epoch.
#   Fixed by accumulating `loss.item()`.
# Class: accumulating the loss tensor (not its value) across steps
import time

import torch
from accelerate import Accelerator


def training_function(kwargs: dict):
    config = kwargs["config"]
    accelerator = Accelerator(gradient_accumulation_steps=config["gradient_accumulation_steps"])
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        kwargs["model"], kwargs["optimizer"], kwargs["train_dataloader"], kwargs["lr_scheduler"]
    )
    for epoch in range(config["num_epochs"]):
        model.train()
        loss_sum = torch.tensor(0.0).to(accelerator.device)
        s_epoch = time.time()
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                s_fwd = time.time()
                outputs = model(**batch)
                loss = outputs.loss
                loss_sum += loss  # leak: ANY
                e_fwd = time.time()
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.is_main_process and step % config["log_every"] == 0:
                accelerator.print(
                    f"[epoch {epoch} step {step}] loss: {loss.item():.4f} "
                    f"fwd: {e_fwd - s_fwd:.2f}s avg loss: {(loss_sum / (step + 1)).item():.4f}"
                )
        accelerator.print(f"epoch {epoch} done in {time.time() - s_epoch:.1f}s, "
                          f"mean loss {(loss_sum / len(train_dataloader)).item():.4f}")
