# Fixed twin of case 16: after a CUDA OOM the script frees the cache and retries inside the except block
# Thread: https://github.com/pytorch/pytorch/issues/27600
# Reported: memory is not freed after a CUDA out-of-memory error; empty_cache()/gc.collect() in the handler change
#   nothing and the retry with a smaller batch fails too
# Confirmed cause: (maintainer albanD) the exception holds on to the frame where the error was raised, which holds all
#   the GPU tensors of that forward; as long as the exception is alive (inside the except block) they cannot be freed.
#   Recover outside the except block (also the editorial note on #18853)
# Class: retrying forward/backward inside `except` while the exception keeps the failed step's tensors alive
import gc

import torch
import torch.nn as nn
import torchvision


def train_step(model, optimizer, images, targets):
    outputs = model(images)
    loss = nn.functional.cross_entropy(outputs, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def run_batch(model, optimizer, images, targets):
    oom = False
    try:
        return train_step(model, optimizer, images, targets)
    except RuntimeError as e:
        if "out of memory" not in str(e):
            raise
        oom = True
    # recover outside the except block, once the exception (and the frame it holds) is gone
    if oom:
        print("OOM with batch", images.size(0), "- retrying in two halves")
        gc.collect()
        torch.cuda.empty_cache()
        half = images.size(0) // 2
        first = train_step(model, optimizer, images[:half], targets[:half])
        second = train_step(model, optimizer, images[half:], targets[half:])
        return (first + second) / 2


if __name__ == "__main__":
    device = "cuda"
    model = torchvision.models.resnet152(weights=None).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(1000):
        batch = 256 if step % 10 else 512  # every tenth batch is oversized
        images = torch.randn(batch, 3, 224, 224, device=device)
        targets = torch.randint(0, 1000, (batch,), device=device)
        print(step, run_batch(model, optimizer, images, targets))
