# Fixed twin of case 12: extraction runs under torch.no_grad(), the features are collected and concatenated once.
# Thread: https://discuss.pytorch.org/t/why-extracting-features-from-pictures-is-memory-demanding/5836
# Reported: extracting ResNet-152 features of 1000 pictures crashes an 8 GB machine at picture 17.
# Confirmed cause: the reporter, after fixing it: the forward passes ran with autograd on and each
#   output was concatenated, graph and all, into the growing feature tensor; solved by running the
#   model without building a graph (volatile then, `torch.no_grad()` now) and keeping only the data.
# Class: inference without no_grad whose outputs are concatenated into a tensor that lives for the loop
import os

import torch
import torchvision
from torch import nn

from dataset import DATASET


def extract_features(out_path="pos1_fea.pt", count=1000):
    mydata = DATASET(os.getcwd())
    model = torchvision.models.resnet152(weights=torchvision.models.ResNet152_Weights.DEFAULT)
    feature_extractor = nn.Sequential(*list(model.children())[:-1])
    feature_extractor.eval()

    features = []
    with torch.no_grad():
        for index in range(count):
            f = feature_extractor(mydata[index][0].view(1, 3, 224, 224))
            features.append(f)
            if index % 100 == 0:
                print(f"{index}/{count} features extracted")
    pos1 = torch.cat(features)

    with open(out_path, "wb") as fh:
        torch.save(pos1.flatten(1), fh)
    return pos1.shape


if __name__ == "__main__":
    print(extract_features())
