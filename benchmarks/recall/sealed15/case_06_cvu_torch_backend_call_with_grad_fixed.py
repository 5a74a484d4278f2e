# Fixed twin of case 06: call model.eval() after loading and run the backend's forward under torch.no_grad()
# Thread: https://github.com/BlueMirrors/cvu/pull/34
# Reported: torch memory and stability problems when running the Torch backend over video frames
# Confirmed cause: the merged fix (reviewed 'LGTM') sets the model to eval and runs the forward pass of the inference call under torch.no_grad(); before it, every per-frame call kept autograd state and ran BatchNorm/Dropout in training mode
# Class: inference wrapper (__call__) forward with grad enabled, model never put in eval mode
import numpy as np
import torch
import torch.nn as nn


class TinyYolo(nn.Module):
    def __init__(self, num_classes=80):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.SiLU(), nn.Conv2d(32, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.SiLU())
        self.head = nn.Conv2d(64, 5 + num_classes, 1)

    def forward(self, x):
        return self.head(self.features(x)).flatten(2).transpose(1, 2)


class Torch:
    def __init__(self, weight, device="cuda"):
        self._device = torch.device(device)
        self._model = TinyYolo()
        self._model.load_state_dict(weight)
        self._model.to(self._device)
        self._model.eval()

    def __call__(self, inputs: np.ndarray) -> np.ndarray:
        inputs = torch.from_numpy(inputs).to(self._device).float().div(255.0)
        with torch.no_grad():
            outputs = self._model(inputs)
        return outputs.detach().cpu().numpy()


def detect_video(backend, frames):
    boxes = []
    for frame in frames:
        preds = backend(frame[None].transpose(0, 3, 1, 2).copy())
        boxes.append(preds[0, preds[0, :, 4] > 0.5, :4])
    return boxes


if __name__ == "__main__":
    weights = TinyYolo().state_dict()
    backend = Torch(weights)
    video = (np.random.rand(1000, 640, 640, 3) * 255).astype(np.uint8)
    detect_video(backend, video)
