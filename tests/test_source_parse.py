"""memlint's libcst parse: the tree libcst's own validating parse gives, and libcst's node
validation back on afterwards, whatever the parse did."""

import libcst as cst
import pytest

from memlint.static.source import parse_module

SOURCE = '''\
import torch

@torch.no_grad()
def evaluate(model, loader, *, device="cuda", **kw):
    total = 0.0
    for x, y in loader:
        out = model(x.to(device)) if x is not None else None
        total += (out - y).abs().sum().item()
    match kw:
        case {"a": [1, *rest]}:
            pass
    return lambda z=1: (yield z) or [i for i in z] or f"{total!r:>{10}}"
'''


def _validation_is_on() -> bool:
    try:
        cst.Name("")  # an empty name: libcst's validation refuses it
    except cst.CSTValidationError:
        return True
    return False


def test_the_tree_is_the_one_libcst_validates():
    tree = parse_module(SOURCE)
    assert tree.deep_equals(cst.parse_module(SOURCE))
    assert tree.code == SOURCE
    assert _validation_is_on()


def test_validation_is_back_on_after_a_syntax_error():
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def f(:\n")
    assert _validation_is_on()
