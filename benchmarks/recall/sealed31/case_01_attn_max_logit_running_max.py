# Thread: https://github.com/NVIDIA/Megatron-LM/issues/4699 (fixed by https://github.com/NVIDIA/Megatron-LM/pull/5067)
# Reported: with --log-max-attention-logit set and --qk-clip off, host memory climbs every iteration
#   until the training job runs out of memory.
# Confirmed cause: the max attention logit returned by the fused attention kernel is computed from
#   Q*K^T and so belongs to the autograd graph; forward folds it into self.current_max_attn_logits
#   with torch.max and no detach, and without qk_clip nothing ever resets the attribute, so each
#   batch's attention graph stays reachable from the module. The merged PR detaches the max logit
#   before accumulating it ("it is only a statistic ... and never needs gradients") and resets the
#   attribute every step on the log-only path.
# Class: tensor stored on a module every step together with its autograd graph
import torch
from torch import nn


class TEDotProductAttention(nn.Module):
    def __init__(self, config, core_attention):
        super().__init__()
        self.config = config
        self.core_attention = core_attention
        self.current_max_attn_logits = None

    def forward(self, query, key, value, attention_mask):
        if self.config.log_max_attention_logit or self.config.qk_clip:
            core_attn_out, max_logit = self.core_attention(
                query, key, value, attention_mask, return_max_logit=True
            )
            if self.current_max_attn_logits is None:
                self.current_max_attn_logits = max_logit  # leak: ANY
            else:
                self.current_max_attn_logits = torch.max(self.current_max_attn_logits, max_logit)  # leak: ANY
            return core_attn_out
        return self.core_attention(query, key, value, attention_mask)


def attention_modules(model):
    return [m for m in model.modules() if isinstance(m, TEDotProductAttention)]


def log_max_attention_logits(model, writer, iteration):
    values = []
    for module in attention_modules(model):
        if module.current_max_attn_logits is not None:
            values.append(module.current_max_attn_logits.max())
    if values:
        writer.add_scalar("max_attention_logit", torch.stack(values).max().item(), iteration)


def train(model, optimizer, data_iterator, config, writer, train_iters):
    model.train()
    for iteration in range(train_iters):
        batch = next(data_iterator)
        optimizer.zero_grad()
        loss = model(**batch)
        loss.backward()
        optimizer.step()
        if config.qk_clip:
            for module in attention_modules(model):
                module.current_max_attn_logits = None
        if config.log_max_attention_logit:
            log_max_attention_logits(model, writer, iteration)
