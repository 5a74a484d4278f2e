# Thread: https://github.com/jacobgil/pytorch-grad-cam/issues/483
# Reported: computing a Grad-CAM based loss term on every training step makes memory grow
#   continuously and never come back, "even if the object is deleted at the end of the loop".
# Confirmed cause: a new GradCAM object is built inside the loop and never closed, so the
#   forward/backward hooks it registers on target_layers (and the activations/gradients they
#   capture) stay attached to the model step after step; the maintainer (jacobgil) points to the
#   "with" clause, whose __exit__ releases the hooks, and a second user confirms it fixed the leak.
# Class: hooks registered repeatedly (per constructor call) in a loop and never removed
import torch
import torch.nn.functional as F
from pytorch_grad_cam import GradCAM
from pytorch_grad_cam.utils.model_targets import ClassifierOutputTarget


def train_one_epoch(model, loader, optimizer, target_layers, device, cam_weight=0.1):
    model.train()
    running = 0.0
    for images, labels, masks in loader:
        images = images.to(device)
        labels = labels.to(device)
        masks = masks.to(device)

        with GradCAM(model=model, target_layers=target_layers) as cam:
            targets = [ClassifierOutputTarget(int(c)) for c in labels]
            grayscale_cam = cam(input_tensor=images, targets=targets)
        cam_map = torch.from_numpy(grayscale_cam).to(device)

        optimizer.zero_grad()
        logits = model(images)
        cls_loss = F.cross_entropy(logits, labels)
        outside = (cam_map * (1.0 - masks.float())).mean()
        loss = cls_loss + cam_weight * outside * cls_loss
        loss.backward()
        optimizer.step()
        running += loss.item()
    return running / max(len(loader), 1)
