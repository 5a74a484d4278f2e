# Fixed twin of case 16: each batch is stored as `embeddings.cpu().detach().numpy()`, as the reporter did after the maintainer's advice
# Thread: https://github.com/BM-K/Sentence-Embedding-Is-All-You-Need/issues/8
# Reported: embedding about 3000 sentences in batches of 100 with the pretrained Korean sentence encoder runs out of CUDA memory partway through
# Confirmed cause: the maintainer pointed out that the list keeps each batch's embeddings as GPU tensors and advised moving them to the CPU; the reporter confirmed that storing `embeddings.cpu().detach().numpy()` fixed the out-of-memory error
# Class: generation / predict (per-batch outputs kept on the GPU)
import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

model = AutoModel.from_pretrained("BM-K/KoSimCSE-roberta-multitask").cuda()
tokenizer = AutoTokenizer.from_pretrained("BM-K/KoSimCSE-roberta-multitask")


def embed_sentences(sentences, batch_size=100):
    embeddings_list = []
    for start in range(0, len(sentences), batch_size):
        batch = sentences[start:start + batch_size]
        inputs = tokenizer(batch, padding=True, truncation=True, return_tensors="pt").to("cuda")
        embeddings, _ = model(**inputs, return_dict=False)
        embeddings_list.append(embeddings.cpu().detach().numpy())
    return embeddings_list


def build_index(sentences):
    embeddings_list = embed_sentences(sentences)
    cls = torch.cat([torch.as_tensor(e)[:, 0] for e in embeddings_list])
    return torch.nn.functional.normalize(cls, dim=-1)
