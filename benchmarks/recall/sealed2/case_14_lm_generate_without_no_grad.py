# Recall case 14 (sealed2): a language model's own generate() method decodes step by step with autograd on
# Thread: https://github.com/allenai/OLMo/pull/164
# Reported: generate() uses a bizarre amount of memory even with beam size 1: a small model loaded in
#   4 GB reaches 24 GB after 100 generated steps and OOMs a 48 GB GPU at 200 steps.
# Confirmed cause: the merged PR: generation ran without `torch.no_grad()`, so every decoding step's
#   forward (logits and the growing key/value cache) was recorded in one autograd graph that lives
#   for the whole generation; adding `torch.no_grad()` gives "vastly less memory usage".
# Class: autoregressive decoding without no_grad, the per-step graph chained through the cache
import torch
import torch.nn as nn
import torch.nn.functional as F


class Olmo(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.d_model)
        self.blocks = nn.ModuleList([config.block_cls(config) for _ in range(config.n_layers)])
        self.ln_f = nn.LayerNorm(config.d_model)

    def forward(self, input_ids, past_key_values=None, use_cache=False):
        x = self.wte(input_ids)
        new_cache = [] if use_cache else None
        for i, block in enumerate(self.blocks):
            layer_past = None if past_key_values is None else past_key_values[i]
            x, cache = block(x, layer_past=layer_past, use_cache=use_cache)
            if use_cache:
                new_cache.append(cache)
        logits = F.linear(self.ln_f(x), self.wte.weight)
        return logits, new_cache

    def generate(self, input_ids, max_steps=100, temperature=1.0, eos_token_id=None):
        self.eval()
        tokens = input_ids
        past = None
        next_input = input_ids
        for _ in range(max_steps):
            logits, past = self(next_input, past_key_values=past, use_cache=True)  # leak: ANY
            next_logits = logits[:, -1, :] / temperature
            probs = torch.softmax(next_logits, dim=-1)
            next_token = torch.argmax(probs, dim=-1, keepdim=True)
            tokens = torch.cat([tokens, next_token], dim=1)
            next_input = next_token
            if eos_token_id is not None and bool((next_token == eos_token_id).all()):
                break
        return tokens
