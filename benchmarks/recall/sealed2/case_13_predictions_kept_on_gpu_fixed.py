# Fixed twin of case 13: every batch's outputs and labels move to the CPU right after inference (the PR).
# Thread: https://github.com/Yasas1994/Jaeger/pull/30
# Reported: GPU out of memory during inference on large inputs; GPU memory grows with the dataset size.
# Confirmed cause: the merged PR: prediction (and evaluation: logits and labels) accumulated all
#   batch outputs as GPU tensors and copied them to the CPU only at the end; the fix moves each batch
#   to the CPU right after inference, bounding GPU memory to about one batch.
# Class: model outputs (and labels) collected on the accelerator over a whole loader, under no_grad
import numpy as np
import torch


@torch.no_grad()
def predict(model, loader, device="cuda"):
    model.eval()
    probs, ids = [], []
    for batch in loader:
        x = batch["encoded"].to(device, non_blocking=True)
        logits = model(x)
        probs.append(torch.softmax(logits, dim=-1).cpu())
        ids.extend(batch["contig_id"])
    return ids, torch.cat(probs).numpy()


@torch.no_grad()
def evaluate(model, loader, device="cuda"):
    model.eval()
    all_logits, all_labels = [], []
    for batch in loader:
        x = batch["encoded"].to(device, non_blocking=True)
        y = batch["label"].to(device, non_blocking=True)
        all_logits.append(model(x).cpu())
        all_labels.append(y.cpu())
    logits = torch.cat(all_logits)
    labels = torch.cat(all_labels)
    accuracy = (logits.argmax(-1) == labels).float().mean().item()
    return accuracy, logits.numpy(), labels.numpy()


def write_predictions(ids, probs, class_names, out_path):
    with open(out_path, "w") as fh:
        fh.write("contig_id\t" + "\t".join(class_names) + "\tprediction\n")
        for contig, p in zip(ids, probs):
            fh.write(contig + "\t" + "\t".join(f"{v:.4f}" for v in p) + "\t" + class_names[int(np.argmax(p))] + "\n")
