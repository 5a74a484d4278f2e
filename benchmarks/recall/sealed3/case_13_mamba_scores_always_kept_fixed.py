# Fixed twin of case 13: the decode loop keeps every step's full-vocabulary logits even when output_scores=False
# Thread: https://github.com/state-spaces/mamba/pull/610
# Reported: significant memory blow-up during long generations
# Confirmed cause: decode() appended the per-step scores unconditionally; the PR stores them only when output_scores
#   is requested; the repository owner (tridao) acknowledged it ("Thanks Aviv!") - PR still shown open (weaker)
# Class: generation loop retaining per-token logits/scores that are never returned
from collections import namedtuple

import torch
import torch.nn as nn
from transformers import AutoTokenizer

GreedySearchDecoderOnlyOutput = namedtuple("GreedySearchDecoderOnlyOutput", ["sequences", "scores"])


class InferenceParams:
    def __init__(self, max_seqlen, max_batch_size):
        self.max_seqlen = max_seqlen
        self.max_batch_size = max_batch_size
        self.seqlen_offset = 0
        self.key_value_memory_dict = {}


def sample(logits, top_k=1, temperature=1.0):
    if top_k == 1:
        return logits.argmax(dim=-1)
    probs = torch.softmax(logits / temperature, dim=-1)
    return torch.multinomial(probs, 1).squeeze(-1)


@torch.inference_mode()
def decode(input_ids, model, max_length, top_k=1, temperature=1.0, eos_token_id=None, output_scores=False):
    batch_size, seqlen_og = input_ids.shape
    inference_params = InferenceParams(max_seqlen=max_length, max_batch_size=batch_size)

    def get_logits(input_ids, inference_params):
        if inference_params.seqlen_offset > 0:
            input_ids = input_ids[:, -1:]
        logits = model(input_ids, inference_params=inference_params)
        return logits[:, -1].float()

    scores, sequences = [], [input_ids]
    sequences_cat = input_ids
    while True:
        logits = get_logits(sequences[-1], inference_params)
        if output_scores:
            scores.append(logits)
        inference_params.seqlen_offset += sequences[-1].shape[1]
        sampled_tokens = sample(logits, top_k=top_k, temperature=temperature)
        sequences.append(sampled_tokens.unsqueeze(1))
        sequences_cat = torch.cat([sequences_cat, sequences[-1]], dim=1)
        if eos_token_id is not None and (sampled_tokens == eos_token_id).all():
            break
        if sequences_cat.shape[1] >= max_length:
            break
    return GreedySearchDecoderOnlyOutput(sequences=sequences_cat, scores=tuple(scores) if output_scores else None)


class ToyRecurrentLM(nn.Module):
    def __init__(self, vocab=50280, d=1024):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.rnn = nn.GRU(d, d, batch_first=True)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, input_ids, inference_params=None):
        state = inference_params.key_value_memory_dict.get("h") if inference_params else None
        out, h = self.rnn(self.emb(input_ids), state)
        if inference_params is not None:
            inference_params.key_value_memory_dict["h"] = h
        return self.lm_head(out)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tokenizer = AutoTokenizer.from_pretrained("EleutherAI/gpt-neox-20b")
    model = ToyRecurrentLM().to(device).eval()
    prompt = tokenizer(["Once upon a time"] * 64, return_tensors="pt").input_ids.to(device)
    out = decode(prompt, model, max_length=16384, top_k=5)
    print(out.sequences.shape)
