# Fixed twin of case 03: the running total accumulates float(loss)
# Thread: https://discuss.pytorch.org/t/high-memory-usage-while-training/162
# Reported: memory usage keeps growing while training until the GPU runs out of memory
# Confirmed cause: the running total adds loss[0], which is still a differentiable tensor, so total_loss accumulates the autograd history of every iteration; the PyTorch FAQ (written by the maintainers, citing this thread as its source) gives the fix of accumulating float(loss)
# Class: total_loss += loss
import torch


def train(model, criterion, optimizer, loader, epochs=10):
    for epoch in range(epochs):
        total_loss = 0
        for input, target in loader:
            input, target = input.cuda(), target.cuda()
            optimizer.zero_grad()
            output = model(input)
            loss = criterion(output, target)
            loss.backward()
            optimizer.step()
            total_loss += float(loss)
        print("epoch", epoch, "loss", total_loss / len(loader))
