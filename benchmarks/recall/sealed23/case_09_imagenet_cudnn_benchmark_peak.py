# Recall case 09 (sealed23): ImageNet-style training script leaves cuDNN benchmark mode on, so the first iterations for each input shape trial many convolution algorithms and their workspaces
# Thread: https://github.com/pytorch/pytorch/issues/15872
# Reported: GPU memory is about 9 GB at the beginning of training and settles at 1.4 GB after some iterations, so a larger batch size cannot be used; reproduced with the ImageNet example and crop size 334 (7.5 GB at the start, 4.5 GB stable)
# Confirmed cause: a PyTorch maintainer answered that cudnn.benchmark needs memory to try the candidate cuDNN algorithms before it caches the best one; the reporter thanked and went on about disabling cudnn.benchmark (the rest of that reply is cut off in the stored thread)
# Class: runtime autotuner left on (cuDNN benchmark workspaces at the start / on every new input shape)
import time

import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.optim
import torch.utils.data
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms


def train(train_loader, model, criterion, optimizer, epoch, gpu):
    model.train()
    end = time.time()
    for i, (images, target) in enumerate(train_loader):
        images = images.cuda(gpu, non_blocking=True)
        target = target.cuda(gpu, non_blocking=True)

        output = model(images)
        loss = criterion(output, target)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        if i % 10 == 0:
            print('Epoch [{}][{}/{}] loss {:.4f} time {:.3f}'.format(
                epoch, i, len(train_loader), loss.item(), time.time() - end))
        end = time.time()


def main(data_dir, arch='resnet50', batch_size=256, epochs=90, lr=0.1, gpu=0, crop_size=334):
    model = models.__dict__[arch]().cuda(gpu)
    criterion = nn.CrossEntropyLoss().cuda(gpu)
    optimizer = torch.optim.SGD(model.parameters(), lr, momentum=0.9, weight_decay=1e-4)

    cudnn.benchmark = True  # leak: ANY

    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder(
        data_dir,
        transforms.Compose([
            transforms.RandomResizedCrop(crop_size),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            normalize,
        ]))
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=batch_size, shuffle=True, num_workers=8, pin_memory=True)

    for epoch in range(epochs):
        train(train_loader, model, criterion, optimizer, epoch, gpu)
