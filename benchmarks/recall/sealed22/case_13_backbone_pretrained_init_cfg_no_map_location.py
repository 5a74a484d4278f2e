# Recall case 13 (sealed22): segmentation backbone turns a deprecated `pretrained` path into a Pretrained init_cfg without map_location
# Thread: https://github.com/open-mmlab/mmsegmentation/issues/3183
# Reported: distributed multi-GPU training takes more memory on GPU 0 than on the other GPUs when the backbone loads a pretrained checkpoint (12269 MB vs 10714 MB on two V100s)
# Confirmed cause: the reporter traced it to the backbone building init_cfg=dict(type='Pretrained', checkpoint=pretrained) with no map_location, so the weight initializer's torch.load keeps map_location=None and every rank deserializes the checkpoint onto the GPU it was saved from (cuda:0); adding map_location='cpu' to the init_cfg evened the ranks out (10692 MB vs 10702 MB)
# Class: torch.load of a CUDA checkpoint without map_location (checkpoint materialized on the GPU)
import warnings

import torch.nn as nn
from mmengine.model import BaseModule


class ResNetV1c(BaseModule):
    def __init__(self, depth=50, in_channels=3, stem_channels=64, base_channels=64,
                 num_stages=4, pretrained=None, init_cfg=None):
        super().__init__(init_cfg)
        self.depth = depth
        self.pretrained = pretrained
        assert not (init_cfg and pretrained), "init_cfg and pretrained cannot be set at the same time"
        if isinstance(pretrained, str):
            warnings.warn("DeprecationWarning: pretrained is deprecated, please use \"init_cfg\" instead")
            self.init_cfg = dict(type="Pretrained", checkpoint=pretrained)  # leak: ANY
        elif pretrained is None:
            if init_cfg is None:
                self.init_cfg = [
                    dict(type="Kaiming", layer="Conv2d"),
                    dict(type="Constant", val=1, layer=["_BatchNorm", "GroupNorm"]),
                ]
        else:
            raise TypeError("pretrained must be a str or None")

        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, stem_channels, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(stem_channels),
            nn.ReLU(inplace=True),
        )
        self.layers = nn.ModuleList(
            nn.Conv2d(base_channels * 2 ** max(i - 1, 0), base_channels * 2 ** i, 3, padding=1)
            for i in range(num_stages)
        )

    def forward(self, x):
        x = self.stem(x)
        outs = []
        for layer in self.layers:
            x = layer(x)
            outs.append(x)
        return tuple(outs)
