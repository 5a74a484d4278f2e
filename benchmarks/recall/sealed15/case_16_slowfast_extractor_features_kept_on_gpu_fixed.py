# Fixed twin of case 16: move each batch's (gathered) features to the CPU before appending
# Thread: https://github.com/tridivb/slowfast_feature_extractor/pull/3
# Reported: GPU memory use grows with video length when extracting features with several GPUs
# Confirmed cause: the merged PR 'Dump multi-gpu features to cpu': the per-batch features gathered from the GPUs were appended to the feature list as CUDA tensors; moving each batch's features to the CPU before storing them fixes it
# Class: per-batch inference outputs accumulated on the GPU
import numpy as np
import torch
import torch.nn as nn


class SlowFastHead(nn.Module):
    def __init__(self, dim=2304, num_classes=400):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv3d(3, 64, (1, 7, 7), (1, 2, 2), (0, 3, 3)), nn.ReLU(), nn.AdaptiveAvgPool3d(1), nn.Flatten(), nn.Linear(64, dim))
        self.fc = nn.Linear(dim, num_classes)

    def forward(self, frames):
        feat = self.stem(frames)
        return self.fc(feat), feat


def all_gather(tensors):
    return tensors


@torch.no_grad()
def perform_inference(test_loader, model, num_gpus=2):
    model.eval()
    feat_arr = []
    for inputs in test_loader:
        inputs = inputs.cuda(non_blocking=True)
        preds, feat = model(inputs)
        if num_gpus > 1:
            preds, feat = all_gather([preds, feat])
        feat_arr.append(feat.cpu())
    return np.concatenate([f.cpu().numpy() for f in feat_arr], axis=0)


if __name__ == "__main__":
    net = SlowFastHead().cuda()
    clips = (torch.randn(8, 3, 32, 256, 256) for _ in range(5000))
    np.save("/tmp/video_feats.npy", perform_inference(clips, net))
