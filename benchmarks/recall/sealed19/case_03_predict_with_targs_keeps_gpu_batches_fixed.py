# Fixed twin of case 03: convert each batch's prediction and target with to_np() inside the loop and concatenate NumPy arrays (the merged PR's change)
# Thread: https://github.com/fastai/fastai/pull/483
# Reported: learn.predict(is_test=True) / predict_with_targs on a large test set ran out of GPU memory
# Confirmed cause: predict_with_targs_ appended each batch's prediction (and target) as a CUDA tensor to a list and only called torch.cat + to_np once the whole loader was done, so the GPU held the predictions of the full data set; the merged PR (reporter confirmed it fixed the OOM) converts every batch with to_np() inside the loop and concatenates NumPy arrays
# Class: predict/inference loop keeps every batch's outputs on the GPU until the end
import numpy as np
import torch


def to_np(v):
    if isinstance(v, (list, tuple)):
        return [to_np(o) for o in v]
    return v.data.cpu().numpy()


def is_listy(x):
    return isinstance(x, (list, tuple))


def get_prediction(x):
    if is_listy(x):
        x = x[0]
    return x.data


def VV(x, device="cuda"):
    return [o.to(device) for o in x] if is_listy(x) else x.to(device)


def predict_with_targs_(m, dl):
    m.eval()
    if hasattr(m, "reset"):
        m.reset()
    res = []
    for *x, y in iter(dl):
        res.append([get_prediction(to_np(m(*VV(x)))), to_np(y)])
    return zip(*res)


def predict_with_targs(m, dl):
    preda, targa = predict_with_targs_(m, dl)
    return np.concatenate(preda), np.concatenate(targa)


def predict(m, dl):
    preda, _ = predict_with_targs_(m, dl)
    return np.concatenate(preda)
