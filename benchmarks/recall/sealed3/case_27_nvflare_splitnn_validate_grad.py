# Recall case 27 (sealed3): split-learning _validate() runs the client half of a ResNet-50 with autograd on
# Thread: https://github.com/NVIDIA/NVFlare/issues/2443
# Reported: training works, but as soon as _validate() is called during training: torch.cuda.OutOfMemoryError
#   (12 GiB allocated by PyTorch on a 24 GiB card) in the vertical split-learning CIFAR-10 example adapted to ResNet-50
# Confirmed cause: the maintainers: validation should run under torch.no_grad(); tracked as issue #3067 and fixed by
#   the merged PR #3071 "Add no_grad to validation steps to reduce GPU memory consumption"
# Class: evaluation helper that collects intermediate activations while grad is enabled
import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as transforms


class SplitNN(nn.Module):
    def __init__(self, split_id):
        super().__init__()
        resnet = torchvision.models.resnet50(weights=None, num_classes=10)
        layers = [resnet.conv1, resnet.bn1, resnet.relu, resnet.maxpool,
                  resnet.layer1, resnet.layer2, resnet.layer3, resnet.layer4,
                  resnet.avgpool, nn.Flatten(), resnet.fc]
        cut = 6
        self.model = nn.Sequential(*(layers[:cut] if split_id == 0 else layers[cut:]))

    def forward(self, x):
        return self.model(x)


class CIFAR10SplitLearner:
    def __init__(self, split_id, device):
        self.device = device
        self.model = SplitNN(split_id).to(device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.criterion = nn.CrossEntropyLoss()

    def _train_step(self, images, labels, label_party):
        self.model.train()
        activations = self.model(images.to(self.device))
        sent = activations.detach().requires_grad_(True)
        label_party.optimizer.zero_grad()
        loss = label_party.criterion(label_party.model(sent), labels.to(self.device))
        loss.backward()
        label_party.optimizer.step()
        self.optimizer.zero_grad()
        activations.backward(sent.grad)
        self.optimizer.step()
        return loss.item()

    def _validate(self, test_loader, label_party):
        self.model.eval()
        label_party.model.eval()
        outputs, targets = [], []
        for images, labels in test_loader:
            activations = self.model(images.to(self.device))  # leak: ANY
            outputs.append(label_party.model(activations))  # leak: ANY
            targets.append(labels.to(self.device))
        preds = torch.cat(outputs).argmax(dim=1)
        return (preds == torch.cat(targets)).float().mean().item()


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tf = transforms.Compose([transforms.Resize(224), transforms.ToTensor()])
    train_set = torchvision.datasets.CIFAR10("/tmp/cifar10", train=True, download=True, transform=tf)
    test_set = torchvision.datasets.CIFAR10("/tmp/cifar10", train=False, download=True, transform=tf)
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=64, shuffle=True, num_workers=4)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=64, num_workers=4)
    site1, site2 = CIFAR10SplitLearner(0, device), CIFAR10SplitLearner(1, device)
    for epoch in range(10):
        for i, (images, labels) in enumerate(train_loader):
            site1._train_step(images, labels, site2)
            if i % 200 == 0:
                print(epoch, i, "val acc", site1._validate(test_loader, site2))
