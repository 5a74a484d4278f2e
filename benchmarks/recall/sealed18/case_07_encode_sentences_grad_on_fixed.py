# Fixed twin of case 07: the model is put in eval mode and the encoding loop runs under torch.no_grad()
# Thread: https://github.com/ThilinaRajapakse/simpletransformers/pull/834
# Reported: RepresentationModel.encode_sentences runs the language model batch after batch with autograd on, wasting GPU memory and compute while encoding
# Confirmed cause: the encoding forward passes run outside torch.no_grad (and without eval()), so each batch builds an autograd graph; the reviewer asked for eval() and torch.no_grad() around the loop to save memory, the maintainer agreed ("You are right!") and the PR was merged
# Class: inference without no_grad
import numpy as np
import torch


def batch_iterable(iterable, batch_size=1):
    for ndx in range(0, len(iterable), batch_size):
        yield iterable[ndx:ndx + batch_size]


class RepresentationModel:
    def __init__(self, model, tokenizer, device):
        self.model = model
        self.tokenizer = tokenizer
        self.device = device

    def _tokenize(self, text_list):
        encoded = self.tokenizer.batch_encode_plus(text_list, padding=True, return_tensors="pt")
        return encoded["input_ids"]

    def encode_sentences(self, text_list, batch_size=32):
        self.model.to(self.device)
        self.model.eval()
        batches = batch_iterable(text_list, batch_size=batch_size)
        embeddings = []
        with torch.no_grad():
            for batch in batches:
                input_ids = self._tokenize(batch).to(self.device)
                token_vectors = self.model(input_ids=input_ids)[0]
                batch_embeddings = token_vectors.mean(dim=1).detach().cpu().numpy()
                embeddings.append(batch_embeddings)
        return np.concatenate(embeddings)
