# Fixed twin of case 02: the batch loop runs under torch.no_grad(), as the reporter did.
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
            with torch.no_grad():
                for batch in dataloader:
                    imgs, paths = batch
                    imgs = imgs.to(self.device)
                    total_logits.append(self.predictor(imgs))
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
