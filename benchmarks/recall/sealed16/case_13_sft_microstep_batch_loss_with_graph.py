# Recall case 13 (sealed16): SFT loop accumulates the micro-step loss (still attached to its graph) into the batch loss used for logging
# Thread: https://github.com/PrimeIntellect-ai/prime-rl/pull/909
# Reported: reported batch loss was the scaled micro-step loss; in review of the logging fix the accumulation into batch_loss was flagged as keeping the graph
# Confirmed cause: maintainer review (samsja) on the merged PR: batch_loss += loss / grad_accum_steps must use loss.detach(), 'otherwise we will keep this in the graph'
# Class: total_loss += loss across gradient-accumulation micro-steps (logging accumulator attached to the graph)
import torch
import torch.nn.functional as F


def train(model, optimizer, data_iter, max_steps, grad_accum_steps, logger):
    model.train()
    for step in range(max_steps):
        batch_loss = torch.tensor(0.0, device="cuda")
        for micro_step in range(grad_accum_steps):
            micro_batch = next(data_iter)
            input_ids = micro_batch["input_ids"].cuda()
            target_ids = micro_batch["target_ids"].cuda()
            loss_mask = micro_batch["loss_mask"].cuda().bool()
            logits = model(input_ids).logits
            loss = F.cross_entropy(logits.flatten(0, 1), target_ids.flatten(), reduction="none").view_as(target_ids)
            loss = loss[loss_mask].mean()
            batch_loss += loss / grad_accum_steps  # leak: ANY
            (loss / grad_accum_steps).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        logger.log({"step": step, "loss": batch_loss.item()})
