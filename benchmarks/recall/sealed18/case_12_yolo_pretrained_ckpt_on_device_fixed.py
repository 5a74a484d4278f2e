# Fixed twin of case 12: the checkpoint is loaded with `map_location='cpu'`; only the needed weights reach the GPU through `load_state_dict`
# Thread: https://github.com/ultralytics/yolov5/pull/6516
# Reported: training from pretrained yolov5l weights on a 16 GB T4, nvidia-smi shows 14.7 GB of 15.3 GB in use while the checkpoint is loaded on the GPU; the PR compares this against loading it on the CPU and calls the difference a CUDA memory leak
# Confirmed cause: `torch.load(weights, map_location=device)` materializes every tensor of the checkpoint (the full model, the EMA copy and the optimizer state) on the GPU although only a state dict is copied into the freshly built model; these copies and the allocator blocks they leave behind stay on the device. The merged PR (edited and merged by the maintainer) loads the checkpoint to the CPU, with the comment "to avoid CUDA memory leak"
# Class: torch.load onto the GPU
import torch
from torch.optim import SGD

from models.yolo import Model
from utils.downloads import attempt_download
from utils.general import intersect_dicts
from utils.torch_utils import ModelEMA


def train(hyp, opt, device, train_loader, compute_loss, nc):
    weights, cfg, epochs = opt.weights, opt.cfg, opt.epochs
    pretrained = weights.endswith(".pt")
    if pretrained:
        weights = attempt_download(weights)
        ckpt = torch.load(weights, map_location="cpu")
        model = Model(cfg or ckpt["model"].yaml, ch=3, nc=nc, anchors=hyp.get("anchors")).to(device)
        exclude = ["anchor"] if (cfg or hyp.get("anchors")) and not opt.resume else []
        csd = ckpt["model"].float().state_dict()
        csd = intersect_dicts(csd, model.state_dict(), exclude=exclude)
        model.load_state_dict(csd, strict=False)
    else:
        model = Model(cfg, ch=3, nc=nc, anchors=hyp.get("anchors")).to(device)

    optimizer = SGD(model.parameters(), lr=hyp["lr0"], momentum=hyp["momentum"], nesterov=True)
    ema = ModelEMA(model)

    start_epoch = 0
    if pretrained:
        if ckpt["optimizer"] is not None:
            optimizer.load_state_dict(ckpt["optimizer"])
        if ema and ckpt.get("ema"):
            ema.ema.load_state_dict(ckpt["ema"].float().state_dict())
            ema.updates = ckpt["updates"]
        start_epoch = ckpt["epoch"] + 1
        del ckpt, csd

    for epoch in range(start_epoch, epochs):
        model.train()
        for imgs, targets in train_loader:
            imgs = imgs.to(device, non_blocking=True).float() / 255
            pred = model(imgs)
            loss, loss_items = compute_loss(pred, targets.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            ema.update(model)
    return model
