# Recall case 48: functools.lru_cache(maxsize=None) on a Dataset's __getitem__
# Thread: https://github.com/MoonshotAI/Kimi-Audio/issues/117
# Reported: memory keeps growing in fine-tuning as the training data grows.
# Confirmed cause: the reporter: `@lru_cache(maxsize=None)` on `__getitem__` in
#   finetune_codes/datasets.py caches every tokenised sample (tensors) for the life of the
#   process, and in each DataLoader worker separately, so memory grows with the data seen.
# Class: an unbounded cache over tensors built per item
import json
from functools import lru_cache

import torch
from torch.utils.data import Dataset


class LazySupervisedDataset(Dataset):
    def __init__(self, raw_data_path, tokenizer, max_len):
        with open(raw_data_path) as f:
            self.raw_data = [json.loads(line) for line in f]
        self.tokenizer = tokenizer
        self.max_len = max_len

    def __len__(self):
        return len(self.raw_data)

    @lru_cache(maxsize=None)  # leak: ANY
    def __getitem__(self, i):
        conversation = self.raw_data[i]["conversation"]
        text = "".join(turn["content"] for turn in conversation)
        ids = self.tokenizer.encode(text)[: self.max_len]
        input_ids = torch.tensor(ids, dtype=torch.long)
        labels = input_ids.clone()
        labels[: len(self.tokenizer.encode(conversation[0]["content"]))] = -100
        return {"input_ids": input_ids, "labels": labels, "attention_mask": torch.ones_like(input_ids)}
