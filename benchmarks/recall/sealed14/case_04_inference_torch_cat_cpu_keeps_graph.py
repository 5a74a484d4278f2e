# Recall case 04 (sealed14): inference accumulates predictions with torch.cat on the CPU, but each .cpu() copy still carries the autograd graph over GPU activations
# Thread: https://github.com/pytorch/pytorch/issues/13613
# Reported: GPU memory grows during a long inference loop until 'cuda out of memory'; commenting out the torch.cat line stops it
# Confirmed cause: predictions were produced with grad enabled, so the CPU copies keep grad_fn chains that pin every batch's GPU activations; the reporter found the fix the next day (take the values out of the graph before accumulating / run under no_grad)
# Class: prediction loop with autograd on, appending/concatenating model outputs (.cpu() but not detached) into a growing tensor
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Classifier(nn.Module):
    def __init__(self, n_in=512, n_classes=10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, n_classes))

    def forward(self, x):
        return self.net(x)


def predict(model, loader, device):
    model.eval()
    y_predlabel = torch.empty(0, 10)
    for (batch_x,) in loader:
        batch_x = batch_x.to(device)
        batch_y_predlabel = torch.softmax(model(batch_x), dim=1)
        y_predlabel = torch.cat((y_predlabel, batch_y_predlabel.cpu()))  # leak: ANY
    return y_predlabel


if __name__ == "__main__":
    device = torch.device("cuda")
    model = Classifier().to(device)
    loader = DataLoader(TensorDataset(torch.randn(200000, 512)), batch_size=256)
    preds = predict(model, loader, device)
    print(preds.shape)
