# Recall case 13 (sealed13): forward hooks on UNet blocks store every block output (fp32 copy, with graph under enable_grad) on the module; outputs are only freed when the sketch-guidance step consumes them
# Thread: https://github.com/Mikubill/sketch2img/issues/7
# Reported: without apply_anti_gradient() (no sketch, or past the guidance window) hook_unet keeps recording feature information, which leads to OOM on GPUs with limited memory (issue #7, fix in PR #8)
# Confirmed cause: the hooks registered by hook_unet setattr(module, "output", ...) on every UNet call and only apply_anti_gradient() deletes them; reporter's PR #8 clears the recorded features when they are not consumed (PR not merged: weaker confirmation)
# Class: forward hook storing what it sees on the module, never released on the paths that do not consume it
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F


def hook_unet(unet: nn.Module):
    feature_blocks = []

    def hook(module, inputs, output):
        if isinstance(output, tuple):
            output = output[0]
        setattr(module, "output", output.float())  # leak: ANY

    for block in list(unet.down_blocks) + [unet.mid_block] + list(unet.up_blocks):
        block.register_forward_hook(hook)
        feature_blocks.append(block)
    return feature_blocks


class TinyUNet(nn.Module):
    def __init__(self, ch=320):
        super().__init__()
        self.down_blocks = nn.ModuleList([nn.Conv2d(4 if i == 0 else ch, ch, 3, padding=1) for i in range(3)])
        self.mid_block = nn.Conv2d(ch, ch, 3, padding=1)
        self.up_blocks = nn.ModuleList([nn.Conv2d(ch, ch, 3, padding=1) for _ in range(3)])
        self.out = nn.Conv2d(ch, 4, 3, padding=1)

    def forward(self, x, t):
        for b in self.down_blocks:
            x = F.silu(b(x))
        x = F.silu(self.mid_block(x))
        for b in self.up_blocks:
            x = F.silu(b(x))
        return self.out(x)


class SketchGuidedPipeline:
    def __init__(self, unet, lgp_model):
        self.unet = unet.half().cuda()
        self.lgp_model = lgp_model.cuda()
        self.feature_blocks = hook_unet(self.unet)

    def apply_anti_gradient(self, latents_prev, latents, target, beta=1.6):
        if target is None:
            return latents
        feats = []
        for block in self.feature_blocks:
            feats.append(F.interpolate(block.output, size=latents.shape[2], mode="bilinear"))
            del block.output
        pred = self.lgp_model(torch.cat(feats, dim=1))
        loss = F.mse_loss(pred, target)
        grad = -torch.autograd.grad(loss, latents_prev)[0]
        return latents + beta * grad

    @torch.no_grad()
    def __call__(self, latents, sketch_image=None, steps=50):
        step_stop = 0.5 * steps
        for i in range(steps):
            latent_in = latents.detach().requires_grad_(True)
            ctx = torch.enable_grad() if i <= step_stop else contextlib.nullcontext()
            with ctx:
                noise_pred = self.unet(latent_in.half(), i).float()
            latents = latents - 0.02 * noise_pred
            with ctx:
                if i <= step_stop:
                    latents = self.apply_anti_gradient(latent_in, latents, sketch_image)
        return latents


if __name__ == "__main__":
    pipe = SketchGuidedPipeline(TinyUNet(), nn.Conv2d(320 * 7, 4, 1))
    for _ in range(20):
        out = pipe(torch.randn(2, 4, 96, 96, device="cuda"), sketch_image=None)
    print(out.shape)
