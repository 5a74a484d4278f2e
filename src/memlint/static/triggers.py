"""Which rules could find anything in a file, read from its text alone (no parse, no libcst).

A rule whose catalogue ``triggers`` do not occur in the text, or a PyTorch-only rule in a
file that imports neither torch nor a PyTorch framework, has nothing to find there: such
files are never parsed by libcst (Python's own parser still checks their syntax).
"""

from __future__ import annotations

import re
from typing import Iterable

from memlint.catalogue import BY_CODE

# Packages whose import means "this file is PyTorch code".
TORCH_PACKAGES = frozenset({
    "torch", "lightning", "pytorch_lightning", "lightning_fabric", "transformers", "accelerate",
    "ignite", "skorch", "torchtnt", "timm", "fastai", "deepspeed", "torchvision", "torchaudio",
    "torchtext", "speechbrain", "torchmetrics", "peft", "trl", "diffusers", "composer",
    "torch_geometric", "dgl", "detectron2", "mmengine", "fairseq", "allennlp", "pyro", "gpytorch",
})

# The package a line imports from: "import torch" -> torch, "from lightning.pytorch import ..."
# -> lightning. (One short pattern: compiling an alternation of every package costs more than
# most files' scan.)
_IMPORTED_PACKAGE = re.compile(r"^[ \t]*(?:import|from)[ \t]+(\w+)", re.MULTILINE)


def uses_torch_text(source: str) -> bool:
    """Does the text import PyTorch (or a PyTorch framework)? A module that calls ``torch.``
    names after a star import (``from utils import *``) may have torch from there."""
    if any(match[1] in TORCH_PACKAGES for match in _IMPORTED_PACKAGE.finditer(source)):
        return True
    return "import *" in source and "torch." in source


def codes_that_could_match(source: str, codes: Iterable[str]) -> list[str]:
    """The codes among ``codes`` whose rules could report something in ``source``."""
    torch_file = None
    chosen = []
    for code in codes:
        info = BY_CODE[code]
        if info.torch_only:
            if torch_file is None:
                torch_file = uses_torch_text(source)
            if not torch_file:
                continue
        if info.triggers and not any(trigger in source for trigger in info.triggers):
            continue
        chosen.append(code)
    return chosen
