"""The engine's scope facts, probed with a throwaway rule: every ``probe(expr)`` call in
the source records what the facts say at that point."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.static.engine import FileChecker
from memlint.static.facts import Graph
from memlint.static.rule import Rule


class Probe(Rule):
    code = "ML000"
    name = "probe"
    severity = "info"
    summary = "test probe"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self.seen: list[dict] = []

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, cst.Name) and node.func.value == "probe"):
            return
        facts = self.facts
        arg = node.args[0].value if node.args else None
        record = {
            "no_grad": facts.in_no_grad,
            "grad_mode": facts.grad_mode.name,
            "graph": facts.graph_value(arg).state if arg is not None else None,
            "in_loop": facts.loop is not None,
            "outlives": facts.outlives_iteration(arg) if arg is not None and facts.loop else None,
            "qualified": facts.qualified_name(arg) if arg is not None else None,
            "function": facts.function.name,
            "module": facts.is_module_expr(arg) if arg is not None else None,
        }
        value = facts.graph_value(arg) if arg is not None else None
        self.seen.append(record)
        if value is not None:
            self.at_function_exit(lambda: record.__setitem__("carrying", facts.is_graph_carrying(value)))


def probe(source: str) -> list[dict]:
    source = textwrap.dedent(source)
    checker = FileChecker("t.py", source, [Probe])
    checker.run(cst.parse_module(source))
    return checker.rules[0].seen


def test_import_aliases_resolve():
    seen = probe("""
        import torch as t
        from torch import nn
        import torch.nn.functional as F
        from torch.utils.data import DataLoader as DL
        probe(t.no_grad)
        probe(nn.Linear)
        probe(F.cross_entropy)
        probe(DL)
        probe(torch.load)
    """)
    assert [s["qualified"] for s in seen] == [
        "torch.no_grad", "torch.nn.Linear", "torch.nn.functional.cross_entropy",
        "torch.utils.data.DataLoader", "torch.load",
    ]


@pytest.mark.parametrize("header, expected", [
    ("with torch.no_grad():", True),
    ("with torch.inference_mode():", True),
    ("with torch.set_grad_enabled(False):", True),
    ("with torch.set_grad_enabled(True):", False),
    ("with torch.inference_mode(False):", False),
    ("with open('f') as fh:", False),
])
def test_no_grad_contexts(header, expected):
    seen = probe(f"""
        import torch
        def f(x):
            {header}
                probe(x)
    """)
    assert seen[0]["no_grad"] is expected


def test_no_grad_decorators_with_and_without_parentheses_and_enable_grad_inside():
    seen = probe("""
        import torch
        @torch.no_grad()
        def a(x):
            probe(x)
        @torch.inference_mode
        def b(x):
            probe(x)
            with torch.enable_grad():
                probe(x)
        def c(x):
            probe(x)
    """)
    assert [s["no_grad"] for s in seen] == [True, True, False, False]


def test_nested_function_does_not_inherit_the_lexical_no_grad_of_its_definition():
    seen = probe("""
        import torch
        def outer(x):
            with torch.no_grad():
                def inner(y):
                    probe(y)
                probe(x)
    """)
    assert [s["no_grad"] for s in seen] == [False, True]


def test_lightning_eval_hooks_run_under_no_grad():
    seen = probe("""
        import lightning as L
        class M(L.LightningModule):
            def validation_step(self, batch, i):
                probe(batch)
            def training_step(self, batch, i):
                probe(batch)
    """)
    assert [s["no_grad"] for s in seen] == [True, False]


def test_graph_values():
    seen = probe("""
        import torch
        from torch import nn
        import torch.nn.functional as F
        def train(model, loader, crit):
            head = nn.Linear(2, 2)
            for x, y in loader:
                out = model(x)
                loss = crit(out, y)
                probe(out)
                probe(loss)
                probe(loss.item())
                probe(loss.detach())
                probe(float(loss))
                probe(out.argmax(1))
                probe(out == y)
                probe(out.mean() * 2)
                probe(F.mse_loss(x, y))
                probe(head(x))
                probe(torch.zeros(3))
                probe(x)
    """)
    states = [s["graph"] for s in seen]
    C, N, U = Graph.CARRIES, Graph.NONE, Graph.UNKNOWN
    # crit is a parameter memlint cannot read: what it returns is unknown until it is
    # backpropagated (it could as well return a number)
    assert states == [C, U, N, N, N, N, N, C, C, C, N, N]


def test_backward_evidence_decides_unknown_values():
    seen = probe("""
        import torch
        def train(trainer, batch):
            loss = trainer.compute(batch)
            probe(loss)
            loss.backward()
            other = trainer.compute(batch)
            probe(other)
    """)
    assert seen[0]["graph"] is Graph.UNKNOWN
    assert seen[0]["carrying"] is True
    assert seen[1]["carrying"] is False


def test_loops_and_names_that_outlive_an_iteration():
    seen = probe("""
        import torch
        def f(loader):
            total = 0
            for x in loader:
                fresh = []
                probe(total)
                probe(fresh)
                probe(x)
            probe(total)
    """)
    assert [(s["in_loop"], s["outlives"]) for s in seen] == [(True, True), (True, False), (True, False), (False, None)]


def test_module_level_code_is_a_function_named_module():
    seen = probe("""
        import torch
        probe(1)
    """)
    assert seen[0]["function"] == "<module>"


def test_inputs_of_a_backpropagated_loss_are_not_graph_carrying():
    seen = probe("""
        import torch
        class Lit:
            def training_step(self, batch, batch_idx):
                outputs = self.model(**batch)
                loss = outputs.loss
                probe(batch)
                probe(outputs)
                loss.backward()
    """)
    assert seen[0]["carrying"] is False
    assert seen[1]["carrying"] is True


def test_autograd_grad_without_create_graph_carries_no_graph():
    seen = probe("""
        import torch
        def jacobian(model, x):
            y = model(x)
            probe(torch.autograd.grad(y.sum(), x)[0])
            probe(torch.autograd.grad(y.sum(), x, create_graph=True)[0])
    """)
    assert [s["graph"] for s in seen] == [Graph.NONE, Graph.CARRIES]


def test_grad_switch_statement_and_variable_contexts():
    seen = probe("""
        import torch
        from contextlib import nullcontext
        def f(x, flag):
            probe(x)
            ctx = torch.no_grad
            with ctx():
                probe(x)
            with nullcontext() if flag else torch.inference_mode():
                probe(x)
            with torch.set_grad_enabled(flag):
                probe(x)
            torch.set_grad_enabled(False)
            probe(x)
            torch.set_grad_enabled(True)
            probe(x)
    """)
    assert [s["no_grad"] for s in seen] == [False, True, True, True, True, False]


@pytest.mark.parametrize("iterable, expected", [
    ("train_loader", True), ("self.trainer.val_dataloaders", True), ("range(num_epochs)", True),
    ("tqdm(dl)", True), ("enumerate(trainLoader)", True), ("range(self.pretraining_tp)", False),
    ("pixel_values", False), ("self.layers", False), ("zip(outputs, targets)", False),
])
def test_data_loops_are_recognised_by_whole_words(iterable, expected):
    from memlint.static.facts import iterates_data

    assert iterates_data(cst.parse_expression(iterable)) is expected


# ----- grad mode: one fact, whatever set it (issue 16) --------------------------------------------
@pytest.mark.parametrize("region", [
    "with ctx:",  # nullcontext() or autocast, chosen at import time
    "with torch.cuda.amp.autocast():",
    "with torch.autocast('cuda', dtype=torch.bfloat16):",
    "with Timer('eval'):",
    "with open(path) as f:",
    "with ctx, open(path) as f:",
])
@pytest.mark.parametrize("decorator", ["@torch.no_grad()", "@torch.no_grad", "@torch.inference_mode()"])
def test_a_no_grad_decorator_holds_inside_any_with(decorator, region):
    seen = probe(f"""
        import torch
        from contextlib import nullcontext
        ctx = nullcontext() if device_type == "cpu" else torch.autocast(device_type, dtype=torch.bfloat16)
        {decorator}
        def estimate_loss():
            probe(x)
            for k in range(eval_iters):
                {region}
                    probe(x)
                    with torch.enable_grad():
                        probe(x)
    """)
    assert [s["grad_mode"] for s in seen] == ["OFF", "OFF", "ON"]


def test_grad_mode_of_methods_statements_and_flags():
    seen = probe("""
        import torch
        from contextlib import nullcontext

        class Evaluator:
            @torch.inference_mode()
            def run(self):
                with self.timer:
                    probe(x)

        def by_statement():
            torch.set_grad_enabled(False)
            with ctx:
                probe(x)
            torch.set_grad_enabled(True)
            probe(x)

        def by_flag(train):
            with torch.set_grad_enabled(train):
                probe(x)
            with nullcontext() if train else torch.no_grad():
                probe(x)
            sync = torch.no_grad() if fast else torch.enable_grad()
            with sync:
                probe(x)

        def plain():
            torch.no_grad()  # alone on a line, it changes nothing
            probe(x)
    """)
    assert [s["grad_mode"] for s in seen] == ["OFF", "OFF", "ON", "MAYBE_OFF", "MAYBE_OFF", "MAYBE_OFF", "ON"]


# ----- grad mode maybe off is unknown, not off (issue 18) ---------------------------------------------
def test_a_value_under_a_grad_flag_is_unknown_and_settled_by_a_backward_pass():
    seen = probe("""
        import torch

        def run_epoch(model, crit, loader, optimizer, train):
            losses = []
            with torch.set_grad_enabled(train):
                for x, y in loader:
                    out = model(x)
                    loss = crit(out, y)
                    probe(loss)
                    probe(out.argmax(1))
                    if train:
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                    losses.append(loss)

        def evaluate(model, crit, loader):
            with torch.set_grad_enabled(model.grad_inference):
                model.eval()
                for x, y in loader:
                    probe(crit(model(x), y))
            with torch.no_grad():
                probe(model(x))
    """)
    assert [s["graph"] for s in seen] == [Graph.UNKNOWN, Graph.NONE, Graph.UNKNOWN, Graph.NONE]
    # the backward pass in the same loop says grad is on when it matters; nothing says so in evaluate()
    assert [s["carrying"] for s in seen] == [True, False, False, False]


def test_callers_decide_a_function_only_called_under_no_grad_through_every_level():
    from memlint.static.engine import FileChecker as Checker, _callee_grad_modes

    source = textwrap.dedent("""
        import torch

        def features(x):
            return x

        def stats(loader):
            return [features(x) for x in loader]

        @torch.inference_mode()
        def score(loader):
            return stats(loader)

        def maybe(loader, train):
            with torch.set_grad_enabled(train):
                return helper(loader)

        def helper(loader):
            with torch.enable_grad():
                return features_with_grad(loader)

        def features_with_grad(loader):
            return loader

        def both(loader):
            with torch.no_grad():
                shared(loader)
            shared(loader)

        def shared(loader):
            return loader
    """)
    checker = Checker("t.py", source, [])
    checker.run(cst.parse_module(source))
    only_off, maybe_off = _callee_grad_modes(checker.facts)
    only_off = {name for name, _ in only_off}
    maybe_off = {name for name, _ in maybe_off}
    assert {"features", "stats", "score"} & only_off == {"features", "stats"}
    assert "helper" in maybe_off
    assert "features_with_grad" not in only_off | maybe_off  # enable_grad() inside: grad is on there
    assert "shared" not in only_off | maybe_off  # one call with grad on is enough


def test_self_calls_in_an_unrelated_class_do_not_count_as_callers_of_a_method():
    from memlint.static.engine import FileChecker as Checker, _callee_grad_modes

    source = textwrap.dedent("""
        import torch

        class Head(torch.nn.Module):
            def predict(self, x):
                return self(x)

        class Model:
            def __call__(self, x):
                return self.predict(x)   # Model.predict, not Head.predict

            @torch.no_grad()
            def predict(self, x):
                return self.head.predict(x)

        class SubHead(Head):
            def run(self, x):
                return self.predict(x)   # Head.predict, with grad on
    """)
    checker = Checker("t.py", source, [])
    checker.run(cst.parse_module(source))
    only_off, _ = _callee_grad_modes(checker.facts)
    assert ("predict", "Head") not in only_off  # SubHead.run calls it with grad on

    without_subclass = source[:source.index("class SubHead")]
    checker = Checker("t.py", without_subclass, [])
    checker.run(cst.parse_module(without_subclass))
    only_off, _ = _callee_grad_modes(checker.facts)
    assert ("predict", "Head") in only_off  # only Model.predict calls it, under no_grad


def test_a_relatively_imported_function_named_like_a_model_is_not_a_module():
    seen = probe("""
        import torch
        from .ch05 import evaluate_model
        from . import build_net

        def train(model, loader):
            probe(evaluate_model(model, loader))
            probe(build_net(4))
            probe(model(loader))
    """)
    assert [s["graph"] for s in seen] == [Graph.UNKNOWN, Graph.UNKNOWN, Graph.CARRIES]


def test_tokenizers_and_configs_loaded_with_from_pretrained_are_not_modules():
    seen = probe("""
        import torch
        from transformers import AutoTokenizer, AutoConfig, AutoModel, AutoImageProcessor

        tokenizer = AutoTokenizer.from_pretrained("bert-base-cased")
        processor = AutoImageProcessor.from_pretrained("vit")
        model = AutoModel.from_pretrained("bert-base-cased")
        probe(tokenizer("a sentence", return_offsets_mapping=True))
        probe(processor(images))
        probe(model(**inputs))
    """)
    assert [s["graph"] for s in seen] == [Graph.UNKNOWN, Graph.UNKNOWN, Graph.CARRIES]


def test_a_torchmetrics_metric_returns_no_graph():
    seen = probe("""
        import torch
        from torchmetrics import Accuracy

        acc_fn = Accuracy(task="multiclass", num_classes=10).to(device)
        for x, y in loader:
            y_pred = model(x)
            probe(acc_fn(y_pred, y))
            probe(custom_score(y_pred, y))
    """)
    # custom_score: a function memlint cannot read, given a graph: unknown, not presumed a graph
    assert [s["graph"] for s in seen] == [Graph.NONE, Graph.UNKNOWN]


def _checker(source: str) -> FileChecker:
    source = textwrap.dedent(source)
    checker = FileChecker("t.py", source, [Probe])
    checker.run(cst.parse_module(source))
    return checker


def test_step_loops_and_epoch_loops():
    checker = _checker("""
        import torch
        def fit(model, loader, optimizer, epochs, names):
            for epoch in range(epochs):
                for x, y in loader:
                    model(x, y).backward()
                    optimizer.step()
            while step < max_steps:
                step += 1
            for name in names:
                print(name)
            for batch in loader:
                for chunk in batch.split(2):
                    pass
    """)
    loops = {checker.module.code_for_node(loop.node).split(":")[0].strip(): loop
             for loop in checker.facts.loop_of_node.values()}
    epoch, step_loop = loops["for epoch in range(epochs)"], loops["for x, y in loader"]
    assert epoch.mentions_epoch and epoch.contains_step_loop and not epoch.runs_every_step
    assert step_loop.walks_steps and step_loop.runs_every_step
    assert loops["while step < max_steps"].runs_every_step
    assert not loops["for name in names"].runs_every_step
    # a loop around a loop over the batch's chunks is still the step loop: chunks are not steps
    assert loops["for batch in loader"].runs_every_step


def test_calls_made_follows_constructors_attributes_and_methods():
    checker = _checker("""
        import torch
        class Hooks:
            def __init__(self, layer):
                self.handle = layer.register_forward_hook(self.save)
            def release(self):
                self.handle.remove()
        class CAM:
            def __init__(self, model, layer):
                self.hooks = Hooks(layer)
            def __del__(self):
                self.hooks.release()
        def setup_worker(worker_id):
            torch.cuda.set_device(worker_id)
    """)
    facts = checker.facts
    cam = facts.classes["CAM"]
    init_calls = facts.calls_made(facts.find_method(cam, "__init__"))
    assert any(name.endswith("register_forward_hook") for name in init_calls)
    del_calls = facts.calls_made(facts.find_method(cam, "__del__"))
    assert "self.handle.remove" in del_calls
    worker = facts.function_scopes[id(next(s for s in checker.module.body if isinstance(s, cst.FunctionDef)))]
    assert "torch.cuda.set_device" in facts.calls_made(worker)


def test_factory_calls_are_not_forward_passes():
    seen = probe("""
        import torch
        def f(task, args, build_model):
            probe(task.build_model(args))
            probe(get_model(args))
            probe(task.model(args))
    """)
    assert seen[0]["graph"] is not Graph.CARRIES and seen[1]["graph"] is not Graph.CARRIES
    assert seen[2]["graph"] is Graph.CARRIES


def test_step_loops_are_told_by_what_they_do_not_by_their_names():
    """A loop runs steps because it trains, or draws something that is not a literal and runs a
    module on it; not because its names say ``batch``, ``step`` or ``sample``."""
    checker = _checker("""
        import torch
        from tqdm import tqdm
        def run(model, shard_files, stream, samples, head, batches):
            for shard in tqdm(shard_files):
                state = torch.load(shard, map_location="cpu")
            for x in stream:
                outs = model(x)
            for i in [2]:
                out = model(samples)
            for batch in batches:
                helper(batch)
            for step in range(10):
                head(samples)
            it = iter(batches)
            for step_idx in range(n):
                batch = next(it)

        def helper(batch):
            return batch.numpy().sum()

        class Net(torch.nn.Module):
            def forward(self, xs):
                return self.unroll(xs)

            def unroll(self, xs):
                for t in range(xs.size(1)):
                    h = self.cell(xs[:, t])
                return h
    """)
    loops = {checker.module.code_for_node(loop.node).split(":")[0].strip(): loop
             for loop in checker.facts.loop_of_node.values()}
    assert not loops["for shard in tqdm(shard_files)"].runs_steps  # files: no module runs
    assert loops["for x in stream"].runs_steps  # draws and runs the model, whatever the name
    assert not loops["for i in [2]"].runs_steps  # a literal: a fixed few iterations
    assert not loops["for batch in batches"].runs_steps  # the helper runs no module
    assert not loops["for step in range(10)"].runs_steps
    assert loops["for step_idx in range(n)"].runs_steps  # pulls batches with next()
    assert not loops["for t in range(xs.size(1))"].runs_steps  # within one forward


def test_a_method_named_like_a_module_method_is_not_called_by_module_calls_of_that_name():
    """``Evaluator.eval(split)`` is called only under no_grad; ``self.proj.eval()`` inside it and
    ``model.eval()`` elsewhere are nn.Module's ``eval``, and a call from the method itself adds no
    call with grad on."""
    from memlint.static.engine import FileChecker as Checker, _callee_grad_modes

    source = textwrap.dedent("""
        import torch

        class Evaluator:
            def __init__(self, proj: torch.nn.Linear):
                self.proj = proj

            def run(self):
                with torch.no_grad():
                    return self.eval("valid")

            def eval(self, split):
                self.proj.eval()
                return self.proj(torch.randn(2, 4))

        def train(model: torch.nn.Module, loader):
            model.eval()
            for x in loader:
                model(x)
    """)
    checker = Checker("t.py", source, [])
    checker.run(cst.parse_module(source))
    only_off, _ = _callee_grad_modes(checker.facts)
    assert ("eval", "Evaluator") in only_off


def test_an_annotation_decides_whether_a_parameter_is_a_module_before_its_name():
    """``model: EnvModel`` (a class known not to be a module) is no module, also kept on
    ``self`` and read in a subclass; ``encoder: nn.Module`` is one whatever its name."""
    seen = probe("""
        import torch
        from torch import nn

        class EnvModel:
            def __call__(self, state, action):
                return {state: 1.0}

        class ValueFunction:
            def __init__(self, model: EnvModel, gamma: float = 0.9):
                self._model = model

        class DPValueFunction(ValueFunction):
            def evaluate(self, states):
                probe(self._model)

        def run(model: EnvModel, enc: nn.Module, net: "Foo"):
            probe(model)
            probe(enc)
            probe(net)
    """)
    assert [record["module"] for record in seen] == [False, False, True, True]


def test_module_names_are_a_tie_breaker_that_knows_a_class_or_a_path_from_a_module():
    from memlint.static.facts import is_module_name

    assert is_module_name("model") and is_module_name("net_g_ema") and is_module_name("model_without_ddp")
    assert not is_module_name("model_cls") and not is_module_name("model_path") and not is_module_name("model_out")
    # a batch, its inputs or predictions named after the network that takes or makes them
    assert not is_module_name("net_input") and not is_module_name("model_inputs") and not is_module_name("net_preds")


def test_a_loop_count_divides_a_backpropagated_loss_without_carrying_a_graph():
    """``n`` goes to ``range()`` (an integer) and divides the loss that is backpropagated: a
    number derived from it alone carries no graph; the loss it divides still does."""
    seen = probe("""
        def step(self, batches, n):
            for _ in range(n):
                loss = self.helper(next(batches))
                probe(loss.item() / n)
                probe(loss / n)
                self.accelerator.backward(loss / n)
    """)
    assert [s["carrying"] for s in seen] == [False, True]


def test_constant_names_are_bound_once_to_a_literal_and_never_again():
    import libcst as cst
    from memlint.static.facts import constant_names

    module = cst.parse_module(
        "DEBUG = False\n"
        "LIMIT = 3\n"
        "MODE = 'fast'\n"
        "MODE = 'slow'\n"
        "def enable():\n"
        "    global DEBUG\n"
        "    DEBUG = True\n"
        "def train(verbose, x=1):\n"
        "    parallel = False\n"
        "    flag = None\n"
        "    for flag in range(3):\n"
        "        pass\n"
        "    count = 0\n"
        "    count += 1\n"
        "    x = 2\n"
        "    return parallel\n"
    )
    assert constant_names(module) == {"LIMIT": 3}  # DEBUG declared global elsewhere, MODE bound twice
    train = module.body[-1]
    assert constant_names(train) == {"parallel": False}  # flag: a loop target; count: +=; x: a parameter
