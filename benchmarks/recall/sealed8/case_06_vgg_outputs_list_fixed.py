# Fixed twin of case 06: outputs are computed without a graph (inference mode) before being stored
# Thread: https://github.com/pytorch/pytorch/issues/836
# Reported: "Exploding RAM with simple code" -- a loop that only stores VGG19 outputs needs >4 GB after the model is loaded
# Confirmed cause: maintainer (soumith): "you are holding on to intermediate states of the vgg graph over each forward";
#   store only the data (and apaszke: run inference-only code without building a graph); reporter thanked
# Class: predict loop appends model outputs that still carry the graph (no no_grad, no detach)
import torch
import torchvision.models as models


def extract_outputs(model: torch.nn.Module, n_images: int = 200) -> torch.Tensor:
    outputs = []
    for _ in range(n_images):
        x = torch.randn(1, 3, 224, 224)
        with torch.no_grad():
            outputs.append(model(x))
    return torch.cat(outputs)


if __name__ == "__main__":
    vgg19 = models.vgg19(weights=models.VGG19_Weights.DEFAULT)
    feats = extract_outputs(vgg19)
    torch.save(feats, "vgg19_outputs.pt")
