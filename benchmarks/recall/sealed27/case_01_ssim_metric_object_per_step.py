# Thread: https://github.com/nerfstudio-project/nerfstudio/pull/81
# Reported: GPU memory grows for the whole run when the model reports SSIM every training step
#   (the same symptom as Lightning-AI/pytorch-lightning#5733, which the pull request links).
# Confirmed cause: the pull request that fixed it: "Using object based SSIM in non-pytorch-lightning
#   model causes a memory leak ... Switching to functional SSIM solves issue." (The SSIM object
#   stores preds and target of every call for its epoch-level compute, as the torchmetrics
#   maintainers say in Lightning-AI/torchmetrics#1094; nothing here ever resets it.)
# Class: stateful metric object called every training step, never reset, keeps every batch's
#   images in its list state
import torch
from torch import nn
from torchmetrics import PeakSignalNoiseRatio, StructuralSimilarityIndexMeasure


class NerfactoLikeModel(nn.Module):
    def __init__(self, field: nn.Module):
        super().__init__()
        self.field = field
        self.rgb_loss = nn.MSELoss()
        self.psnr = PeakSignalNoiseRatio(data_range=1.0)
        self.ssim = StructuralSimilarityIndexMeasure(data_range=1.0)

    def forward(self, ray_bundle):
        return {"rgb": self.field(ray_bundle)}

    def get_metrics_dict(self, outputs, batch):
        image = batch["image"].permute(0, 3, 1, 2)
        rgb = outputs["rgb"].permute(0, 3, 1, 2)
        metrics = {}
        metrics["psnr"] = self.psnr(rgb, image)
        metrics["ssim"] = self.ssim(rgb, image)  # leak: ANY
        return metrics

    def get_loss_dict(self, outputs, batch):
        return {"rgb_loss": self.rgb_loss(outputs["rgb"], batch["image"])}


def train(model: NerfactoLikeModel, datamanager, optimizer, num_iterations: int):
    model.train()
    for step in range(num_iterations):
        ray_bundle, batch = datamanager.next_train(step)
        outputs = model(ray_bundle)
        loss_dict = model.get_loss_dict(outputs, batch)
        metrics_dict = model.get_metrics_dict(outputs, batch)
        loss = sum(loss_dict.values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(step, loss.item(), float(metrics_dict["psnr"]), float(metrics_dict["ssim"]))
