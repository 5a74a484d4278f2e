# Fixed twin of case 10: wrap the three evaluation calls in main() in `with torch.no_grad():` (as in the merged PR)
# Thread: https://github.com/LetheSec/Fer2013-Facial-Emotion-Recognition-Pytorch/pull/4
# Reported: running evaluate.py on a trained checkpoint blows up GPU memory ("显存爆炸")
# Confirmed cause: the merged PR (commit "Update evaluate.py": add "with torch.no_grad():" to keep GPU memory from exploding) wraps the evaluation calls in main() in torch.no_grad(); the forward passes in evaluate() had been recording autograd graphs for nothing
# Class: evaluation without no_grad
import argparse

import torch
import torch.nn as nn
from sklearn.metrics import confusion_matrix, f1_score

from dataset import get_dataloaders
from utils import get_model

parser = argparse.ArgumentParser(description='FER2013 evaluation')
parser.add_argument('--checkpoint', default='', type=str)
parser.add_argument('--arch', default='ResNet18', type=str)
parser.add_argument('--Ncrop', default=True, type=eval)


def correct_count(output, target, topk=(1,)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    return [correct[:k].reshape(-1).float().sum(0, keepdim=True) for k in topk]


def evaluate(net, dataloader, loss_fn, Ncrop, device):
    net = net.eval()
    loss_tr, n_samples = 0.0, 0.0
    y_pred, y_gt = [], []
    correct1, correct2 = 0, 0

    for inputs, labels in dataloader:
        inputs, labels = inputs.to(device), labels.to(device)

        if Ncrop:
            # fold the crops into the batch dimension
            bs, ncrops, c, h, w = inputs.shape
            inputs = inputs.view(-1, c, h, w)
            outputs = net(inputs)
            # average the predictions over the crops
            outputs = outputs.view(bs, ncrops, -1)
            outputs = torch.sum(outputs, dim=1) / ncrops
        else:
            outputs = net(inputs)

        loss = loss_fn(outputs, labels)
        loss_tr += loss.item()

        counts = correct_count(outputs, labels, topk=(1, 2))
        correct1 += counts[0].item()
        correct2 += counts[1].item()

        _, preds = torch.max(outputs.data, 1)
        n_samples += labels.size(0)
        y_pred.extend(p.item() for p in preds)
        y_gt.extend(y.item() for y in labels)

    print("Top 1 Accuracy: %2.6f %%" % (100 * correct1 / n_samples))
    print("Top 2 Accuracy: %2.6f %%" % (100 * correct2 / n_samples))
    print("Loss: %2.6f" % (loss_tr / n_samples))
    print("F1 Score: %2.6f" % f1_score(y_gt, y_pred, average='micro'))
    print("Confusion Matrix:\n", confusion_matrix(y_gt, y_pred))


def main():
    args = parser.parse_args()
    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
    loss_fn = nn.CrossEntropyLoss()

    model = get_model(args.arch).to(device)
    state = torch.load(args.checkpoint, map_location=device)
    model.load_state_dict(state['model_state_dict'])

    train_loader, val_loader, test_loader = get_dataloaders(augment=False)

    with torch.no_grad():
        print("Train")
        evaluate(model, train_loader, loss_fn, args.Ncrop, device)

        print("Val")
        evaluate(model, val_loader, loss_fn, args.Ncrop, device)

        print("Test")
        evaluate(model, test_loader, loss_fn, args.Ncrop, device)


if __name__ == "__main__":
    main()
