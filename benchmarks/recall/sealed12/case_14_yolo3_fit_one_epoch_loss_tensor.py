# Recall case 14 (sealed12): fit_one_epoch sums loss tensors into total_loss and val_loss for the progress bar, keeping their graphs for the epoch
# Thread: https://github.com/bubbliiiing/yolo3-pytorch/issues/3
# Reported: with larger batch sizes the loss-accumulation code may cause GPU out-of-memory (train.py total_loss += loss, val_loss += loss)
# Confirmed cause: the running totals keep the autograd graph of each batch's loss (pre-0.4 idiom); the issue points to the PyTorch FAQ fix `+= loss.item()` (no maintainer reply; the same author acknowledged the identical pattern in another repo — weak)
# Class: `total_loss += loss` / `val_loss += loss` running totals kept as tensors
import torch


class ProgressBar:
    def __init__(self, total, desc="", postfix=None, mininterval=0.3):
        self.total, self.desc, self.n, self.postfix = total, desc, 0, {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        print(self.desc, self.n, self.postfix)

    def set_postfix(self, **kw):
        self.postfix = kw

    def update(self, k=1):
        self.n += k


def fit_one_epoch(net, yolo_losses, optimizer, epoch, epoch_size, epoch_size_val, gen, genval, Epoch, cuda=True):
    total_loss = 0
    val_loss = 0
    net.train()
    with ProgressBar(total=epoch_size, desc=f"Epoch {epoch + 1}/{Epoch}", postfix=dict, mininterval=0.3) as pbar:
        for iteration, (images, targets) in enumerate(gen):
            if iteration >= epoch_size:
                break
            if cuda:
                images = images.cuda()
                targets = [t.cuda() for t in targets]
            optimizer.zero_grad()
            outputs = net(images)
            losses = [yolo_losses[i](outputs[i], targets)[0] for i in range(3)]
            loss = sum(losses)
            loss.backward()
            optimizer.step()
            total_loss += loss  # leak: ANY
            pbar.set_postfix(**{"total_loss": float(total_loss) / (iteration + 1)})
            pbar.update(1)

    net.eval()
    with ProgressBar(total=epoch_size_val, desc=f"Epoch {epoch + 1}/{Epoch}", postfix=dict, mininterval=0.3) as pbar:
        for iteration, (images_val, targets_val) in enumerate(genval):
            if iteration >= epoch_size_val:
                break
            if cuda:
                images_val = images_val.cuda()
                targets_val = [t.cuda() for t in targets_val]
            outputs = net(images_val)
            loss = sum(yolo_losses[i](outputs[i], targets_val)[0] for i in range(3))
            val_loss += loss  # leak: ANY
            pbar.set_postfix(**{"total_loss": float(val_loss) / (iteration + 1)})
            pbar.update(1)
    torch.save(net.state_dict(), "logs/Epoch%d-Total_Loss%.4f.pth" % (epoch + 1, float(total_loss) / epoch_size))
