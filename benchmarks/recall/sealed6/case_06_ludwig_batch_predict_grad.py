# Recall case 06 (sealed6): Ludwig-style Predictor.batch_predict accumulates per-batch predictions computed with autograd on
# Thread: https://github.com/ludwig-ai/ludwig/pull/1739
# Reported: high memory pressure during batch prediction on the torch backend
# Confirmed cause: batch_predict ran model.predict() without torch.no_grad(), so every accumulated prediction kept its autograd graph until the end of the pass; merged PR adds torch.no_grad() around batch prediction
# Class: predict loop keeps outputs of forward passes made with gradient tracking enabled
from collections import defaultdict

import numpy as np
import torch
from torch import nn


class ECD(nn.Module):
    def __init__(self, vocab=20000, dim=256, n_classes=5):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim)
        self.combiner = nn.Sequential(nn.Linear(dim, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU())
        self.decoder = nn.Linear(1024, n_classes)

    def forward(self, inputs):
        return {"label": {"logits": self.decoder(self.combiner(self.emb(inputs["text"])))}}

    def predict(self, inputs):
        outputs = self(inputs)
        logits = outputs["label"]["logits"]
        return {"label": {"predictions": logits.argmax(-1), "probabilities": logits.softmax(-1), "logits": logits}}


class Batcher:
    def __init__(self, dataset, batch_size):
        self.dataset, self.batch_size, self.index = dataset, batch_size, 0

    def last_batch(self):
        return self.index >= len(self.dataset["text"])

    def next_batch(self):
        sl = slice(self.index, self.index + self.batch_size)
        self.index += self.batch_size
        return {k: v[sl] for k, v in self.dataset.items()}


class Predictor:
    def __init__(self, model, batch_size=128, device="cuda"):
        self.model = model.to(device)
        self._batch_size = batch_size
        self.device = device

    def batch_predict(self, dataset):
        prev_model_training_mode = self.model.training
        self.model.eval()
        batcher = Batcher(dataset, self._batch_size)
        predictions = defaultdict(list)
        while not batcher.last_batch():
            batch = batcher.next_batch()
            inputs = {"text": torch.from_numpy(batch["text"]).to(self.device)}
            preds = self.model.predict(inputs)  # leak: ANY
            self._accumulate_preds(preds, predictions)
        preds = self._concat_preds(predictions)
        self.model.train(prev_model_training_mode)
        return preds

    @staticmethod
    def _accumulate_preds(preds, predictions):
        for of_name, of_preds in preds.items():
            for pred_name, pred_values in of_preds.items():
                predictions[f"{of_name}_{pred_name}"].append(pred_values)

    @staticmethod
    def _concat_preds(predictions):
        return {key: torch.cat(pred_value_list, dim=0) for key, pred_value_list in predictions.items()}


if __name__ == "__main__":
    data = {"text": np.random.randint(0, 20000, size=(200000, 64))}
    predictor = Predictor(ECD(), batch_size=512)
    out = predictor.batch_predict(data)
    print({k: v.shape for k, v in out.items()})
