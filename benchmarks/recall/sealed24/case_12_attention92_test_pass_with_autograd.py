# Recall case 12 (sealed24): Residual Attention Network CIFAR-10 training script evaluates the test set after every epoch with autograd on
# Thread: https://github.com/tengshaofeng/ResidualAttentionNetwork-pytorch/issues/14
# Reported: running the mixup training script, the per-epoch test pass runs out of GPU memory; the reporter points at the line that builds the test batch inside `test()` ("When testing, model do not need grad. And this line caused me out of memory.")
# Confirmed cause: the reporter located it and the maintainer agreed in the thread (asked whether the fix is `with torch.no_grad():` around the test-batch code, then accepted): `test()` runs the 92-layer attention model over the test loader without no_grad, so each forward keeps its autograd graph and activations (plus the previous batch's graph while the next one is built) on top of the training state
# Class: evaluation without no_grad
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable
from torchvision import datasets, transforms

from model.residual_attention_network import ResidualAttentionModel_92_32input_update as ResidualAttentionModel

model_file = 'model_92_sgd_mixup300_normal20.pkl'
classes = ('plane', 'car', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship', 'truck')


def mixup_data(x, y, alpha=1.0):
    lam = np.random.beta(alpha, alpha) if alpha > 0 else 1
    index = torch.randperm(x.size()[0]).cuda()
    mixed_x = lam * x + (1 - lam) * x[index, :]
    return mixed_x, y, y[index], lam


def mixup_criterion(criterion, pred, y_a, y_b, lam):
    return lam * criterion(pred, y_a) + (1 - lam) * criterion(pred, y_b)


def test(model, test_loader, btrain=False, model_file='model_92.pkl'):
    if not btrain:
        model.load_state_dict(torch.load(model_file))
    model.eval()

    correct = 0
    total = 0
    class_correct = list(0. for i in range(10))
    class_total = list(0. for i in range(10))

    for images, labels in test_loader:  # leak: ANY
        images = Variable(images.cuda())
        labels = Variable(labels.cuda())
        outputs = model(images)  # leak: ANY
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels.data).sum()
        c = (predicted == labels.data).squeeze()
        for i in range(20):
            label = labels.data[i]
            class_correct[label] += c[i]
            class_total[label] += 1

    print('Accuracy of the model on the test images:', float(correct) / total)
    for i in range(10):
        print('Accuracy of %5s : %2d %%' % (classes[i], 100 * class_correct[i] / class_total[i]))
    return correct / total


def main(total_epoch=320, lr=0.1):
    transform = transforms.Compose([
        transforms.RandomHorizontalFlip(),
        transforms.RandomCrop((32, 32), padding=4),
        transforms.ToTensor(),
    ])
    train_dataset = datasets.CIFAR10(root='./data/', train=True, transform=transform, download=True)
    test_dataset = datasets.CIFAR10(root='./data/', train=False, transform=transforms.ToTensor())
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=64, shuffle=True, num_workers=8)
    test_loader = torch.utils.data.DataLoader(test_dataset, batch_size=20, shuffle=False)

    model = ResidualAttentionModel().cuda()
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True, weight_decay=0.0001)
    acc_best = 0
    for epoch in range(total_epoch):
        model.train()
        tims = time.time()
        for i, (images, labels) in enumerate(train_loader):
            inputs, targets_a, targets_b, lam = mixup_data(images.cuda(), labels.cuda(), alpha=1.0)
            outputs = model(inputs)
            optimizer.zero_grad()
            loss = mixup_criterion(criterion, outputs, targets_a, targets_b, lam)
            loss.backward()
            optimizer.step()
            if (i + 1) % 100 == 0:
                print("Epoch [%d/%d], Iter [%d/%d] Loss: %.4f" % (epoch + 1, total_epoch, i + 1, len(train_loader), loss.item()))
        print('the epoch takes time:', time.time() - tims)
        acc = test(model, test_loader, btrain=True)
        if acc > acc_best:
            acc_best = acc
            torch.save(model.state_dict(), model_file)
