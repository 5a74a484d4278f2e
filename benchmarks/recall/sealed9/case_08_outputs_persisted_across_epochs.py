# Recall case 08 (sealed9): the trainer appends every batch's model outputs to a list on the trainer object that lives across epochs
# Thread: https://github.com/microsoft/InnerEye-DeepLearning/pull/209
# Reported: long segmentation trainings ran out of memory
# Confirmed cause: model outputs were persisted across epochs; merged PR removes the cross-epoch persistence so outputs only live for the epoch that uses them
# Class: results kept on a long-lived object (list grows every epoch)
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelTrainingStep:
    def __init__(self, model, optimizer, device):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.all_model_outputs = []

    def forward_and_backward(self, images, labels, train: bool):
        logits = self.model(images.to(self.device))
        loss = F.cross_entropy(logits, labels.to(self.device))
        if train:
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        posteriors = torch.softmax(logits.detach(), dim=1)
        self.all_model_outputs.append(posteriors)  # leak: ANY
        return loss.item(), posteriors

    def run_epoch(self, loader, train: bool):
        self.model.train(train)
        epoch_outputs = []
        total = 0.0
        for images, labels in loader:
            loss, posteriors = self.forward_and_backward(images, labels, train)
            epoch_outputs.append(posteriors.argmax(1).cpu())
            total += loss
        dice_inputs = torch.cat(epoch_outputs)
        return total / max(len(loader), 1), dice_inputs


if __name__ == "__main__":
    device = torch.device("cuda")
    net = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 4, 1)).to(device)
    step = ModelTrainingStep(net, torch.optim.Adam(net.parameters()), device)
    train = [(torch.randn(8, 1, 128, 128), torch.randint(0, 4, (8, 128, 128))) for _ in range(200)]
    for epoch in range(100):
        step.run_epoch(train, train=True)
        step.run_epoch(train[:40], train=False)
