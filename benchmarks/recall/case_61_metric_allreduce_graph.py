# Recall case 61: a distributed metric averages the loss through a differentiable allreduce
# Thread: https://github.com/horovod/horovod/pull/641
# Reported: the Horovod ImageNet ResNet-50 example runs out of GPU memory during training.
# Confirmed cause: the merged PR: "The current examples reduces the `loss` which, during
#   training, carries with itself the computation graph"; `Metric.update` sums
#   `hvd.allreduce(val)` into an epoch-long tensor, so every step's graph stays reachable.
#   Detaching (and moving to CPU) before the reduction fixed it.
# Class: a meter that reduces across ranks accumulates graph-carrying values
import math

import horovod.torch as hvd
import torch
import torch.nn.functional as F


class Metric(object):
    def __init__(self, name):
        self.name = name
        self.sum = torch.tensor(0.)
        self.n = torch.tensor(0.)

    def update(self, val):
        self.sum += hvd.allreduce(val, name=self.name)  # leak: ANY
        self.n += 1

    @property
    def avg(self):
        return self.sum / self.n


def accuracy(output, target):
    pred = output.max(1, keepdim=True)[1]
    return pred.eq(target.view_as(pred)).cpu().float().mean()


def train(epoch, model, optimizer, train_loader, train_sampler, args, log_writer=None):
    model.train()
    train_sampler.set_epoch(epoch)
    train_loss = Metric("train_loss")
    train_accuracy = Metric("train_accuracy")
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.cuda(), target.cuda()
        optimizer.zero_grad()
        for i in range(0, len(data), args.batch_size):
            data_batch = data[i:i + args.batch_size]
            target_batch = target[i:i + args.batch_size]
            output = model(data_batch)
            train_accuracy.update(accuracy(output, target_batch))
            loss = F.cross_entropy(output, target_batch)
            train_loss.update(loss)  # leak: ANY
            loss.div_(math.ceil(float(len(data)) / args.batch_size))
            loss.backward()
        optimizer.step()
    if log_writer:
        log_writer.add_scalar("train/loss", train_loss.avg, epoch)
        log_writer.add_scalar("train/accuracy", train_accuracy.avg, epoch)
