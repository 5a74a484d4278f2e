# Recall case 04: an AverageMeter fed the loss tensor instead of a number
# Thread: https://github.com/lyq133/LIC-HPCM/issues/4
# Reported: image-compression training at batch 32 on a 24 GB 3090 dies deep into the epoch
#   (step 14400/20718) in loss.backward() with "Unable to find a valid cuDNN algorithm".
# Confirmed cause: the epoch-long `AverageMeter` gets `out_criterion["loss"]` (a tensor with the
#   step's graph); `update` does `self.sum += val * n`, so every step's graph stays alive;
#   closed after the fix `loss.update(out_criterion["loss"].item())`.
# Class: a meter object whose update accumulates its argument (the graph crosses a method call)
import torch


class AverageMeter:
    """Compute running average."""

    def __init__(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train_one_epoch(model, criterion, train_dataloader, optimizer, aux_optimizer, epoch, clip_max_norm, logger):
    model.train()
    device = next(model.parameters()).device
    loss = AverageMeter()
    bpp_loss = AverageMeter()
    mse_loss = AverageMeter()
    for i, d in enumerate(train_dataloader):
        d = d.to(device)
        optimizer.zero_grad()
        aux_optimizer.zero_grad()
        out_net = model(d)
        out_criterion = criterion(out_net, d)
        out_criterion["loss"].backward()
        if clip_max_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_max_norm)
        optimizer.step()
        aux_loss = model.aux_loss()
        aux_loss.backward()
        aux_optimizer.step()
        loss.update(out_criterion["loss"])  # leak: ML101
        bpp_loss.update(out_criterion["bpp_loss"])  # leak: ML101
        mse_loss.update(out_criterion["mse_loss"])  # leak: ML101
        if i % 100 == 0:
            logger.info(f"epoch {epoch} [{i}/{len(train_dataloader)}] loss {loss.avg:.4f} "
                        f"bpp {bpp_loss.avg:.4f} mse {mse_loss.avg:.6f} aux {aux_loss.item():.2f}")
