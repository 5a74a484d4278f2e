# Recall case 12 (sealed12): whole-slide tile inference runs the classifier on every tile batch with autograd on
# Thread: https://github.com/markowetzlab/slidl/pull/1
# Reported: GPU memory filling up during slide inference
# Confirmed cause: inference forward passes were tracked by autograd; merged PR 'Dev' adds torch.no_grad() to inference 'to stop GPU memory filling up'
# Class: per-tile inference loop without no_grad, results written into a per-slide dict
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


class TileDataset(torch.utils.data.Dataset):
    def __init__(self, tiles):
        self.tiles = tiles

    def __len__(self):
        return len(self.tiles)

    def __getitem__(self, i):
        address, image = self.tiles[i]
        return image, torch.tensor(address)


def infer_classifier(slide, tiles, trained_model, classes, batch_size=64, device="cuda"):
    trained_model.to(device)
    trained_model.eval()
    loader = DataLoader(TileDataset(tiles), batch_size=batch_size, num_workers=4)
    for inputs, addresses in loader:  # leak: ANY
        inputs = inputs.to(device)
        outputs = trained_model(inputs)
        probs = F.softmax(outputs, dim=1)
        for prob, address in zip(probs, addresses):
            slide.setdefault("tileDictionary", {})[tuple(address.tolist())] = {
                "classifierInferencePrediction": {c: prob[i].item() for i, c in enumerate(classes)}}
    return slide


def run(slides, model, classes):
    for slide in slides:
        infer_classifier(slide, slide["tiles"], model, classes)
