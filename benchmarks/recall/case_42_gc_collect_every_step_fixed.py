# Fixed twin of case 42: the merged fix, no gc.collect() in the loop (empty_cache every 10th step).
# Thread: https://github.com/huggingface/peft/pull/2894
# Reported: the MetaMathQA method-comparison training script is slow.
# Confirmed cause: the script calls `torch.cuda.empty_cache()` and `gc.collect()` after each
#   step; "gc.collect() is not needed at all when it comes to memory", removing it took 250
#   steps from 108 s to 65 s with the same reserved-memory profile (merged; empty_cache kept,
#   but only every 10th step).
# Class: gc.collect() every step
import time

import torch


def train(model, optimizer, scheduler, train_loader, max_steps, grad_accum_steps=1):
    model.train()
    step = 0
    tic = time.perf_counter()
    for batch in train_loader:
        batch = {k: v.to("cuda") for k, v in batch.items()}
        outputs = model(**batch)
        loss = outputs.loss / grad_accum_steps
        loss.backward()
        if (step + 1) % grad_accum_steps == 0:
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        if step % 10 == 0:
            torch.cuda.empty_cache()
        step += 1
        if step >= max_steps:
            break
    return time.perf_counter() - tic
