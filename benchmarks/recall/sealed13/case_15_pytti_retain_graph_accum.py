# Recall case 15 (sealed13): an image-guidance step calls backward(retain_graph=True) on every gradient-accumulation micro-batch, including the last one, so each step's graph outlives the step
# Thread: https://github.com/pytti-tools/pytti-core/pull/108
# Reported: "backward not retain graph for last grad acc step": extra GPU memory held by the retained CLIP/augmentation graph in ImageGuide.train
# Confirmed cause: total_loss_mb.backward(retain_graph=True) keeps saved activations after the final micro-batch, which nothing backprops through again; the PR keeps retain_graph only for the earlier micro-batches (PR open: contributor-side confirmation, weaker)
# Class: retain_graph=True on every backward inside a training loop
import torch
import torch.nn as nn
import torch.nn.functional as F


class ImageRep(nn.Module):
    def __init__(self, size=512):
        super().__init__()
        self.pixels = nn.Parameter(torch.rand(1, 3, size, size))

    def decode(self):
        return self.pixels.clamp(0, 1)


class ImageGuide:
    def __init__(self, image_rep, embedder, prompts, lr=0.02):
        self.image_rep = image_rep
        self.embedder = embedder
        self.prompts = prompts
        self.optimizer = torch.optim.Adam(image_rep.parameters(), lr=lr)

    def train(self, i, gradient_accumulation_steps=4, cutn=32):
        self.optimizer.zero_grad()
        image = self.image_rep.decode()
        image_embeds = self.embedder(F.interpolate(image, size=224))
        total_loss = 0.0
        for mb_i in range(gradient_accumulation_steps):
            cuts = torch.cat([F.interpolate(image[..., s:s + 256, s:s + 256], size=224)
                              for s in torch.randint(0, 256, (cutn,)).tolist()])
            cut_embeds = self.embedder(cuts)
            prompt_losses = [(1 - F.cosine_similarity(cut_embeds, p[None], dim=-1)).mean() for p in self.prompts]
            total_loss_mb = sum(prompt_losses) + 0.1 * (image_embeds.norm() - 1).abs()
            total_loss_mb /= gradient_accumulation_steps
            total_loss_mb.backward(retain_graph=True)  # leak: ANY
            total_loss += total_loss_mb.item()
        self.optimizer.step()
        return total_loss


if __name__ == "__main__":
    embedder = nn.Sequential(nn.Conv2d(3, 256, 16, 16), nn.GELU(), nn.Flatten(), nn.LazyLinear(512)).cuda()
    guide = ImageGuide(ImageRep().cuda(), embedder, [torch.randn(512, device="cuda") for _ in range(3)])
    for i in range(1000):
        loss = guide.train(i)
    print(loss)
