# Recall case 11 (sealed18): the few-shot classifier wrapper deep-copies the sentence-transformer body's state dict on construction and keeps it for the model's lifetime
# Thread: https://github.com/huggingface/setfit/issues/199
# Reported: `SetFitModel` carries a second full copy of the sentence-transformer weights (`model_original_state`) that is never read again, which makes every model object needlessly heavy
# Confirmed cause: `__init__` stores `copy.deepcopy(self.model_body.state_dict())`; `from_pretrained` has already moved the body to its target device (the GPU when available), so the copy duplicates all body weights there and lives as long as the model; a maintainer agreed it is unneeded and the merged PR #201 removed it
# Class: object lifetimes (deep copy of the model weights kept as an attribute)
import copy
from typing import Optional

import torch
from sentence_transformers import SentenceTransformer
from sklearn.linear_model import LogisticRegression
from torch import nn


class SetFitModel:
    def __init__(
        self,
        model_body: Optional[nn.Module] = None,
        model_head=None,
        multi_target_strategy: Optional[str] = None,
        l2_weight: float = 1e-2,
        normalize_embeddings: bool = False,
    ) -> None:
        self.model_body = model_body
        self.model_head = model_head
        self.multi_target_strategy = multi_target_strategy
        self.l2_weight = l2_weight
        self.model_original_state = copy.deepcopy(self.model_body.state_dict())  # leak: ANY
        self.normalize_embeddings = normalize_embeddings

    @classmethod
    def from_pretrained(cls, model_id: str, cache_dir: Optional[str] = None, **kwargs) -> "SetFitModel":
        model_body = SentenceTransformer(model_id, cache_folder=cache_dir)
        target_device = model_body._target_device
        model_body.to(target_device)
        model_head = LogisticRegression()
        return cls(model_body=model_body, model_head=model_head, **kwargs)

    def fit(self, x_train, y_train):
        embeddings = self.model_body.encode(x_train, normalize_embeddings=self.normalize_embeddings)
        self.model_head.fit(embeddings, y_train)

    def predict(self, x_test):
        embeddings = self.model_body.encode(x_test, normalize_embeddings=self.normalize_embeddings)
        return self.model_head.predict(embeddings)


def train_one(model_id, train_texts, train_labels, test_texts):
    model = SetFitModel.from_pretrained(model_id)
    model.fit(train_texts, train_labels)
    with torch.no_grad():
        return model.predict(test_texts)
