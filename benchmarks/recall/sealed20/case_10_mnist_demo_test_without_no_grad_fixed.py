# Fixed twin of case 10: drop the volatile flag and run the test pass under torch.no_grad(), as the reporter of the fix and the maintainer recommend
# Thread: https://github.com/AlexHex7/Non-local_pytorch/issues/9
# Reported: demo_MNIST.py runs under PyTorch 0.3.0 but fails with "cuda runtime error (2) : out of memory" under PyTorch 0.4.0
# Confirmed cause: the volatile flag is ignored since PyTorch 0.4, so the test pass builds and keeps autograd state for the non-local blocks' large attention matrices; a second user fixed it by wrapping the test code in torch.no_grad() and the maintainer agreed (use torch.no_grad / set_grad_enabled instead of volatile)
# Class: evaluation without no_grad (deprecated volatile flag left in place)
import torch
import torch.nn as nn
from torch.autograd import Variable


def test(net, test_loader, use_cuda=True):
    net.eval()
    total = 0
    correct = 0
    with torch.no_grad():
        for step, (b_x, b_y) in enumerate(test_loader):
            if use_cuda:
                b_x, b_y = b_x.cuda(), b_y.cuda()
            b_x = Variable(b_x)
            output = net(b_x)
            _, predicted = torch.max(output.data, 1)
            total += b_y.size(0)
            correct += (predicted == b_y).sum().item()
    return correct / total


def main(net, train_loader, test_loader, epochs=10, use_cuda=True):
    if use_cuda:
        net = net.cuda()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_func = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        net.train()
        for step, (b_x, b_y) in enumerate(train_loader):
            if use_cuda:
                b_x, b_y = b_x.cuda(), b_y.cuda()
            output = net(b_x)
            loss = loss_func(output, b_y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        acc = test(net, test_loader, use_cuda)
        print("epoch %d test acc %.4f" % (epoch, acc))
