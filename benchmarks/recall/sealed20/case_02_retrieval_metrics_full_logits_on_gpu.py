# Recall case 02 (sealed20): validation gathers every batch's CLIP features on the GPU and builds and argsorts the full N x N logit matrix there
# Thread: https://github.com/mlfoundations/open_clip/pull/26
# Reported: with a validation set of ~20k examples, evaluation needs several extra GB of GPU memory on top of training (a 20,000 x 20,000 similarity matrix and its argsort), which runs out of memory when training already fills the GPU
# Confirmed cause: get_metrics multiplies the concatenated validation features into the full image-to-text logit matrix on the GPU and ranks it there with torch.argsort (an int64 matrix of the same size); the merged PR moves the logits to the CPU before ranking (.detach().cpu()) and keeps the ground truth on the CPU; the author reports it fixed the OOM, the maintainer merged it
# Class: evaluation/predict output kept on the GPU: whole-dataset prediction matrix materialised and sorted on the device
import numpy as np
import torch
import torch.nn as nn


def evaluate(model, dataloader, epoch, gpu):
    model.eval()
    loss_img = nn.CrossEntropyLoss().cuda(gpu)
    loss_txt = nn.CrossEntropyLoss().cuda(gpu)
    cumulative_loss = 0.0
    num_elements = 0.0
    all_image_features, all_text_features = [], []
    with torch.no_grad():
        for images, texts in dataloader:
            images = images.cuda(gpu, non_blocking=True)
            texts = texts.cuda(gpu, non_blocking=True)
            image_features, text_features, logit_scale = model(images, texts)
            all_image_features.append(image_features)
            all_text_features.append(text_features)
            logit_scale = logit_scale.mean()
            logits_per_image = logit_scale * image_features @ text_features.t()
            logits_per_text = logits_per_image.t()
            ground_truth = torch.arange(len(images)).long().cuda(gpu, non_blocking=True)
            total_loss = (loss_img(logits_per_image, ground_truth) + loss_txt(logits_per_text, ground_truth)) / 2
            batch_size = len(images)
            cumulative_loss += total_loss * batch_size
            num_elements += batch_size

        metrics = get_metrics(torch.cat(all_image_features), torch.cat(all_text_features))
        loss = cumulative_loss / num_elements
        metrics.update({"val_loss": loss.item(), "epoch": epoch, "num_elements": num_elements})
    return metrics


def get_metrics(image_features, text_features):
    metrics = {}
    logits_per_image = image_features @ text_features.t()  # leak: ANY
    logits_per_text = logits_per_image.t()

    logits = {"image_to_text": logits_per_image, "text_to_image": logits_per_text}
    ground_truth = torch.arange(len(text_features)).view(-1, 1).to(logits_per_image.device)

    for name, logit in logits.items():
        ranking = torch.argsort(logit, descending=True)  # leak: ANY
        preds = torch.where(ranking == ground_truth)[1]
        preds = preds.detach().cpu().numpy()
        metrics[f"{name}_mean_rank"] = preds.mean() + 1
        metrics[f"{name}_median_rank"] = np.floor(np.median(preds)) + 1
        for k in [1, 5, 10]:
            metrics[f"{name}_R@{k}"] = np.mean(preds < k)
    return metrics
