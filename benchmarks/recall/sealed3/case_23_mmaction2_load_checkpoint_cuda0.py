# Recall case 23 (sealed3): every DDP rank loads the pretrained checkpoint with no map_location, landing on cuda:0
# Thread: https://github.com/open-mmlab/mmaction2/pull/2254
# Reported: when the backbone loads its pretrained weights, the checkpoint is loaded onto cuda:0 for all CUDA devices
# Confirmed cause: _load_checkpoint(..., map_location=None) deserialises the saved CUDA tensors onto the device they were
#   saved from, so each rank puts a full copy on GPU 0; merged PR passes map_location='cpu'
# Class: torch.load onto the GPU (all ranks onto the same device)
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision


def _load_checkpoint(filename, map_location=None):
    if filename.startswith(("http://", "https://")):
        return torch.hub.load_state_dict_from_url(filename, map_location=map_location)
    return torch.load(filename, map_location=map_location)


class ResNet3dSlowOnly(nn.Module):
    def __init__(self, pretrained=None):
        super().__init__()
        self.pretrained = pretrained
        self.backbone = torchvision.models.video.r3d_18(weights=None)

    def init_weights(self):
        if self.pretrained:
            state_dict_r2d = _load_checkpoint(self.pretrained)  # leak: ANY
            if "state_dict" in state_dict_r2d:
                state_dict_r2d = state_dict_r2d["state_dict"]
            own = self.backbone.state_dict()
            for name, param in state_dict_r2d.items():
                name = name.replace("backbone.", "")
                if name in own and own[name].shape == param.shape:
                    own[name].copy_(param)
            self.backbone.load_state_dict(own)

    def forward(self, x):
        return self.backbone(x)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = ResNet3dSlowOnly(pretrained="work_dirs/slowonly_k400_pretrain/latest.pth")
    model.init_weights()
    model = nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for step in range(1000):
        clips = torch.randn(8, 3, 16, 112, 112, device="cuda")
        loss = model(clips).logsumexp(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


if __name__ == "__main__":
    main()
