# Recall case 23: collate_fn builds the batch tensors directly on a module-level CUDA device
# Thread: https://github.com/Tongjilibo/bert4torch/issues/149
# Reported: the NER-CRF example fails as soon as DataLoader's num_workers is set above 0.
# Confirmed cause: `collate_fn` creates `torch.tensor(..., device=device)` with the script's
#   global `device = 'cuda'`; collate_fn runs in the worker processes, where CUDA cannot be
#   initialised (build the tensors on the CPU and move them in the loop).
# Class: CUDA in worker processes, indirectly (a module-level device name used in collate_fn)
import numpy as np
import torch
from torch.utils.data import DataLoader

maxlen = 256
batch_size = 16
categories = ["LOC", "PER", "ORG"]
categories_label2id = {k: i for i, k in enumerate(["O"] + [f"B-{c}" for c in categories] + [f"I-{c}" for c in categories])}
device = "cuda" if torch.cuda.is_available() else "cpu"


def sequence_padding(inputs, value=0):
    length = max(len(x) for x in inputs)
    return np.array([np.concatenate([x, [value] * (length - len(x))]) for x in inputs])


def make_collate_fn(tokenizer):
    def collate_fn(batch):
        batch_token_ids, batch_labels = [], []
        for d in batch:
            tokens = tokenizer.tokenize(d[0], maxlen=maxlen)
            mapping = tokenizer.rematch(d[0], tokens)
            start_mapping = {j[0]: i for i, j in enumerate(mapping) if j}
            end_mapping = {j[-1]: i for i, j in enumerate(mapping) if j}
            token_ids = tokenizer.tokens_to_ids(tokens)
            labels = np.zeros(len(token_ids))
            for start, end, label in d[1:]:
                if start in start_mapping and end in end_mapping:
                    start, end = start_mapping[start], end_mapping[end]
                    labels[start] = categories_label2id["B-" + label]
                    labels[start + 1:end + 1] = categories_label2id["I-" + label]
            batch_token_ids.append(token_ids)
            batch_labels.append(labels)
        batch_token_ids = torch.tensor(sequence_padding(batch_token_ids), dtype=torch.long, device=device)  # leak: ML204
        batch_labels = torch.tensor(sequence_padding(batch_labels), dtype=torch.long, device=device)  # leak: ML204
        return batch_token_ids, batch_labels

    return collate_fn


def build_loader(train_data, tokenizer):
    return DataLoader(train_data, batch_size=batch_size, shuffle=True, num_workers=4,
                      collate_fn=make_collate_fn(tokenizer))
