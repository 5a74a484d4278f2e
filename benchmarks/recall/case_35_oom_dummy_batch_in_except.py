# Recall case 35: after a CUDA OOM the handler runs a dummy batch inside the except block
# Thread: https://github.com/pytorch/pytorch/issues/18853
# Reported: recovering from CUDA OOMs (lowering the batch or running a dummy batch so DDP
#   workers stay in sync) works inconsistently and often OOMs again.
# Confirmed cause: the maintainers' editorial note on the issue: "Make sure that you are not
#   holding on to tensors via an exception object (which contains the stack trace and will
#   retain tensors). Do not bring the exception object into scope, or do error recovery outside
#   of the catch block."
# Class: out-of-memory handler that re-runs the work inside the except block
import torch


def train_epoch(model, loader, optimizer, criterion, dummy_batch):
    model.train()
    ooms = 0
    for inputs, targets in loader:
        inputs, targets = inputs.cuda(), targets.cuda()
        optimizer.zero_grad()
        try:
            loss = criterion(model(inputs), targets)
            loss.backward()
        except RuntimeError as e:
            if "out of memory" not in str(e):
                raise
            ooms += 1
            print(f"| WARNING: ran out of memory ({ooms}), running a dummy batch to stay in sync")
            for p in model.parameters():
                p.grad = None
            torch.cuda.empty_cache()
            dummy_loss = criterion(model(dummy_batch[0]), dummy_batch[1]) * 0.0  # leak: ML106
            dummy_loss.backward()
        optimizer.step()
    return ooms
