# Thread: https://github.com/LostOxygen/poison_froggo/issues/1
# Reported: while create_perturbed_dataset runs, CUDA memory keeps growing with every
#   forward_step call until the GPU is full.
# Confirmed cause: the perturbed image returned by forward_step (img - lr * grad) still
#   carries its autograd history and is fed back in as the next step's input, so each step
#   chains onto the previous one; the reporter fixed it by detaching the image at the start of
#   forward_step ("Change the code as above can solve the problem"), and the maintainer agreed
#   the missing .detach() is the cause.
# Class: carried state (optimised input) never detached across iterations
import copy

import torch
import torch.nn as nn


def forward_step(model: nn.Sequential, img: torch.Tensor, target_image: torch.Tensor,
                 lr: float, target_logits: torch.Tensor) -> torch.Tensor:
    img.detach_()
    img.requires_grad = True
    logits = model(img)
    loss = torch.norm(logits - target_logits)
    model.zero_grad()
    loss.backward()
    img_grad = img.grad.data
    perturbed_img = img - lr * img_grad
    return perturbed_img


def create_perturbed_dataset(model, base_images, target_image, learning_rate, iters=1000):
    target_feat_rep = model(target_image).detach()
    poisons = []
    for base in base_images:
        old_image = base.clone()
        for _ in range(iters):
            new_image = forward_step(model, old_image, target_image, learning_rate,
                                     copy.deepcopy(target_feat_rep))
            old_image = new_image
        poisons.append(old_image.detach().cpu())
    return poisons
