"""Issue 23's families of runtime tools left on, OOM handlers and grad-mode mistakes, where the
fact that decides lives in another module of the project: who stops CUDA memory history, what a
helper called from an OOM handler runs, which grad mode a project's context manager imposes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from memlint.config import Config
from memlint.static.runner import check_paths


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def found(root: Path, name: str, *codes: str) -> list[tuple[int, str]]:
    result = check_paths([str(root / name)], Config(select=list(codes)), use_cache=False)
    return sorted((f.line, f.code) for f in result.findings if Path(f.path).name == Path(name).name)


RECIPE = """
    import torch
    {imports}

    def train(model, loader, optimizer, profile_steps):
        for idx, batch in enumerate(loader):
            if idx == profile_steps[0]:
                torch.cuda.memory._record_memory_history()
            model(batch).sum().backward()
            optimizer.step()
            {after}
"""


def test_memory_history_stopped_by_a_helper_of_another_module_is_not_reported(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "recipes/__init__.py": "",
        "recipes/profiling.py": """
            import torch

            def stop_memory_profiling(path):
                torch.cuda.memory._dump_snapshot(path)
                torch.cuda.memory._record_memory_history(enabled=None)
        """,
        "recipes/train.py": RECIPE.format(imports="from recipes.profiling import stop_memory_profiling",
                                          after='if idx == profile_steps[1]:\n'
                                                '                stop_memory_profiling("snap.pickle")'),
    })
    assert found(tmp_path, "recipes/train.py", "ML111") == []


def test_memory_history_stopped_by_the_module_that_calls_it_is_not_reported(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "recipes/__init__.py": "",
        "recipes/train.py": RECIPE.format(imports="", after="pass"),
        "recipes/main.py": """
            import torch
            from recipes.train import train

            def main(model, loader, optimizer):
                train(model, loader, optimizer, (3, 8))
                torch.cuda.memory._record_memory_history(enabled=None)
        """,
    })
    assert found(tmp_path, "recipes/train.py", "ML111") == []


def test_memory_history_never_stopped_is_reported_whatever_unrelated_modules_do(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "recipes/__init__.py": "",
        "recipes/train.py": RECIPE.format(imports="", after="pass"),
        "recipes/other.py": """
            import torch

            def unrelated():
                torch.cuda.memory._record_memory_history(enabled=None)
        """,
    })
    assert found(tmp_path, "recipes/train.py", "ML111") == [(7, "ML111")]


@pytest.mark.parametrize("helper, expected", [
    ("(model(batch).sum() * 0).backward()", [(10, "ML106")]),
    ("print('skipping batch', len(batch))", []),
])
def test_an_oom_handler_calling_a_helper_of_another_module(tmp_path, helper, expected):
    """What the helper runs decides, not its name."""
    write(tmp_path, {
        "pyproject.toml": "",
        "trainer/__init__.py": "",
        "trainer/recovery.py": f"""
            def handle_batch(model, batch):
                {helper}
        """,
        "trainer/loop.py": """
            import torch
            from trainer.recovery import handle_batch

            def step(model, batch, placeholder):
                try:
                    model(batch).sum().backward()
                except RuntimeError as e:
                    if "out of memory" in str(e):
                        torch.cuda.empty_cache()
                        handle_batch(model, placeholder)
                    else:
                        raise
        """,
    })
    assert found(tmp_path, "trainer/loop.py", "ML106") == expected


@pytest.mark.parametrize("context, expected", [
    ("torch.inference_mode(), torch.autocast('cuda')", []),
    ("torch.autocast('cuda')", [(9, "ML102")]),
])
def test_a_context_manager_of_another_module_sets_the_grad_mode(tmp_path, context, expected):
    """``with inference_context():`` from another module turns grad off when its body yields
    under inference_mode (bark's sampling loops); an autocast-only context does not."""
    write(tmp_path, {
        "pyproject.toml": "",
        "tts/__init__.py": "",
        "tts/contexts.py": f"""
            import contextlib
            import torch

            @contextlib.contextmanager
            def inference_context():
                with {context}:
                    yield
        """,
        "tts/sample.py": """
            import torch
            from tts.contexts import inference_context

            def generate_tokens(model, x, n_steps):
                tokens = []
                with inference_context():
                    kv_cache = None
                    for n in range(n_steps):
                        logits, kv_cache = model(x, past_kv=kv_cache)
                        x = logits[:, -1:].argmax(-1)
                        tokens.append(x.item())
                return tokens
        """,
    })
    assert found(tmp_path, "tts/sample.py", "ML102") == expected


_BN_PASS = """
    import torch
    import torch.nn as nn

    def recompute_bn_statistics(loader, model, device):
        for bn in [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]:
            bn.reset_running_stats()
        model.train()
        {context}
        for images, _ in loader:
            {forward}
"""


@pytest.mark.parametrize("context, forward, expected", [
    ("pass", "model(images.to(device))", [(10, "ML201")]),  # each pass records a graph for nothing
    ("torch.set_grad_enabled(False)", "model(images.to(device))", []),
    ("pass", "model(images.to(device)).mean().backward()", []),  # backpropagated: training
    ("pass", "out = model(images.to(device))", []),  # kept: not this class (see the other classes)
])
def test_a_forward_over_the_data_run_only_for_its_side_effects(tmp_path, context, forward, expected):
    """SWA's batch-norm update pass: ``model(images)`` as a statement over the loader, in train
    mode, in a function that neither backpropagates nor steps: the graph of every pass is recorded
    for a backward that never comes (ML201). Grad off, or a backward of the output, is quiet."""
    write(tmp_path, {"bn.py": _BN_PASS.format(context=context, forward=forward)})
    assert found(tmp_path, "bn.py", "ML201") == expected


def test_a_discarded_call_named_like_a_module_is_not_a_forward_pass(tmp_path):
    """``loader.exec_module(module)`` in a loop over import specs: nothing shows a module runs
    there (no mode change, not built here), only its name: not reported. Nor is a model fed
    something the loop does not hand it."""
    write(tmp_path, {"imports.py": """
        import importlib.util

        import torch

        def load_all(specs, model, probe):
            model.train()
            for spec in specs:
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                model(probe)
        """})
    assert found(tmp_path, "imports.py", "ML201") == []
