# Recall case 13 (sealed15): IMDL-BenCo model constructors torch.load the pretrained backbone weights with their saved CUDA location
# Thread: https://github.com/scu-zjz/IMDLBenCo/pull/93
# Reported: redundant CUDA memory usage when a model with pretrained weights is built (PR title)
# Confirmed cause: the merged PR: torch.load of the pretrained weights restored the tensors onto the saving device, so the state dict occupied GPU memory in addition to the model's own parameters; loading the weights to CPU first avoids it
# Class: `torch.load` of a CUDA-saved checkpoint without map_location
import torch
import torch.nn as nn


class SegFormerBackbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.Sequential(*[nn.Conv2d(3 if i == 0 else 256, 256, 3, 2, 1) for i in range(4)])

    def forward(self, x):
        return self.stages(x)


class IML_ViT(nn.Module):
    def __init__(self, pretrain_path=None):
        super().__init__()
        self.encoder_net = SegFormerBackbone()
        self.decoder = nn.Conv2d(256, 1, 1)
        if pretrain_path is not None:
            state = torch.load(pretrain_path)  # leak: ANY
            self.encoder_net.load_state_dict(state["model"], strict=False)

    def forward(self, image, mask=None):
        return self.decoder(self.encoder_net(image))


def build_model(pretrain_path, local_rank):
    device = torch.device("cuda", local_rank)
    model = IML_ViT(pretrain_path=pretrain_path)
    return model.to(device)


if __name__ == "__main__":
    torch.save({"model": SegFormerBackbone().cuda().state_dict()}, "/tmp/mae_pretrain.pth")
    for rank in range(torch.cuda.device_count()):
        build_model("/tmp/mae_pretrain.pth", rank)
