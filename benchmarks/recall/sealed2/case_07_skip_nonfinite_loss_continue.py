# Recall case 07 (sealed2): the loop skips a zero or non-finite loss with `continue`, before backward
# Thread: https://github.com/zylo117/Yet-Another-EfficientDet-Pytorch/issues/544
# Reported: training can run out of GPU memory after a batch whose loss is 0 or inf.
# Confirmed cause: on `continue` the skipped batch's graph (loss, cls_loss, reg_loss) is never
#   backpropagated or freed and stays alive through the next batch's forward, so two graphs share the
#   GPU; the maintainer agreed ("You are right about the oom risks") and proposed running
#   `loss.backward()` and `optimizer.zero_grad()` before `continue`, which the reporter accepted.
# Class: a step skipped before backward, leaving the forward graph alive into the next iteration
import numpy as np
import torch
from tqdm import tqdm


def train(model, training_generator, optimizer, scheduler, params, opt, writer):
    step = 0
    num_iter_per_epoch = len(training_generator)
    model.train()
    for epoch in range(opt.num_epochs):
        epoch_loss = []
        progress_bar = tqdm(training_generator)
        for iter, data in enumerate(progress_bar):
            imgs = data["img"]
            annot = data["annot"]
            if params.num_gpus == 1:
                imgs = imgs.cuda()
                annot = annot.cuda()
            optimizer.zero_grad()
            cls_loss, reg_loss = model(imgs, annot, obj_list=params.obj_list)
            cls_loss = cls_loss.mean()
            reg_loss = reg_loss.mean()
            loss = cls_loss + reg_loss
            if loss == 0 or not torch.isfinite(loss):
                continue  # leak: ANY
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            epoch_loss.append(float(loss))
            progress_bar.set_description(
                f"Step: {step}. Epoch: {epoch}/{opt.num_epochs}. Iteration: {iter + 1}/{num_iter_per_epoch}. "
                f"Cls loss: {cls_loss.item():.5f}. Reg loss: {reg_loss.item():.5f}. Total loss: {loss.item():.5f}")
            writer.add_scalars("Loss", {"train": float(loss)}, step)
            step += 1
        scheduler.step(np.mean(epoch_loss))
        torch.save(model.state_dict(), f"{opt.saved_path}/efficientdet-d{opt.compound_coef}_{epoch}.pth")
