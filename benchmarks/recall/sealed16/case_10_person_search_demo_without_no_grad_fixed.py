# Fixed twin of case 10: wrap the demo's inference in torch.no_grad()
# Thread: https://github.com/serend1p1ty/SeqNet/pull/14
# Reported: CUDA out of memory while running inference of the model (GPU memory screenshots before/after in the PR)
# Confirmed cause: the merged PR: during inference the model was not wrapped in torch.no_grad(), so the computation graph was built (and kept through the stored outputs); wrapping it fixed the OOM
# Class: evaluation/inference without no_grad, outputs kept in a results list
import glob

import torch
import torch.nn as nn
from PIL import Image
from torchvision.transforms.functional import to_tensor


class SeqNetStub(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3), nn.ReLU(), nn.Conv2d(64, dim, 3, 2, 1), nn.ReLU())
        self.box_head = nn.Linear(dim, 4)
        self.emb_head = nn.Linear(dim, dim)

    def forward(self, images, targets=None):
        outputs = []
        for img in images:
            feat = self.backbone(img[None]).mean((2, 3))
            outputs.append({"boxes": self.box_head(feat), "embeddings": nn.functional.normalize(self.emb_head(feat))})
        return outputs


def main(ckpt, query_path, gallery_dir, device="cuda"):
    model = SeqNetStub()
    model.load_state_dict(torch.load(ckpt, map_location="cpu")["model"])
    model.to(device).eval()

    with torch.no_grad():
        query_img = to_tensor(Image.open(query_path).convert("RGB")).to(device)
        query_target = [{"boxes": torch.tensor([[0.0, 0.0, 100.0, 300.0]], device=device)}]
        query_feat = model([query_img], query_target)[0]["embeddings"]

        results = []
        for gallery_path in sorted(glob.glob(gallery_dir + "/*.jpg")):
            gallery_img = to_tensor(Image.open(gallery_path).convert("RGB")).to(device)
            gallery_output = model([gallery_img])[0]
            similarity = gallery_output["embeddings"].mm(query_feat.t()).squeeze()
            results.append((gallery_path, gallery_output["boxes"], similarity))
    return results


if __name__ == "__main__":
    main("seqnet_epoch19.pth", "demo_imgs/query.jpg", "demo_imgs/gallery")
