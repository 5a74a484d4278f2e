# Recall case 02 (sealed24): classification head puts its full embeddings into the forward output dict that training_step returns to Lightning every step
# Thread: https://github.com/argilla-io/biome-text/pull/561
# Reported: training a text-classification pipeline with the PyTorch Lightning based Trainer (pytorch-lightning 1.3) had a huge memory overhead (reported in the PR description itself; no separate issue)
# Confirmed cause: the maintainers' merged fix (PR #561, "Avoid huge memory overhead when using the Trainer"): the head's forward added the token embeddings and mask (kept only for computing attributions at prediction time) to the output dict, training_step returns that dict, and Lightning stores every step's output for training_epoch_end, so one embeddings tensor per batch piles up; the fix adds them only when the head is not training
# Class: per-step output dict returned to the loop carries large tensors that are kept for the whole epoch
from typing import Any, Dict, List, Optional

import pytorch_lightning as pl
import torch
from allennlp.nn.util import get_text_field_mask
from allennlp.training.metrics import CategoricalAccuracy


class TextClassification(torch.nn.Module):
    def __init__(self, backbone, num_labels: int):
        super().__init__()
        self.backbone = backbone
        self.num_labels = num_labels
        self.pooler = torch.nn.Linear(backbone.encoder.get_output_dim(), 128)
        self._classification_layer = torch.nn.Linear(128, num_labels)
        self._loss = torch.nn.CrossEntropyLoss()
        self._accuracy = CategoricalAccuracy()

    def _encoder_and_head_forward(self, embeddings, mask):
        encoded = self.backbone.encoder(embeddings, mask=mask)
        pooled = (encoded * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)
        return self._classification_layer(torch.tanh(self.pooler(pooled)))

    def _make_forward_output(self, logits, label: Optional[torch.Tensor]) -> Dict[str, Any]:
        if label is not None:
            self._accuracy(logits, label)
            return {"loss": self._loss(logits, label.long()), "logits": logits}
        return {"logits": logits}

    def forward(self, text, label: Optional[torch.Tensor] = None) -> Dict[str, Any]:
        mask = get_text_field_mask(text)
        embeddings = self.backbone.embedder(text)
        logits = self._encoder_and_head_forward(embeddings, mask)

        output = self._make_forward_output(logits, label)

        # kept for computing the attributions of a prediction
        output["embeddings"], output["mask"] = embeddings, mask  # leak: ANY

        return output

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"accuracy": self._accuracy.get_metric(reset)}


class PipelineModel(pl.LightningModule):
    def __init__(self, head: TextClassification, lr: float = 1e-3):
        super().__init__()
        self._head = head
        self.lr = lr

    def forward(self, *args, **kwargs) -> Dict[str, torch.Tensor]:
        return self._head(*args, **kwargs)

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return self._head.get_metrics(reset)

    def training_step(self, batch, batch_idx) -> Dict:
        output = self(**batch)
        self.log("training_loss", output["loss"], on_step=True, on_epoch=False)
        for key, val in self.get_metrics().items():
            self.log("training_" + key, val, on_step=True, prog_bar=True, on_epoch=False)
        return output  # leak: ANY

    def training_epoch_end(self, outputs: List[Any]) -> None:
        for key, val in self.get_metrics(reset=True).items():
            self.log("training_" + key, val, on_step=False, on_epoch=True)

    def validation_step(self, batch, batch_idx) -> Dict:
        output = self(**batch)
        self.get_metrics()
        return output

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


def fit(backbone, train_loader, valid_loader, num_labels, epochs=5):
    model = PipelineModel(TextClassification(backbone, num_labels))
    trainer = pl.Trainer(gpus=1, max_epochs=epochs)
    trainer.fit(model, train_loader, valid_loader)
    return model
