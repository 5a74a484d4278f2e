# Recall case 13 (sealed4): get_preds collects the model outputs on the CPU but keeps every batch's targets on the GPU
# Thread: https://github.com/fastai/fastai/issues/2337
# Reported: learn.get_preds(DatasetType.Valid) runs out of GPU memory on big validation sets
# Confirmed cause: loss_batch returned `yb[0].detach()` (still on the GPU) instead of `to_detach(yb[0])`, so all targets piled up on the device until the end of the loop; maintainer (sgugger) confirmed and switched to to_detach
# Class: predict helper accumulating per-batch tensors on the GPU (detach() without moving to CPU)
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def to_detach(b, cpu=True):
    """Detach (nested) tensors and optionally move them to host memory."""
    if isinstance(b, (list, tuple)):
        return type(b)(to_detach(o, cpu) for o in b)
    if isinstance(b, torch.Tensor):
        b = b.detach()
        return b.cpu() if cpu else b
    return b


def loss_batch(model, xb, yb, loss_func=None, opt=None):
    """Run one batch; without a loss function return (outputs, targets) for prediction."""
    if not isinstance(xb, (list, tuple)):
        xb = [xb]
    if not isinstance(yb, (list, tuple)):
        yb = [yb]
    out = model(*xb)
    if not loss_func:
        return to_detach(out), yb[0].detach()  # leak: ANY
    loss = loss_func(out, *yb)
    if opt is not None:
        loss.backward()
        opt.step()
        opt.zero_grad()
    return loss.detach().cpu()


def validate(model, dl, device, loss_func=None):
    model.eval()
    with torch.no_grad():
        val_losses = []
        for xb, yb in dl:
            xb, yb = xb.to(device), yb.to(device)
            val_losses.append(loss_batch(model, xb, yb, loss_func))
    return val_losses


def get_preds(model, dl, device, activ=None):
    """Predictions and targets for the whole loader."""
    res = [torch.cat(o).cpu() for o in zip(*validate(model, dl, device))]
    if activ is not None:
        res[0] = activ(res[0])
    return res


if __name__ == "__main__":
    device = torch.device("cuda")
    model = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(32, 10)).to(device)
    valid_ds = TensorDataset(torch.randn(50_000, 3, 224, 224), torch.randn(50_000, 3, 224, 224))  # dense targets (segmentation-like)
    preds, targs = get_preds(model, DataLoader(valid_ds, batch_size=64), device, activ=lambda t: t.softmax(-1))
