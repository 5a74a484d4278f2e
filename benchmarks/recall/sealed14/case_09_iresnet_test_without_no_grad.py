# Recall case 09 (sealed14): the classifier's test() computes loss/accuracy on the test set with autograd still recording
# Thread: https://github.com/jhjacobsen/invertible-resnet/issues/15
# Reported: OOM when computing on the test set while several classifiers share one GPU
# Confirmed cause: model.eval() does not switch off gradient tracking; test() needs torch.no_grad(); maintainer: 'will add a fix shortly'
# Class: evaluation helper running forward passes without torch.no_grad()
import torch
import torch.nn as nn
import torch.nn.functional as F


class iResNetClassifier(nn.Module):
    def __init__(self, n_blocks=8, ch=64, n_classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, ch, 3, padding=1)
        self.blocks = nn.ModuleList([nn.Sequential(nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1)) for _ in range(n_blocks)])
        self.fc = nn.Linear(ch, n_classes)

    def forward(self, x):
        z = self.stem(x)
        for blk in self.blocks:
            z = z + blk(z)
        return self.fc(z.mean((2, 3)))


def test(best_result, args, model, epoch, testloader, use_cuda):
    model.eval()
    test_loss, correct, total = 0.0, 0, 0
    for inputs, targets in testloader:  # leak: ANY
        if use_cuda:
            inputs, targets = inputs.cuda(), targets.cuda()
        out = model(inputs)
        loss = F.cross_entropy(out, targets)
        test_loss += loss.item()
        correct += out.argmax(1).eq(targets).sum().item()
        total += targets.size(0)
    acc = 100.0 * correct / total
    return max(best_result, acc)


if __name__ == "__main__":
    m = iResNetClassifier().cuda()
    loader = [(torch.randn(128, 3, 32, 32), torch.randint(0, 10, (128,))) for _ in range(79)]
    print(test(0.0, None, m, 0, loader, True))
