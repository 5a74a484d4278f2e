# Fixed twin of case 05: PretrainedInit loads the checkpoint onto the CPU by default
# Thread: https://github.com/open-mmlab/mmengine/pull/665
# Reported: OOM on GPU 0 during DDP start-up when initialising from a checkpoint saved with cuda:0 tensors
# Confirmed cause: all ranks restored the checkpoint to cuda:0 before copying into their model; maintainers' merged PR makes PretrainedInit default to map_location='cpu'
# Class: torch.load onto the GPU in every rank of a distributed job
import os
import torch
import torch.distributed as dist
import torch.nn as nn


def load_checkpoint(module, filename, map_location=None, prefix=None):
    ckpt = torch.load(filename, map_location=map_location)
    state = ckpt.get("state_dict", ckpt)
    if prefix:
        state = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
    module.load_state_dict(state, strict=False)
    return ckpt


class PretrainedInit:
    def __init__(self, checkpoint, prefix=None, map_location="cpu"):
        self.checkpoint = checkpoint
        self.prefix = prefix
        self.map_location = map_location

    def __call__(self, module):
        load_checkpoint(module, self.checkpoint, map_location=self.map_location, prefix=self.prefix)


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(*[nn.Linear(2048, 2048) for _ in range(24)])

    def forward(self, x):
        return self.layers(x)


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = Backbone()
    PretrainedInit("pretrained/backbone_cuda0.pth", prefix="backbone.")(model)
    model = nn.parallel.DistributedDataParallel(model.cuda(rank), device_ids=[rank])
    print(rank, torch.cuda.memory_allocated(0))


if __name__ == "__main__":
    main()
