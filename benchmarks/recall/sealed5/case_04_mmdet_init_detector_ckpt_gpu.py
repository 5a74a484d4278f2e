# Recall case 04 (sealed5): init_detector loads a GPU-saved checkpoint without remapping, leaving a weight copy on cuda:0
# Thread: https://github.com/open-mmlab/mmdetection/pull/6405
# Reported: with a model placed on cuda:1, cuda:0 still held a copy of the weights (or a device error occurred)
# Confirmed cause: torch.load without map_location restores tensors onto the device they were saved from (cuda:0); merged PR always maps to cpu
# Class: torch.load of a GPU checkpoint with no map_location
import torch
import torch.nn as nn
import torchvision


def build_detector(num_classes=80):
    model = torchvision.models.detection.fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None,
                                                                 num_classes=num_classes)
    return model


def load_checkpoint(model, filename, map_location=None):
    checkpoint = torch.load(filename, map_location=map_location)
    state_dict = checkpoint.get("state_dict", checkpoint)
    model.load_state_dict(state_dict, strict=False)
    return checkpoint


def init_detector(checkpoint=None, device="cuda:0"):
    model = build_detector()
    if checkpoint is not None:
        map_loc = "cpu" if device == "cpu" else None  # leak: ANY
        checkpoint = load_checkpoint(model, checkpoint, map_location=map_loc)
        model.CLASSES = checkpoint.get("meta", {}).get("CLASSES")
    model.to(device)
    model.eval()
    return model


if __name__ == "__main__":
    det = init_detector("work_dirs/faster_rcnn/latest.pth", device="cuda:1")
    with torch.no_grad():
        out = det([torch.rand(3, 512, 512, device="cuda:1")])
    print(out[0]["boxes"].shape)
