# Thread: https://github.com/microsoft/Biodiversity/issues/609
# Reported: batch species classification with the DeepFaune New England (timm) classifier makes
#   RAM or GPU memory grow without bound: past 300 GB before half of ~3000 images were done.
# Confirmed cause: the reporter, after changing the code: the forward pass in
#   batch_image_classification ran with gradient tracking on, so every batch's logits appended to
#   total_logits kept its autograd graph alive; wrapping the loop in torch.no_grad() kept memory
#   flat (the follow-up pull requests #624 and #662 apply the same fix).
# Class: batch inference with autograd on, outputs collected in a list across the whole dataset
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from tqdm import tqdm


class TIMMBaseClassifier:
    def __init__(self, predictor: torch.nn.Module, class_names: dict, device="cuda"):
        self.predictor = predictor.to(device)
        self.predictor.eval()
        self.class_names = class_names
        self.device = device

    def batch_image_classification(self, dataset, batch_size=32, num_workers=4):
        dataloader = DataLoader(dataset, batch_size=batch_size, shuffle=False, num_workers=num_workers)
        total_logits = []
        total_paths = []
        with tqdm(total=len(dataloader)) as pbar:
            for batch in dataloader:
                imgs, paths = batch
                imgs = imgs.to(self.device)
                total_logits.append(self.predictor(imgs))  # leak: ANY
                total_paths.append(paths)
                pbar.update(1)

        total_logits = torch.cat(total_logits)
        total_paths = [p for batch_paths in total_paths for p in batch_paths]
        probs = F.softmax(total_logits, dim=1)
        confs, preds = probs.max(dim=1)
        results = []
        for path, pred, conf in zip(total_paths, preds.cpu().tolist(), confs.cpu().tolist()):
            results.append({"img_id": path, "prediction": self.class_names[pred], "confidence": conf})
        return results
