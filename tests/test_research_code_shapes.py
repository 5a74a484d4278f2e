"""Shapes found false in the research-code benchmark (benchmarks/research_code.py, triaged in
benchmarks/triage/research_code.md), fixed as classes; each beside the near miss that is
still reported. (Grad-mode shapes live in test_grad_mode.py, ML201's in
test_inference_evidence.py.)"""

from __future__ import annotations

import textwrap

from memlint.static.source_check import check_source

KV_CACHE = """
import torch
from torch import nn

class MultiHeadAttention(nn.Module):
    def __init__(self, d_out):
        super().__init__()
        self.W_key = nn.Linear(d_out, d_out)
        self.register_buffer("cache_k", None, persistent=False)

    def forward(self, x, use_cache=False):
        keys_new = self.W_key(x)
        if use_cache:
            if self.cache_k is None:
                self.cache_k = keys_new
            else:
                self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)
            keys = self.cache_k
        else:
            keys = keys_new
        return keys
{reset}
"""


def found(source: str, *codes: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in check_source(textwrap.dedent(source), "model.py", codes) if f.code in codes]


def test_a_kv_cache_emptied_by_a_reset_method_is_bounded():
    # LLMs-from-scratch's KV cache: grown by forward(use_cache=True) during generation, emptied
    # by reset_cache() before each generation
    reset = "\n    def reset_cache(self):\n        self.cache_k = None\n"
    assert found(KV_CACHE.format(reset=reset), "ML101") == []
    # never emptied: every call's keys (and graph) are kept
    assert found(KV_CACHE.format(reset=""), "ML101") == [(17, "ML101")]


ROUND_TRIP = """
import torch
import torchvision
resnet = torchvision.models.resnet18(weights=None){move}
torch.save(resnet.state_dict(), "params.ckpt")
resnet.load_state_dict(torch.load("params.ckpt"))
"""


def test_a_cpu_only_file_reloading_what_it_saved_to_the_same_path():
    # yunjey/pytorch-tutorial's basics: save and load on the CPU, to the same file
    assert found(ROUND_TRIP.format(move=""), "ML203") == []
    # the model went to the GPU before it was saved: it comes back on that GPU, this process's own,
    # a second copy only while load_state_dict copies it: not said ...
    assert found(ROUND_TRIP.format(move=".cuda()"), "ML203") == []
    # ... unless a name keeps it beside the model afterwards: the hint (info), no error
    held = ROUND_TRIP.format(move=".cuda()").replace(
        'resnet.load_state_dict(torch.load("params.ckpt"))', 'state = torch.load("params.ckpt")\nresnet.load_state_dict(state)')
    hinted = [(f.line, f.severity) for f in check_source(textwrap.dedent(held), "model.py", ("ML203",))]
    assert hinted == [(6, "info")]
