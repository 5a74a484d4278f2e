# Thread: https://github.com/CogStack/MedCAT/pull/135
# Reported: running MetaCAT over documents (the meta_cat pipe calling predict) used far more GPU/CPU
#   memory than the model needs, climbing while the batches were processed; the PR shows the memory
#   curve before and after the change.
# Confirmed cause: the merged PR ("CAT-12 stop creating computation graphs in the eval loop"): predict()
#   put the model in eval() but ran every batch with autograd on, so each forward built a graph; the fix
#   wraps the batch loop in torch.no_grad() (follow-up PR #136 did the same for the test loop of
#   train_model and for eval_model).
# Class: inference/evaluation forward passes with grad enabled (eval() without no_grad)
import math

import numpy as np
import torch
from scipy.special import softmax


def create_batch_piped_data(data, start_ind, end_ind, device, pad_id):
    rows = data[start_ind:end_ind]
    max_seq_len = max(len(r[0]) for r in data)
    x = [r[0][:max_seq_len] + [pad_id] * max(0, max_seq_len - len(r[0])) for r in rows]
    cpos = [r[1] for r in rows]
    y = None
    if len(data[0]) == 3:
        y = torch.tensor([r[2] for r in rows], dtype=torch.long).to(device)
    return torch.tensor(x, dtype=torch.long).to(device), torch.tensor(cpos, dtype=torch.long).to(device), y


def predict(model, data, config):
    pad_id = config.model['padding_idx']
    batch_size = config.general['batch_size_eval']
    device = config.general['device']
    ignore_cpos = config.model['ignore_cpos']

    model.eval()
    model.to(device)

    num_batches = math.ceil(len(data) / batch_size)
    all_logits = []
    for i in range(num_batches):
        x, cpos, _ = create_batch_piped_data(data, i * batch_size, (i + 1) * batch_size, device=device, pad_id=pad_id)
        logits = model(x, cpos, ignore_cpos=ignore_cpos)  # leak: ANY
        all_logits.append(logits.detach().cpu().numpy())

    predictions, confidences = [], []
    if all_logits:
        logits = np.concatenate(all_logits, axis=0)
        predictions = np.argmax(logits, axis=1)
        confidences = np.max(softmax(logits, axis=1), axis=1)
    return predictions, confidences


class MetaCAT:
    def __init__(self, model, config, tokenizer):
        self.model = model
        self.config = config
        self.tokenizer = tokenizer

    def pipe(self, stream, batch_size_chars=1_000_000):
        for docs in stream:
            data = [self.prepare(ent) for doc in docs for ent in doc.ents]
            predictions, confidences = predict(self.model, data, self.config)
            yield docs, predictions, confidences

    def prepare(self, ent):
        ids = self.tokenizer(ent.text)
        return [ids, len(ids) // 2]
