# Fixed twin of case 21: inputs are kept only when decoded, and on the CPU.
# Thread: https://github.com/muellerzr/fastinference/issues/7
# Reported: CUDA out of memory running inference on a large test set (<50,000 items,
#   EfficientNet-B3, 224x224).
# Confirmed cause: "the inputs are being stored regardless of whether fully_decoded is True or
#   False. These inputs are being stored on the GPU, and are only released from memory after
#   the inference loop is finished"; fix: store `batch[...].cpu()`, or skip them when unused.
# Class: inputs (not model outputs) collected on the accelerator over a whole loader
import torch


def get_preds(learn, dl, fully_decoded=False):
    model = learn.model.eval()
    n_inp = dl.n_inp
    inps, outs = [], []
    with torch.no_grad():
        for batch in dl:
            xb = batch[:n_inp]
            if fully_decoded:
                inps.append(tuple(x.cpu() for x in xb))
            outs.append(model(*xb).cpu())
    preds = torch.cat(outs)
    if fully_decoded:
        inputs = [torch.cat([x[i] for x in inps]) for i in range(n_inp)]
        return preds, learn.dls.decode_batch((*inputs, preds))
    return preds
