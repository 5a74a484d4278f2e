"""What a value holds, as the engine tells it: parts of containers built in view, container
contents, return values of this module's functions (defined above or below their callers),
callables and modules that are not tensors. Probed with ``probe(expr)`` calls: each records
the graph state where it stands and, at its function's exit, whether the value is decided
graph-carrying."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.static.engine import FileChecker
from memlint.static.facts import Graph, places_in
from memlint.static.rule import Rule

NONE, UNKNOWN, CARRIES = Graph.NONE, Graph.UNKNOWN, Graph.CARRIES


class Probe(Rule):
    code = "ML000"
    name = "probe"
    severity = "info"
    summary = "test probe"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self.seen: list[tuple[Graph, bool | None]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, cst.Name) and node.func.value == "probe"):
            return
        facts = self.facts
        value = facts.graph_value(node.args[0].value)
        index = len(self.seen)
        self.seen.append((value.state, None))
        self.at_function_exit(lambda: self.seen.__setitem__(index, (value.state, facts.is_graph_carrying(value))))


def probe(source: str) -> list[tuple[Graph, bool]]:
    source = textwrap.dedent(source)
    checker = FileChecker("t.py", source, [Probe])
    checker.run(cst.parse_module(source))
    return checker.rules[0].seen


def carrying(source: str) -> list[bool]:
    return [decided for _, decided in probe(source)]


def test_a_dict_built_in_view_is_read_key_by_key():
    assert probe("""
        import torch
        def step(model, x, sample):
            loss = model(x).mean()
            log = {"loss": loss, "sample_size": sample.size(0), "n": 3}
            probe(log["loss"])
            probe(log["sample_size"])
            probe(log.get("n", 0))
            probe(log.get("missing", loss))
            probe(log)
            log["loss"] = loss.item()
            probe(log["loss"])
    """) == [(CARRIES, True), (NONE, False), (NONE, False), (CARRIES, True), (CARRIES, True), (NONE, False)]


def test_a_dict_of_unknown_layout_is_read_as_a_whole():
    assert carrying("""
        import torch
        def step(model, x, key, logs):
            log = {}
            log[key] = model(x)
            probe(log["n"])
            logs.update(loss=model(x))
            probe(logs["anything"])
    """) == [True, False]


def test_containers_hold_what_was_put_in():
    assert carrying("""
        import torch
        def train(model, loader):
            losses, by_name = [], {}
            for x in loader:
                losses.append(model(x).mean())
                by_name.setdefault("loss", []).append(model(x).sum())
            probe(torch.stack(losses).mean())
            probe(by_name["loss"])
            kept = []
            for x in loader:
                kept.append(model(x).mean().item())
            probe(sum(kept))
    """) == [True, True, False]


def test_loop_targets_over_items_enumerate_and_zip_get_their_own_part():
    assert probe("""
        import torch
        def step(model, x, names):
            stats = {"ce": model(x).mean(), "aux": model(x).std()}
            for name, value in stats.items():
                probe(name)
                probe(value)
            for i, loss in enumerate(stats.values()):
                probe(i)
                probe(loss)
            for label, loss in zip(names, stats.values()):
                probe(label)
                probe(loss)
    """) == [(NONE, False), (CARRIES, True)] * 2 + [(UNKNOWN, False), (CARRIES, True)]
    # (an element of the parameter ``names`` is what the caller passes: unknown, no graph here)


def test_return_values_of_functions_defined_above_or_below():
    assert carrying("""
        import torch
        def above(model, x):
            return model(x).sum()

        def train(model, loader, optimizer):
            for x in loader:
                probe(above(model, x))
                probe(below(model, x, optimizer))
                probe(plain(x))
                loss, size = pair(model, x)
                probe(loss)
                probe(size)

        def below(model, x, optimizer):
            loss = model.compute(x)
            loss.backward()
            optimizer.step()
            return loss

        def plain(x):
            return x.size(0)

        def pair(model, x):
            return model(x).mean(), x.shape[0]
    """) == [True, True, False, True, False]


def test_methods_through_self_and_instances_of_this_module():
    assert carrying("""
        import torch
        class Trainer:
            def train(self, loader):
                for inputs in loader:
                    probe(self.training_step(inputs))
                    probe(self.evaluate_step(inputs))
                    probe(self.helper.score(inputs))

            def training_step(self, inputs):
                loss = self.compute_loss(inputs)
                loss.backward()
                return loss

            def evaluate_step(self, inputs):
                loss = self.compute_loss(inputs)
                return loss.item()

        class Scorer:
            def score(self, inputs):
                return len(inputs)
    """) == [True, False, False]


def test_a_returned_parameter_carries_what_the_caller_passed():
    assert carrying("""
        import torch
        def to_device(t, device):
            return t.to(device)

        def train(model, loader, device):
            for x in loader:
                probe(to_device(model(x), device))
                probe(to_device(x, device))
    """) == [True, False]


def test_a_module_of_this_file_returns_what_its_forward_returns():
    assert carrying("""
        import torch
        from torch import nn

        class LabelSmoothedCrossEntropy(nn.Module):
            def forward(self, model, sample):
                net_output = model(**sample["net_input"])
                loss = net_output.logsumexp(-1).sum()
                sample_size = sample["target"].size(0)
                return loss, sample_size, {"loss": loss.data, "sample_size": sample_size}

        def train(model, loader):
            criterion = LabelSmoothedCrossEntropy()
            for sample in loader:
                loss, sample_size, logging_output = criterion(model, sample)
                probe(loss)
                probe(sample_size)
                probe(logging_output["sample_size"])
    """) == [True, False, False]


def test_callables_and_modules_are_not_tensors():
    assert carrying("""
        import torch
        from models import Net
        def fold(loader):
            clf = Net().to("cuda")
            probe(clf)
            for x, y in loader:
                loss = (clf(x) - y).pow(2).mean()
                loss.backward()
            probe(clf)
            net = Net()
            opt = torch.optim.SGD(net.parameters(), lr=0.1)
            probe(net)
    """) == [False, False, False]


def test_a_dict_field_of_an_output_object_needs_evidence():
    assert probe("""
        from ultralytics import YOLO
        def bench(weights, loader):
            model = YOLO(weights)
            for batch in loader:
                results = model(batch)
                probe(results[0].speed["inference"])
                probe(results[0])
    """) == [(UNKNOWN, False), (CARRIES, True)]


@pytest.mark.parametrize("expression, places", [
    ("sum(losses)", {"sum", "losses"}),
    ("history[-1]", {"history"} - {"history"}),
    ("torch.stack(h).mean()", {"torch.stack", "torch", "h"}),
    ('totals["loss"] / n', {"totals['loss']", "n"}),
    ("losses[i]", {"losses"}),
    ("self.history[0]", set()),
])
def test_places_read_whole(expression, places):
    assert places_in(cst.parse_expression(expression)) == places


def test_a_method_run_once_per_step_is_known_from_its_callers():
    source = textwrap.dedent("""
        import torch
        class Agent:
            def act(self, obs):
                return self.policy(obs)
            def unused(self, obs):
                return self.policy(obs)
            def run(self, env, num_steps):
                obs = env.reset()
                for step in range(num_steps):
                    obs = env.step(self.act(obs))
    """)
    checker = FileChecker("t.py", source, [])
    checker.run(cst.parse_module(source))
    facts = checker.facts
    scopes = {scope.name: scope for scope in checker._alive if getattr(scope, "name", None) in ("act", "unused")}
    assert facts.runs_per_step(scopes["act"]) and not facts.runs_per_step(scopes["unused"])


def test_max_and_min_of_numbers_are_numbers():
    from memlint.static.source_check import check_source
    source = """
import numpy as np
import torch
def train(model, train_data, optimizer, criterion, bptt):
    i = 0
    while i < train_data.size(0) - 2:
        seq_len = max(5, int(np.random.normal(bptt, 5)))
        data, targets = get_batch(train_data, i, seq_len=seq_len)
        optimizer.zero_grad()
        loss = criterion(model(data), targets)
        loss.backward()
        optimizer.step()
        i += seq_len
"""
    assert check_source(source, "example.py", ["ML102"]) == []
    assert [state for state, _ in probe("""
        import torch
        def f(model, x, n):
            probe(max(5, int(n)))
            probe(min(model(x), model(-x)))
        """)] == [NONE, CARRIES]
