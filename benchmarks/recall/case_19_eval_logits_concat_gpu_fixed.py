# Fixed twin of case 19: each batch's logits and labels go to the CPU before they are kept.
# Thread: https://github.com/huggingface/transformers/issues/7232
# Reported: `trainer.evaluate()` / `predict()` on 469,530 sentences with BERT crashes with CUDA
#   out of memory.
# Confirmed cause: "the tensors are concatenated while still on the GPU device, and only
#   converted to CPU at the end"; sgugger's fix (#7767) moves predictions off the device every
#   `eval_accumulation_steps`.
# Class: model outputs collected on the accelerator over a whole loader
import numpy as np
import torch


def prediction_loop(model, dataloader, device):
    model.eval()
    preds = None
    label_ids = None
    eval_losses = []
    for inputs in dataloader:
        inputs = {k: v.to(device) for k, v in inputs.items()}
        with torch.no_grad():
            outputs = model(**inputs)
            step_eval_loss, logits = outputs[:2]
            eval_losses.append(step_eval_loss.mean().item())
        logits = logits.cpu()
        preds = logits if preds is None else torch.cat((preds, logits), dim=0)
        if inputs.get("labels") is not None:
            labels = inputs["labels"].cpu()
            label_ids = labels if label_ids is None else torch.cat((label_ids, labels), dim=0)
    preds = preds.numpy()
    label_ids = label_ids.numpy() if label_ids is not None else None
    return preds, label_ids, float(np.mean(eval_losses))
