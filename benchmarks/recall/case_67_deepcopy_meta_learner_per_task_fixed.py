# Fixed twin of case 67: validation and test tasks use maml.clone() instead of deepcopy.
# Thread: https://github.com/learnables/learn2learn/issues/88
# Class: deepcopy of the model per task/iteration on the device
import random

import learn2learn as l2l
import torch
from torch import nn, optim


def accuracy(predictions, targets):
    predictions = predictions.argmax(dim=1).view(targets.shape)
    return (predictions == targets).sum().float() / targets.size(0)


def fast_adapt(adaptation_data, evaluation_data, learner, loss, adaptation_steps, device):
    data, labels = adaptation_data
    data, labels = data.to(device), labels.to(device)
    for _ in range(adaptation_steps):
        train_error = loss(learner(data), labels)
        train_error /= len(data)
        learner.adapt(train_error)
    data, labels = evaluation_data
    data, labels = data.to(device), labels.to(device)
    predictions = learner(data)
    valid_error = loss(predictions, labels) / len(data)
    return valid_error, accuracy(predictions, labels)


def main(train_tasks, valid_tasks, test_tasks, ways=5, meta_lr=0.003, fast_lr=0.5,
         meta_batch_size=32, adaptation_steps=1, num_iterations=60000, device="cuda"):
    model = l2l.vision.models.OmniglotFC(28 ** 2, ways).to(device)
    maml = l2l.algorithms.MAML(model, lr=fast_lr, first_order=False)
    opt = optim.Adam(maml.parameters(), meta_lr)
    loss = nn.CrossEntropyLoss(reduction="mean")

    for iteration in range(num_iterations):
        opt.zero_grad()
        meta_train_error = 0.0
        meta_valid_error = 0.0
        for task in range(meta_batch_size):
            learner = maml.clone()
            adaptation_data, evaluation_data = train_tasks.sample(), train_tasks.sample()
            evaluation_error, _ = fast_adapt(adaptation_data, evaluation_data, learner, loss,
                                             adaptation_steps, device)
            evaluation_error.backward()
            meta_train_error += evaluation_error.item()

            learner = maml.clone()
            adaptation_data, evaluation_data = valid_tasks.sample(), valid_tasks.sample()
            evaluation_error, _ = fast_adapt(adaptation_data, evaluation_data, learner, loss,
                                             adaptation_steps, device)
            meta_valid_error += evaluation_error.item()

        print("Iteration", iteration, meta_train_error / meta_batch_size, meta_valid_error / meta_batch_size)
        for p in maml.parameters():
            p.grad.data.mul_(1.0 / meta_batch_size)
        opt.step()

    meta_test_error = 0.0
    for task in range(meta_batch_size):
        learner = maml.clone()
        adaptation_data, evaluation_data = test_tasks.sample(), test_tasks.sample()
        evaluation_error, _ = fast_adapt(adaptation_data, evaluation_data, learner, loss,
                                         adaptation_steps, device)
        meta_test_error += evaluation_error.item()
    return meta_test_error / meta_batch_size
