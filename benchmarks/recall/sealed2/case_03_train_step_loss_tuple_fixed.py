# Fixed twin of case 03: each of the five sums takes .item(), the change the reporter confirmed.
# Thread: https://github.com/bubbliiiing/faster-rcnn-pytorch/issues/35
# Reported: host memory keeps increasing while training Faster R-CNN; resources are not released.
# Confirmed cause: the epoch loop adds the loss tensors returned by `train_step` directly
#   (`total_loss += total`, ...) instead of `+= total.item()`; the reporter confirmed that with
#   `.item()` on all five sums memory stays normal.
# Class: graph-carrying losses returned as a tuple by a step method and summed by the caller
import torch
import torch.nn as nn
from tqdm import tqdm


class FasterRCNNTrainer(nn.Module):
    def __init__(self, faster_rcnn, optimizer):
        super().__init__()
        self.faster_rcnn = faster_rcnn
        self.optimizer = optimizer

    def forward(self, imgs, bboxes, labels, scale):
        rpn_loc, rpn_cls, roi_loc, roi_cls = self.faster_rcnn.compute_losses(imgs, bboxes, labels, scale)
        total = rpn_loc + rpn_cls + roi_loc + roi_cls
        return [rpn_loc, rpn_cls, roi_loc, roi_cls, total]

    def train_step(self, imgs, bboxes, labels, scale):
        self.optimizer.zero_grad()
        losses = self.forward(imgs, bboxes, labels, scale)
        losses[-1].backward()
        self.optimizer.step()
        return losses


def fit_one_epoch(net, train_util, epoch, epoch_size, gen, Epoch, cuda=True):
    total_loss = 0
    rpn_loc_loss = 0
    rpn_cls_loss = 0
    roi_loc_loss = 0
    roi_cls_loss = 0
    net.train()
    with tqdm(total=epoch_size, desc=f"Epoch {epoch + 1}/{Epoch}", mininterval=0.3) as pbar:
        for iteration, (imgs, boxes, labels) in enumerate(gen):
            if iteration >= epoch_size:
                break
            imgs = torch.from_numpy(imgs).float()
            if cuda:
                imgs = imgs.cuda()
            rpn_loc, rpn_cls, roi_loc, roi_cls, total = train_util.train_step(imgs, boxes, labels, 1)
            total_loss += total.item()
            rpn_loc_loss += rpn_loc.item()
            rpn_cls_loss += rpn_cls.item()
            roi_loc_loss += roi_loc.item()
            roi_cls_loss += roi_cls.item()
            pbar.set_postfix(total=float(total_loss) / (iteration + 1),
                             rpn_loc=float(rpn_loc_loss) / (iteration + 1),
                             rpn_cls=float(rpn_cls_loss) / (iteration + 1),
                             roi_loc=float(roi_loc_loss) / (iteration + 1),
                             roi_cls=float(roi_cls_loss) / (iteration + 1))
            pbar.update(1)
    torch.save(net.state_dict(), f"logs/Epoch{epoch + 1}-Total_Loss{float(total_loss) / epoch_size:.4f}.pth")
