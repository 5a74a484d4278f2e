"""The holder search (memlint.dynamic.heap) and the graph signal (memlint.dynamic.graph), in-process.

Framework objects are stood in for by classes of the standard library (SimpleNamespace): the
search treats them as library code, as it would Lightning's or Hugging Face's.
"""

from __future__ import annotations

import types

import pytest

torch = pytest.importorskip("torch")

from memlint.dynamic import heap  # noqa: E402
from memlint.dynamic.graph import GraphTracker, graph_sinks, sample_graph, saved_storages  # noqa: E402
from memlint.dynamic.usercode import UserFiles  # noqa: E402


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.step_losses = []


class Callback:
    def __init__(self) -> None:
        self.buffer = []


class KeepLogits:
    seen = []


def make_keeper():
    outputs = []

    def keep(value) -> None:
        outputs.append(value)

    return keep


def _search(**variables) -> heap.HolderSearch:
    roots = heap.namespace_roots(variables, "variable", "main", __file__, 1)
    return heap.HolderSearch(roots, UserFiles())


def _loss() -> torch.Tensor:
    return torch.randn(3, requires_grad=True).sum() * 1


def test_a_module_only_a_framework_holds_is_named_by_its_class():
    model = Model()
    model.step_losses.append(_loss())
    trainer = types.SimpleNamespace(_strategy=types.SimpleNamespace(_model=model))
    targets = [model.step_losses[0]]
    del model
    [found] = _search(trainer=trainer).find(targets)
    # trainer._strategy._model.step_losses is reachable, but through private attributes
    assert (found.name, found.kind, found.container, found.items) == ("Model.step_losses", "instance", "list", 1)


def test_a_public_path_from_a_variable_wins():
    callback = Callback()
    callback.buffer.append(_loss())
    trainer = types.SimpleNamespace(callbacks=[object(), callback])
    targets = [callback.buffer[0]]
    del callback
    [found] = _search(trainer=trainer).find(targets)
    assert (found.name, found.kind, found.function) == ("trainer.callbacks[1].buffer", "variable", "main")


def test_class_attribute_closure_cell_and_variable():
    KeepLogits.seen.append(_loss())
    keep = make_keeper()
    keep(_loss())
    hooks = types.SimpleNamespace(_forward_hooks={0: keep})
    total = _loss()
    targets = [KeepLogits.seen[-1], keep.__closure__[0].cell_contents[0], total]
    del keep
    found = _search(total=total, hooks=hooks).find(targets)
    assert (found[0].name, found[0].kind) == ("KeepLogits.seen", "class_attribute")
    assert (found[1].name, found[1].kind, found[1].function) == ("outputs", "closure", "keep")
    assert (found[2].name, found[2].container) == ("total", "Tensor")
    KeepLogits.seen.clear()


def test_module_children_and_dict_slots_read_as_attributes_without_trailing_indices():
    model = Model()
    model.linear.cache = {}
    for step in range(3):
        model.linear.cache[step] = _loss()
    metrics = {"loss": [_loss()]}
    targets = [model.linear.cache[1], metrics["loss"][0]]
    found = _search(model=model, metrics=metrics).find(targets)
    assert (found[0].name, found[0].container, found[0].items) == ("model.linear.cache", "dict", 3)
    assert found[1].name == "metrics['loss']"


def test_what_nothing_holds_has_no_holder():
    [found] = _search().find([_loss()])
    assert found is None


def test_graph_signal_counts_what_any_holder_keeps_and_names_saved_activations():
    tracker = GraphTracker("cpu", UserFiles())
    hidden = torch.nn.Linear(8, 16)
    kept = types.SimpleNamespace(outputs=[])  # a framework object nobody's variable names
    with tracker:
        counts = []
        for step in range(1, 4):
            x = torch.randn(2, 8)
            activation = torch.tanh(hidden(x))  # saved by TanhBackward: its storage outlives the tensor object
            kept.outputs.append(activation.sum(dim=1))
            del activation
            counts.append(sample_graph(tracker)[0])
            tracker.step = step + 1
    assert counts[2] - counts[1] == counts[1] - counts[0] > 0  # the same nodes per step, held by kept
    sinks = graph_sinks(tracker, born_after=0)
    assert [id(tensor) for _, _, tensor in sinks] == [id(output) for output in kept.outputs]
    tanh_results = {key for key, survivor in tracker.live.items() if survivor.nbytes == 2 * 16 * 4}
    assert len(saved_storages(kept.outputs[0], tanh_results)) == 1


def test_a_global_of_another_module_of_the_user_is_named_with_its_module(tmp_path, monkeypatch):
    (tmp_path / "run_metrics.py").write_text("HISTORY = []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import run_metrics

    run_metrics.HISTORY.append(_loss())
    [found] = _search().find([run_metrics.HISTORY[0]])
    assert (found.name, found.kind, found.container) == ("run_metrics.HISTORY", "global", "list")


def test_optimizer_state_is_named_in_one_short_line_and_no_library_line_is_blamed():
    from memlint.dynamic.recorder import holder_json

    weight = torch.nn.Parameter(torch.randn(51, 1))
    optimizer = torch.optim.LBFGS([weight], history_size=5, max_iter=3)

    def closure():
        optimizer.zero_grad()
        loss = (weight * torch.linspace(0, 1, 51).unsqueeze(1)).pow(2).sum()
        loss.backward()
        return loss

    for _ in range(3):
        optimizer.step(closure)
    history = optimizer.state[weight]["old_dirs"]
    [found] = _search(optimizer=optimizer).find([history[0]])
    assert found.name == "optimizer.state[<Parameter 51×1>]['old_dirs']"  # never the tensor's values
    assert (found.container, found.items) == ("list", len(history))
    # LBFGS's own `state["func_evals"] += 1` stores no tensor, and is not the user's line anyway
    assert holder_json(found, UserFiles())["line"] is None
