# Recall case 40: a new torchmetrics metric instance for every evaluated pipeline, never reset
# Thread: https://github.com/Lightning-AI/torchmetrics/issues/1949
# Reported: creating many instances of the same metric (one per dataset/pipeline to evaluate)
#   and using each once leaks GPU memory until a CUDA OOM (BinaryAUROC, BinaryAveragePrecision,
#   BinaryROC, BinaryPrecisionRecallCurve).
# Confirmed cause: one-shot instances that are never `reset()` keep their list states alive;
#   the maintainers documented (torchmetrics#2006) "always try to reuse the same instance of a
#   metric instead of initializing a new" one, and call `reset` when done.
# Class: a metric object constructed per iteration
import torch
from torchmetrics.classification import BinaryAUROC


def score_pipelines(pipelines, loader, device="cuda"):
    results = {}
    for name, pipeline in pipelines.items():
        auroc = BinaryAUROC().to(device)  # leak: ANY
        with torch.no_grad():
            for images, target in loader:
                preds = pipeline(images.to(device)).sigmoid().squeeze(1)
                auroc.update(preds, target.to(device))
        results[name] = auroc.compute().item()
    return results
