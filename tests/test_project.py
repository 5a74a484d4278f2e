"""The project index: a checked file sees the classes and functions of the other modules of its
project (relative and absolute imports, re-exports, base classes), results are re-checked when a
module they read changes, and a single file named inside a package still sees its package."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from memlint.config import Config
from memlint.static.cache import CACHE_DIR, FORMAT
from memlint.static.outline import outline_of, resolve_relative
from memlint.static.project import import_root, project_for
from memlint.static.runner import check_paths


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def codes(result, name: str | None = None) -> list[tuple[str, int, str]]:
    return sorted((Path(f.path).name, f.line, f.code) for f in result.findings
                  if name is None or Path(f.path).name == name)


PACKAGE = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/models/__init__.py": "from .base import BaseModel\n",
    "pkg/models/base.py": """
        import pytorch_lightning as pl

        class BaseModel(pl.LightningModule):
            pass
    """,
    "pkg/utils/__init__.py": "",
    "pkg/utils/rewards.py": """
        def detached_reward(loss):
            return loss.detach() * 2

        def kept_reward(loss):
            return loss * 2
    """,
    "pkg/train.py": """
        import torch
        from pkg.models import BaseModel
        from .utils.rewards import detached_reward

        class Net(BaseModel):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(3, 3)
                self.validation_step_outputs = []

            def forward(self, x):
                return self.layer(x)

            def validation_step(self, batch, batch_idx):
                self.validation_step_outputs.append(self(batch))


        def train(model, loader, opt):
            total = 0
            for x in loader:
                loss = model(x).sum()
                reward = detached_reward(loss)
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += reward
            return total
    """,
}


def test_module_names_and_roots(tmp_path):
    write(tmp_path, PACKAGE)
    assert import_root(str(tmp_path / "pkg/utils/rewards.py")) == (str(tmp_path), "pkg.utils.rewards", False)
    assert import_root(str(tmp_path / "pkg/models/__init__.py")) == (str(tmp_path), "pkg.models", True)
    assert resolve_relative("pkg.train", False, 1, "utils.rewards") == "pkg.utils.rewards"
    assert resolve_relative("pkg.models", True, 1, "base") == "pkg.models.base"
    assert resolve_relative("pkg.models.base", False, 2, None) == "pkg"


def test_outline_qualifies_bases_and_decorators_through_imports():
    outline = outline_of(textwrap.dedent("""
        import torch
        from torch import nn
        from .base import Base as B

        class A(B, nn.Module):
            @torch.no_grad()
            def f(self, x, *, y=1):
                pass

        Alias = A
    """), "pkg.mod", False)
    assert outline.classes["A"].bases == ("pkg.base.Base", "torch.nn.Module")
    assert outline.classes["A"].methods["f"].decorators == ("torch.no_grad",)
    assert outline.classes["A"].methods["f"].parameters(bound=True) == (["x"], ["x", "y"])
    assert outline.aliases["Alias"] == "pkg.mod.A"
    assert outline_of("def f(:\n", "m", False) is None


def test_ancestry_through_a_reexport_in_another_module(tmp_path):
    write(tmp_path, PACKAGE)
    project = project_for(str(tmp_path / "pkg/train.py"))
    kinds = project.class_kinds("pkg.train.Net")
    assert kinds.lightning and kinds.module and not kinds.unknown_base
    assert project.definition("pkg.models.BaseModel").qualified == "pkg.models.base.BaseModel"


def test_facts_of_another_module_decide_findings(tmp_path):
    """Lightning runs validation_step under no-grad (the class is a LightningModule through a base
    class in another module, re-exported by its package); the reward a helper of another module
    returns is detached."""
    write(tmp_path, PACKAGE)
    assert codes(check_paths([str(tmp_path)], Config(), use_cache=False)) == []
    # the same loop with the helper that keeps the graph
    train = tmp_path / "pkg/train.py"
    train.write_text(train.read_text().replace("detached_reward", "kept_reward"))
    assert codes(check_paths([str(tmp_path)], Config(), use_cache=False)) == [("train.py", 26, "ML101")]


def test_a_single_file_named_inside_a_package_sees_its_package(tmp_path, monkeypatch):
    """pre-commit names single files, from the repository's root or anywhere else."""
    write(tmp_path, PACKAGE)
    (tmp_path / "pkg/train.py").write_text((tmp_path / "pkg/train.py").read_text().replace(
        "detached_reward", "kept_reward"))
    monkeypatch.chdir(tmp_path / "pkg" / "utils")
    result = check_paths([str(tmp_path / "pkg/train.py")], Config(), use_cache=False)
    assert codes(result) == [("train.py", 26, "ML101")]
    monkeypatch.chdir(tmp_path)
    assert codes(check_paths(["pkg/train.py"], Config(), use_cache=False)) == [("train.py", 26, "ML101")]


def test_an_edit_in_another_module_rechecks_only_the_files_that_read_it(tmp_path, monkeypatch):
    write(tmp_path, PACKAGE)
    write(tmp_path, {"pkg/other.py": "import torch\n\ndef f(x):\n    return x\n"})
    monkeypatch.chdir(tmp_path)
    checked: list[str] = []
    import memlint.static.file_check as file_check

    original = file_check.check_file

    def counting(path, *args, **kwargs):
        checked.append(Path(path).name)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(file_check, "check_file", counting)
    assert codes(check_paths(["."], Config(), jobs=1)) == []
    checked.clear()
    assert codes(check_paths(["."], Config(), jobs=1)) == []
    assert checked == []  # all cached
    # the helper stops detaching: train.py (which read it) is checked again and now reports
    rewards = tmp_path / "pkg/utils/rewards.py"
    rewards.write_text(rewards.read_text().replace("loss.detach() * 2", "loss * 2"))
    assert codes(check_paths(["."], Config(), jobs=1)) == [("train.py", 26, "ML101")]
    assert sorted(checked) == ["rewards.py", "train.py"]
    entries = [json.loads(p.read_text()) for p in (tmp_path / CACHE_DIR / FORMAT).rglob("*")
               if p.is_file() and "summaries" not in p.parts and "outlines" not in p.parts and p.name != ".gitignore"]
    depends = [entry["deps"] for entry in entries if entry["deps"]]
    assert any(str(rewards) in deps for deps in depends)


def test_summaries_are_kept_on_disk_and_a_warm_single_file_run_walks_no_other_module(tmp_path, monkeypatch):
    write(tmp_path, PACKAGE)
    monkeypatch.chdir(tmp_path)
    check_paths(["."], Config(), jobs=1)
    assert list((tmp_path / CACHE_DIR / FORMAT / "summaries").rglob("*"))
    import memlint.static.project as project_module

    walked: list[str] = []
    monkeypatch.setattr(project_module.Project, "_summarise",
                        lambda self, module, text: walked.append(module.name))
    project_module._projects.clear()  # a new process: nothing in memory
    train = tmp_path / "pkg/train.py"
    train.write_text(train.read_text() + "\n")
    assert codes(check_paths(["pkg/train.py"], Config(), jobs=1)) == []
    assert walked == []


def test_outlines_are_kept_on_disk_and_a_warm_run_parses_no_other_module(tmp_path, monkeypatch):
    """A module's outline depends on its text alone: kept beside the summaries, a warm run (a new
    process) reads it instead of parsing the module again; an edited module is parsed anew."""
    write(tmp_path, PACKAGE)
    monkeypatch.chdir(tmp_path)
    check_paths(["."], Config(), jobs=1)
    assert list((tmp_path / CACHE_DIR / FORMAT / "outlines").rglob("*"))
    import memlint.static.project as project_module

    parsed: list[str] = []
    original = project_module.outline_of
    monkeypatch.setattr(project_module, "outline_of",
                        lambda text, name, is_package: parsed.append(name) or original(text, name, is_package))
    project_module._projects.clear()  # a new process: nothing in memory
    train = tmp_path / "pkg/train.py"
    train.write_text(train.read_text() + "\n")
    assert codes(check_paths(["pkg/train.py"], Config(), jobs=1)) == []
    assert [name for name in parsed if name != "pkg.train"] == []
    rewards = tmp_path / "pkg/utils/rewards.py"
    rewards.write_text(rewards.read_text() + "\n# edited\n")
    project_module._projects.clear()
    train.write_text(train.read_text() + "\n")
    check_paths(["pkg/train.py"], Config(), jobs=1)
    assert "pkg.utils.rewards" in parsed


def test_cycles_and_missing_modules_are_unknown_not_errors(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/a.py": "import torch\nfrom .b import g\n\ndef f(x):\n    return g(x)\n",
        "pkg/b.py": "import torch\nfrom .a import f\nfrom .missing import h\n\ndef g(x):\n    return f(h(x))\n",
        "pkg/c.py": """
            import torch
            from .a import f

            def train(model, loader, opt):
                total = 0
                for x in loader:
                    loss = model(x).sum()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    total += f(loss)
                return total
        """,
    })
    result = check_paths([str(tmp_path)], Config(), use_cache=False)
    assert [f.code for f in result.findings] == []  # f's result is unknown: no evidence of a graph


@pytest.mark.parametrize("body, expected", [
    ("torch.cuda.set_device(local_rank)", []),
    ("pass", [("launch.py", 8, "ML301")]),
])
def test_set_device_in_a_helper_of_another_module(tmp_path, body, expected):
    write(tmp_path, {
        "pyproject.toml": "",
        "launcher/__init__.py": "",
        "launcher/utils.py": f"""
            import os
            import torch

            def get_device():
                local_rank = int(os.environ["LOCAL_RANK"])
                {body}
                return torch.device("cuda", local_rank)
        """,
        "launcher/launch.py": """
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            from launcher import utils

            def main(model):
                device = utils.get_device()
                dist.init_process_group("nccl")
                model = DDP(model.cuda())
                dist.barrier()
        """,
    })
    assert codes(check_paths([str(tmp_path / "launcher/launch.py")], Config(), use_cache=False),
                 "launch.py") == expected


@pytest.mark.parametrize("guard, expected", [
    ("if local_rank >= 0:", []),  # the default (-1) turns the branch off: no process group unless asked
    ("if local_rank >= 0 or True:", [("search.py", 6, "ML203")]),  # not a test of the default alone
    ("", [("search.py", 6, "ML203")]),  # always started
])
def test_process_group_only_on_request_in_another_module_is_no_ranks_premise(tmp_path, guard, expected):
    """A helper that starts a process group only when its caller passes ``local_rank`` (the
    default, -1, turns the branch off): a script calling it without one runs one process."""
    body = "dist.init_process_group('nccl')"
    write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/train.py": f"""
            import torch
            import torch.distributed as dist

            def train_and_eval(model, loader, local_rank=-1):
                {guard}
                    {body}
                for x in loader:
                    model(x).sum().backward()
        """ if guard else f"""
            import torch
            import torch.distributed as dist

            def train_and_eval(model, loader, local_rank=-1):
                {body}
                for x in loader:
                    model(x).sum().backward()
        """,
        "pkg/search.py": """
            import torch
            from pkg.train import train_and_eval

            def trial(model, loader, path):
                train_and_eval(model, loader)
                model.load_state_dict(torch.load(path))
        """,
    })
    assert codes(check_paths([str(tmp_path / "pkg/search.py")], Config(), use_cache=False), "search.py") == expected


def test_data_parallel_of_a_model_whose_forward_in_another_module_computes_the_loss_is_info(tmp_path):
    """The documented fix (the loss in forward) read from the class's module: said as info."""
    write(tmp_path, {
        "models.py": """
            import torch
            from torch import nn
            from torch.nn import CrossEntropyLoss

            class CloneModel(nn.Module):
                def __init__(self, encoder):
                    super().__init__()
                    self.encoder = encoder

                def forward(self, ids, labels):
                    logits = self.encoder(ids)
                    loss_fct = CrossEntropyLoss()
                    return loss_fct(logits, labels), logits.softmax(-1)
        """,
        "run.py": """
            import torch
            from models import CloneModel

            def main(encoder, loader, optimizer):
                model = CloneModel(encoder)
                model = torch.nn.DataParallel(model)
                for ids, labels in loader:
                    loss, _ = model(ids, labels)
                    loss.mean().backward()
                    optimizer.step()
        """,
    })
    found = check_paths([str(tmp_path / "run.py")], Config(), use_cache=False)
    assert [(f.code, f.severity) for f in found.findings if f.code == "ML206"] == [("ML206", "info")]


@pytest.mark.parametrize("enter, expected", [
    ("torch.set_grad_enabled(False)", []),  # grad off in the block
    ("self.context.__enter__()", []),  # entering a torch.no_grad() it made
    ("print('entering')", [("metrics.py", 8, "ML101")]),  # sets no grad mode: grad stays on
])
def test_context_manager_class_of_another_module_sets_the_grad_mode_of_the_block(tmp_path, enter, expected):
    """``with evaluating(model):`` where ``evaluating`` is a class of another module whose
    ``__enter__`` enters a grad-mode context: its block runs in that mode."""
    write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/utils.py": f"""
            import torch

            class evaluating:
                def __init__(self, model):
                    self.model = model
                    self.context = torch.no_grad()

                def __enter__(self):
                    self.model.eval()
                    {enter}

                def __exit__(self, *args):
                    self.model.train()
        """,
        "pkg/metrics.py": """
            import torch.nn.functional as F
            from pkg.utils import evaluating

            def validation_loss(model, loader):
                total = 0
                with evaluating(model):
                    for x, y in loader:
                        total += F.cross_entropy(model(x), y)
                return total
        """,
    })
    assert codes(check_paths([str(tmp_path / "pkg/metrics.py")], Config(), use_cache=False), "metrics.py") == expected


def test_files_outside_any_project_marker_still_resolve_their_siblings(tmp_path):
    """A script folder (no package, no pyproject.toml): ``import utils`` finds utils.py beside it."""
    write(tmp_path, {
        "utils.py": "def accuracy(out, y):\n    return (out.argmax(1) == y).float().mean().item()\n",
        "train.py": """
            import torch
            import utils

            def train(model, loader, opt, crit):
                acc = 0
                for x, y in loader:
                    out = model(x)
                    loss = crit(out, y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    acc += utils.accuracy(out, y)
                return acc
        """,
    })
    assert codes(check_paths([str(tmp_path / "train.py")], Config(), use_cache=False)) == []
    assert os.path.isfile(tmp_path / "utils.py")


METERS = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/meters.py": """
        class AverageMeter:
            def __init__(self):
                self.sum, self.count = 0.0, 0
            def update(self, val, n=1):
                self.sum += val * n
                self.count += n

        class ItemMeter:
            def __init__(self):
                self.sum = 0.0
            def update(self, val, n=1):
                self.sum += val.item() * n

        class MetricLogger:
            def __init__(self):
                self.meters = {}
            def update(self, **kwargs):
                for name, value in kwargs.items():
                    self.meters.setdefault(name, AverageMeter()).update(value)
    """,
    "pkg/train.py": """
        import torch.nn.functional as F
        from pkg.meters import AverageMeter, ItemMeter, MetricLogger

        def train(model, loader, optimizer):
            losses, items, logger = AverageMeter(), ItemMeter(), MetricLogger()
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.update(loss, x.size(0))
                items.update(loss, x.size(0))
                logger.update(loss=loss)
    """,
}


def test_a_meter_of_another_module_that_keeps_what_it_is_given(tmp_path):
    """A meter class of another module whose update() sums its argument (itself, or through the
    meters it holds, by keyword) keeps the loss's graph; one that sums .item() does not."""
    write(tmp_path, METERS)
    result = check_paths([str(tmp_path / "pkg" / "train.py")], Config(select=["ML101"]), use_cache=False, jobs=1)
    assert codes(result) == [("train.py", 11, "ML101"), ("train.py", 13, "ML101")]


COUNTS = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/collate.py": """
        def num_tokens(batch):
            keys = [k for k in batch if k.endswith("attention_mask")]
            if keys:
                return sum(batch[k].sum().item() for k in keys)
            return sum(v.numel() for v in batch.values())

        def kept_tokens(batch):
            return batch["weights"].sum()
    """,
    "pkg/train.py": """
        import torch
        from pkg import collate

        class Module:
            def __init__(self, model):
                self.model = model
                self.metrics = {"loss": torch.zeros(())}

            def train_batch(self, micro_batches):
                counts = [collate.num_tokens(mb) for mb in micro_batches]
                total = sum(counts)
                for v in self.metrics.values():
                    v.zero_()
                for i, mb in enumerate(micro_batches):
                    loss, step_metrics = self.model.step_loss(mb)
                    n = counts[i]
                    for k, v in step_metrics.items():
                        self.metrics[k] += v.detach() * n
                    (loss * (n / total)).backward()
    """,
}


def test_counts_a_helper_of_another_module_returns_as_numbers(tmp_path):
    """Token counts a helper of another module returns as numbers (sums of ``.item()``, taken per
    micro-batch in a list comprehension) do not make a detached metric carry a graph by scaling
    the loss; with the helper that returns a tensor sum, the metric is reported again."""
    write(tmp_path, COUNTS)
    assert codes(check_paths([str(tmp_path)], Config(select=["ML101"]), use_cache=False, jobs=1)) == []
    train = tmp_path / "pkg/train.py"
    train.write_text(train.read_text().replace("collate.num_tokens(mb)", "collate.kept_tokens(mb)"))
    assert codes(check_paths([str(tmp_path)], Config(select=["ML101"]), use_cache=False, jobs=1)) == [
        ("train.py", 18, "ML101")]


NORMALISER = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/agent.py": """
        import torch
        from torch import nn

        class RunningMeanStd(nn.Module):
            def __init__(self, shape, epsilon=1e-5):
                super().__init__()
                self.shape = shape
                self.epsilon = epsilon
                self.axis = [0]
                self.register_buffer("mean", torch.zeros(shape))
                self.register_buffer("var", torch.ones(shape))

            def forward(self, x):
                return (x - self.mean) / torch.sqrt(self.var + self.epsilon)

        class LearnedScale(RunningMeanStd):
            def __init__(self, shape):
                super().__init__(shape)
                self.scale = nn.Parameter(torch.ones(shape))

        class Agent:
            def __init__(self, shape):
                self.value_norm = RunningMeanStd(shape)

            def evaluate(self, batches):
                self.value_norm.eval()
                scores = []
                for values in batches:
                    scores.append(self.value_norm(values).mean().item())
                return scores
    """,
}


def test_a_module_that_holds_no_parameters(tmp_path):
    """A normaliser of buffers (no nn.Parameter, no submodule, through its bases) called in eval
    mode on data without a graph records nothing: ML201 stays quiet; a subclass that adds a
    parameter is reported."""
    write(tmp_path, NORMALISER)
    config = Config(select=["ML201"])
    assert codes(check_paths([str(tmp_path)], config, use_cache=False, jobs=1)) == []
    agent = tmp_path / "pkg/agent.py"
    agent.write_text(agent.read_text().replace("self.value_norm = RunningMeanStd", "self.value_norm = LearnedScale"))
    assert codes(check_paths([str(tmp_path)], config, use_cache=False, jobs=1)) == [("agent.py", 29, "ML201")]


def test_which_classes_make_no_parameters():
    outline = outline_of(textwrap.dedent("""
        import torch
        from torch import nn
        from torchvision import models

        class Buffers(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.n = n
                self.register_buffer("count", torch.zeros(()))
            def forward(self, x):
                self.count += 1
                self.mean, self.var = self._moments(x)
                return x.view(self.n, -1)

        class Backbone(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = models.resnet18()

        class Wrapper(nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner
            def forward(self, x):
                return self.inner(x)

        class BeamSearch(nn.Module):
            def __init__(self, model, beam=5):
                super().__init__()
                self.model = model
                self.beam = beam
            def forward(self, src):
                return self.model.decoder(self.model.encoder(src))

        class Scaled(nn.Module):
            def __init__(self, factor):
                super().__init__()
                self.factor = factor
            def forward(self, x):
                return x * self.factor.clamp(0, 1)

        class Declared(nn.Module):
            def __init__(self, size):
                super().__init__()
                self.buf: torch.Tensor  # declared only: nothing assigned
                self.register_buffer("buf", torch.zeros(size))
    """), "m", False)
    assert {name: c.makes_no_parameters for name, c in outline.classes.items()} == {
        "Buffers": True, "Backbone": False, "Wrapper": False, "BeamSearch": False, "Scaled": True,
        "Declared": True}


GENERATOR = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/search.py": """
        import torch
        from torch import nn

        class SequenceGenerator(nn.Module):
            def __init__(self, model, beam=5):
                super().__init__()
                self.model = model
                self.beam = beam

            @torch.no_grad()
            def forward(self, src):
                return self.model.decoder(self.model.encoder(src))
    """,
    "pkg/evaluate.py": """
        import torch
        from pkg.search import SequenceGenerator

        def test(model, loader):
            generator = SequenceGenerator(model).cuda()
            generator.eval()
            return [generator(src).cpu() for src in loader]
    """,
}


def test_a_forward_that_turns_grad_off_in_another_module(tmp_path):
    """A module class of another module whose forward is decorated with ``@torch.no_grad()``
    records nothing when called in eval mode (ML201 quiet); without the decorator it holds the
    model it was given (it calls its parts) and the eval-mode call is reported."""
    write(tmp_path, GENERATOR)
    config = Config(select=["ML201"])
    assert codes(check_paths([str(tmp_path)], config, use_cache=False, jobs=1)) == []
    search = tmp_path / "pkg/search.py"
    search.write_text(search.read_text().replace("@torch.no_grad()", ""))
    assert codes(check_paths([str(tmp_path)], config, use_cache=False, jobs=1)) == [("evaluate.py", 7, "ML201")]


NO_SYNC_HELPER = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/misc.py": """
        import contextlib

        @contextlib.contextmanager
        def ddp_sync(module, sync):
            if sync:
                yield
            else:
                with module.no_sync():
                    yield
    """,
    "pkg/train.py": """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        from pkg import misc

        def train(model, loader, optimizer, criterion, k, rank):
            ddp = DDP(model.to(rank), device_ids=[rank])
            for x, y in loader:
                x, y = x.to(rank), y.to(rank)
                for i, (xc, yc) in enumerate(zip(x.chunk(k), y.chunk(k))):
                    with misc.ddp_sync(ddp, i == k - 1):
                        loss = criterion(ddp(xc), yc) / k
                        loss.backward()
                optimizer.step()
                optimizer.zero_grad()
    """,
}


def test_no_sync_entered_by_a_helper_of_another_module(tmp_path):
    """Gradient accumulation under a helper of the project that enters ``no_sync()`` is not
    reported (ML302); the same helper without it is."""
    write(tmp_path, NO_SYNC_HELPER)
    config = Config(select=["ML302"])
    assert codes(check_paths([str(tmp_path)], config, use_cache=False, jobs=1)) == []
    misc = tmp_path / "pkg/misc.py"
    misc.write_text(misc.read_text().replace("with module.no_sync():", "with contextlib.nullcontext():"))
    assert [code for _, _, code in codes(check_paths([str(tmp_path)], config, use_cache=False, jobs=1))] == ["ML302"]


@pytest.mark.parametrize("value, expected", [
    ('str(MPI.COMM_WORLD.Get_rank() % GPUS_PER_NODE)', []),  # one GPU per process: cuda:0 is its own
    ('"0,1,2,3"', [("evaluator.py", 9, "ML203")]),  # every process sees all four
])
def test_one_visible_gpu_per_process_set_by_a_helper_of_another_module(tmp_path, value, expected):
    """A checkpoint loaded without ``map_location`` in a distributed program lands on ``cuda:0``,
    which is the rank's own GPU when a helper elsewhere in the project leaves each process one
    visible device (ML203)."""
    write(tmp_path, {
        "pyproject.toml": "",
        "cm/__init__.py": "",
        "cm/dist_util.py": f"""
            import os
            import torch.distributed as dist
            from mpi4py import MPI
            GPUS_PER_NODE = 8

            def setup_dist():
                os.environ["CUDA_VISIBLE_DEVICES"] = {value}
                dist.init_process_group("nccl")
        """,
        "cm/evaluator.py": """
            import torch
            import torch.distributed as dist
            from cm import dist_util

            class Evaluator(torch.nn.Module):
                def __init__(self, path):
                    super().__init__()
                    self.net = torch.nn.Linear(2, 2)
                    self.net.load_state_dict(torch.load(path))
                    self.net.to(dist_util.dev())
        """,
    })
    config = Config(select=["ML203"])
    assert codes(check_paths([str(tmp_path / "cm/evaluator.py")], config, use_cache=False, jobs=1),
                 "evaluator.py") == expected


@pytest.mark.parametrize("wrap, expected", [
    ("(torch.inference_mode if new_torch else torch.no_grad)()(fn)", []),  # grad off in the decorated function
    ("fn", [("val.py", 9, "ML201")]),  # a decorator that changes nothing
])
def test_a_grad_off_decorator_factory_of_another_module(tmp_path, wrap, expected):
    """``@smart_inference_mode()`` (yolov5): a factory in another module returning a decorator
    that wraps the function in ``inference_mode`` / ``no_grad`` turns grad off in its body."""
    write(tmp_path, {
        "pyproject.toml": "",
        "utils/__init__.py": "",
        "utils/torch_utils.py": f"""
            import torch

            def smart_inference_mode(new_torch=True):
                def decorate(fn):
                    return {wrap}
                return decorate
        """,
        "segment/val.py": """
            import torch
            from utils.torch_utils import smart_inference_mode

            @smart_inference_mode()
            def run(model, dataloader):
                model.eval()
                stats = []
                for images, targets in dataloader:
                    preds = model(images)
                    stats.append(preds)
                return stats
        """,
    })
    config = Config(select=["ML201"])
    assert codes(check_paths([str(tmp_path / "segment/val.py")], config, use_cache=False, jobs=1),
                 "val.py") == expected


def test_a_script_imports_the_module_beside_it_when_other_folders_have_one_of_that_name(tmp_path):
    """Two example folders of one repository, each with its own ``model.py``: each script's
    ``from model import Net`` is the one beside it, whatever was checked before."""
    train = """
        import torch
        from model import Net

        def evaluate(loader):
            net = Net().cuda()
            net.eval()
            outs = []
            for x in loader:
                outs.append(net(x.cuda()))
            return torch.cat(outs).mean().item()
    """
    model = """
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            {decorator}
            def forward(self, x):
                return self.fc(x)
    """
    write(tmp_path, {
        ".git/HEAD": "",
        "frozen/train.py": train,
        "frozen/model.py": model.format(decorator="@torch.no_grad()"),
        "plain/train.py": train,
        "plain/model.py": model.format(decorator=""),
    })
    config = Config(select=["ML201"])
    for order in (["frozen", "plain"], ["plain", "frozen"]):
        paths = [str(tmp_path / folder / "train.py") for folder in order]
        found = check_paths(paths, config, use_cache=False, jobs=1).findings
        assert sorted(os.path.basename(os.path.dirname(f.path)) for f in found) == ["plain"], order


HEAD_AND_MODEL = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/head.py": """
        import torch

        class Head(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = torch.nn.Linear(4, 2)

            def forward(self, x):
                return self.linear(x)

            def predict(self, x):
                self.eval()
                return self(x).softmax(-1)
    """,
    "pkg/model.py": """
        import torch
        from pkg.head import Head

        class Model:
            def __init__(self):
                self.head = Head()

            def __call__(self, x):
                return self.predict(x)

            @torch.no_grad()
            def predict(self, x):
                return self.head.predict(x)
    """,
}


def test_a_method_called_only_under_no_grad_from_another_module_despite_a_same_named_method(tmp_path):
    """``Head.predict`` is called by ``Model.predict`` under ``@torch.no_grad()``; ``self.predict``
    in ``Model.__call__`` (grad on) calls ``Model.predict``, not ``Head.predict``: ML201 quiet.
    A subclass of ``Head`` calling ``self.predict`` with grad on does call it: reported."""
    write(tmp_path, HEAD_AND_MODEL)
    config = Config(select=["ML201"])
    assert codes(check_paths([str(tmp_path)], config, use_cache=False, jobs=1)) == []
    (tmp_path / "pkg/sub.py").write_text(textwrap.dedent("""
        from pkg.head import Head

        class TunedHead(Head):
            def run(self, x):
                return self.predict(x)
    """).lstrip())
    assert codes(check_paths([str(tmp_path)], config, use_cache=False, jobs=1)) == [("head.py", 13, "ML201")]


SHARED_LOOP = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/engine.py": """
        import torch.nn.functional as F

        def run_epoch(model, loader, optimizer, is_train=True):
            total = 0.0
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                if is_train:
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                total += loss.item()
            return total
    """,
    "pkg/train.py": """
        import torch
        from pkg import engine

        def main(model, train_loader, val_loader, optimizer):
            for epoch in range(10):
                engine.run_epoch(model, train_loader, optimizer)
                engine.run_epoch(model, val_loader, optimizer, is_train=False)
    """,
}


def test_a_shared_train_eval_loop_called_for_evaluation_from_another_module(tmp_path):
    """``run_epoch(..., is_train=False)`` in another module runs the loop's forward with grad on
    and no backward pass (ML201 at the forward); under ``torch.no_grad()`` there, nothing."""
    write(tmp_path, SHARED_LOOP)
    config = Config(select=["ML201"])
    assert codes(check_paths([str(tmp_path)], config, use_cache=False, jobs=1)) == [("engine.py", 6, "ML201")]
    train = tmp_path / "pkg/train.py"
    train.write_text(train.read_text().replace(
        "        engine.run_epoch(model, val_loader, optimizer, is_train=False)",
        "        with torch.no_grad():\n            engine.run_epoch(model, val_loader, optimizer, is_train=False)"))
    assert codes(check_paths([str(tmp_path)], config, use_cache=False, jobs=1)) == []


EMBEDDER = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/embed.py": """
        import torch

        def embed_all(encoder: torch.nn.Module, images):
            feats = []
            for image in images:
                feats.append(encoder(image))
            return torch.cat(feats)

        def main(encoder, images):
            torch.save(embed_all(encoder, images), "feats.pt")

        if __name__ == "__main__":
            main(torch.hub.load("facebookresearch/dino:main", "dino_vits16"), torch.randn(8, 1, 3, 224, 224))
    """,
}


def test_outputs_returned_to_a_module_that_trains_on_them_are_not_inference(tmp_path):
    """``embed_all`` returns every output with its graph; called only by this script's ``main``
    (which trains nothing and returns nothing), they are kept for nothing (ML201). Once another module of the project
    calls it, that module may train on what it returns: quiet."""
    write(tmp_path, EMBEDDER)
    config = Config(select=["ML201"])
    assert codes(check_paths([str(tmp_path)], config, use_cache=False, jobs=1)) == [("embed.py", 6, "ML201")]
    (tmp_path / "pkg/probe.py").write_text(textwrap.dedent("""
        import torch
        from pkg.embed import embed_all

        def fit(encoder, head, images, labels, optimizer):
            loss = torch.nn.functional.cross_entropy(head(embed_all(encoder, images)), labels)
            loss.backward()
            optimizer.step()
    """).lstrip())
    assert codes(check_paths([str(tmp_path)], config, use_cache=False, jobs=1)) == []


def test_a_module_method_of_the_same_name_is_no_call_of_a_plain_class_method(tmp_path):
    """A one-file project: ``model.train()`` (nn.Module's method, inside the step the trainer
    calls) does not call ``Trainer.train``, so ``Trainer.train`` is not "only called from a cycle
    with grad off" and its accumulation of the returned loss is still reported."""
    write(tmp_path, {
        "pyproject.toml": "",
        "train.py": """
            import torch

            class Trainer:
                def __init__(self, model, loader, optimizer):
                    self.model, self.loader, self.optimizer = model, loader, optimizer

                def training_step(self, model, batch):
                    model.train()
                    loss = model(batch).mean()
                    loss.backward()
                    return loss

                def train(self):
                    total = torch.tensor(0.0)
                    for batch in self.loader:
                        total += self.training_step(self.model, batch)
                        self.optimizer.step()
                    return total.item()
        """,
    })
    result = check_paths([str(tmp_path / "train.py")], Config(), use_cache=False)
    assert ("train.py", 16, "ML101") in codes(result)


def test_a_script_function_named_train_is_not_called_by_model_train(tmp_path):
    """``model.train()`` inside ``def train(...)`` is nn.Module's method, not a recursive call of
    the script's ``train``: the evaluation helper ``train`` calls with grad on stays reported."""
    write(tmp_path, {
        "pyproject.toml": "",
        "gcn.py": """
            import torch
            import torch.nn.functional as F

            def evaluate(model, features, labels):
                model.eval()
                logits = model(features)
                return (logits.argmax(1) == labels).float().mean().item()

            def train(model, features, labels, epochs=10):
                opt = torch.optim.Adam(model.parameters())
                for epoch in range(epochs):
                    model.train()
                    loss = F.cross_entropy(model(features), labels)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    print(evaluate(model, features, labels))
        """,
    })
    result = check_paths([str(tmp_path / "gcn.py")], Config(), use_cache=False)
    assert ("gcn.py", 6, "ML201") in codes(result)


def test_a_repository_with_an_init_at_its_top_imports_from_its_top(tmp_path):
    """A repository whose top folder holds ``.git`` and an ``__init__.py`` (NRI's layout) runs its
    scripts from that folder: ``train.py``'s ``from utils import *`` is the ``utils.py`` beside it,
    not one of another folder above. A package inside it is still named from the top."""
    repo = tmp_path / "NRI"
    (repo / ".git").mkdir(parents=True)
    (tmp_path / "utils.py").write_text("VALUE = 1\n")  # a utils.py above the repository: not this one
    for name, text in {"__init__.py": "", "utils.py": "from torch.autograd import Variable\n",
                       "models/__init__.py": "", "models/rnn.py": ""}.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    assert import_root(str(repo / "train.py")) == (str(repo), "train", False)
    assert import_root(str(repo / "models/rnn.py")) == (str(repo), "models.rnn", False)
    (repo / "train.py").write_text(textwrap.dedent("""
        import torch
        from utils import *

        def validate(model, loader):
            model.eval()
            scores = []
            for data in loader:
                data = Variable(data.cuda(), volatile=True)
                scores.append(model(data).data[0])
            return scores
    """))
    result = check_paths([str(repo / "train.py")], Config(), use_cache=False)
    assert [f.code for f in result.findings if f.code == "ML201"] == []


def test_a_helper_no_module_of_an_unpackaged_repository_names_is_not_checked(tmp_path):
    """A research repository (no pyproject.toml, setup.py or setup.cfg: its scripts are its only
    users) imports ``utils/ckpt.py`` as a module (``import utils.ckpt as ckpt``). What that module
    defines and nothing in the repository names (``load_checkpoint``) never runs: not checked. Named
    by a script (``ckpt.load_checkpoint(...)``), or in a packaged project, it is."""
    helper = textwrap.dedent("""
        import torch
        import torch.distributed as dist

        def load_checkpoint(model, path):
            model.load_state_dict(torch.load(path))

        def checkpoint_state(model):
            return {"model": model.state_dict()}
    """)
    script = textwrap.dedent("""
        import torch
        import utils.ckpt as ckpt

        def main(model, path):
            torch.distributed.init_process_group("nccl")
            state = ckpt.checkpoint_state(model)
            torch.save(state, path)
    """)
    (tmp_path / ".git").mkdir()
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils/__init__.py").write_text("")
    (tmp_path / "utils/ckpt.py").write_text(helper)
    (tmp_path / "train.py").write_text(script)

    def ml203() -> list[int]:
        result = check_paths([str(tmp_path / "utils/ckpt.py")], Config(), use_cache=False)
        return [f.line for f in result.findings if f.code == "ML203"]

    assert ml203() == []
    (tmp_path / "train.py").write_text(script + "    ckpt.load_checkpoint(model, path)\n")
    assert ml203() == [6]
    (tmp_path / "train.py").write_text(script)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert ml203() == [6]


def test_a_script_imported_under_a_name_another_import_rebinds_is_imported(tmp_path):
    """``main.py`` picks one of two trainer scripts with ``from bin.train_a import Solver`` /
    ``from bin.train_b import Solver`` inside branches: both scripts are imported (by the same
    local name), so what they define may run and is checked, even where the script's own
    ``__main__`` block calls none of it."""
    trainer = textwrap.dedent("""
        import torch

        class Solver:
            def exec(self, loader, model, optimizer):
                for x in loader:
                    loss = model(x).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    torch.cuda.empty_cache()

        if __name__ == "__main__":
            print("use main.py")
    """)
    main = textwrap.dedent("""
        import sys

        def run(kind, loader, model, optimizer):
            if kind == "a":
                from bin.train_a import Solver
            else:
                from bin.train_b import Solver
            Solver().exec(loader, model, optimizer)
    """)
    (tmp_path / ".git").mkdir()
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin/train_a.py").write_text(trainer)
    (tmp_path / "bin/train_b.py").write_text(trainer)
    (tmp_path / "main.py").write_text(main)
    result = check_paths([str(tmp_path / "bin/train_a.py")], Config(), use_cache=False)
    assert [f.code for f in result.findings] == ["ML202"]


def test_a_method_of_a_plain_class_nothing_in_the_repository_calls(tmp_path):
    """In a repository not packaged for others, ``GAN.load()`` (a plain class: no framework calls
    its methods by name) that no code names — ``torch.load`` and a ``# load dataset`` comment are
    not calls of it — never runs: its ``torch.load`` without ``map_location`` is not reported.
    ``gan.load()`` in a script, ``getattr(gan, "load")``, a packaged project or an installed
    distribution (its users are elsewhere) bring it back."""
    gan = textwrap.dedent("""
        import torch
        from torch import nn

        class GAN(object):
            def __init__(self, dim):
                # load dataset
                self.G = nn.Linear(dim, dim)
                self.G.cuda()

            def save(self, path):
                torch.save(self.G.state_dict(), path)

            def load(self, path):
                state = torch.load(path)
                self.G.load_state_dict(state)
    """)
    main = textwrap.dedent("""
        from gan import GAN

        def main(path):
            gan = GAN(8)
            gan.save(path)
    """)

    def ml203(name: str, script: str, packaged: bool = False, installed: bool = False) -> list[int]:
        repo = tmp_path / name  # a repository each: the project's word index is kept a minute
        (repo / ".git").mkdir(parents=True)
        (repo / "gan.py").write_text(gan)
        (repo / "main.py").write_text(script)
        if packaged:
            (repo / "setup.py").write_text("from setuptools import setup\nsetup(name='gan')\n")
        if installed:  # pip install --target: the distribution's metadata beside its modules
            (repo / "gan-1.0.dist-info").mkdir()
        result = check_paths([str(repo / "gan.py")], Config(), use_cache=False)
        return [f.line for f in result.findings if f.code == "ML203"]

    assert ml203("unused", main) == []
    assert ml203("called", main + "    gan.load(path)\n") == [15]
    assert ml203("by_string", main + "    getattr(gan, 'load')(path)\n") == [15]
    assert ml203("packaged", main, packaged=True) == [15]
    assert ml203("installed", main, installed=True) == [15]


def test_a_method_nothing_calls_of_a_class_whose_bases_are_the_projects_own(tmp_path):
    """A class whose bases are, through every ancestor, the project's own classes (here one in
    another module) is as plain as one without: no framework calls its methods by name, so an
    uncalled ``load()`` never runs. A framework base from outside the project (Lightning's
    ``LightningModule``) may call methods by name: the finding stays; ``nn.Module`` calls only
    its own attributes' names, not ``load``. A call of ``load`` in the project's base keeps it too."""
    base = textwrap.dedent("""
        class Worker:
            def run(self):
                return None
    """)
    gan = textwrap.dedent("""
        import torch
        from torch import nn
        import lightning.pytorch as pl
        from base import Worker

        class GAN(BASE):
            def __init__(self, dim):
                self.G = nn.Linear(dim, dim)
                self.G.cuda()

            def save(self, path):
                torch.save(self.G.state_dict(), path)

            def load(self, path):
                state = torch.load(path)
                self.G.load_state_dict(state)
    """)
    main = textwrap.dedent("""
        from gan import GAN

        def main(path):
            gan = GAN(8)
            gan.save(path)
    """)

    def ml203(name: str, base_class: str, base_module: str = base) -> list[int]:
        repo = tmp_path / name
        (repo / ".git").mkdir(parents=True)
        (repo / "base.py").write_text(base_module)
        (repo / "gan.py").write_text(gan.replace("BASE", base_class))
        (repo / "main.py").write_text(main)
        result = check_paths([str(repo / "gan.py")], Config(), use_cache=False)
        return [f.line for f in result.findings if f.code == "ML203"]

    assert ml203("project_base", "Worker") == []
    assert ml203("module_base", "nn.Module") == []
    assert ml203("framework_base", "pl.LightningModule") == [16]
    assert ml203("base_calls_it", "Worker", base + "\n    def resume(self, path):\n        self.load(path)\n") == [16]


def test_a_plain_function_is_called_only_by_modules_that_import_it(tmp_path):
    """``evaluate()`` of ``utils.py``, star-imported by the script that calls it under
    ``no_grad``: another script's call of its own ``evaluate()`` (it imports nothing from
    ``utils``) is not a call of it. If that script imported ``utils``, its call would count."""
    from memlint.config import Config
    from memlint.static.runner import check_paths

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(
        "import torch\n\n\ndef evaluate(model, batches):\n    model.eval()\n"
        "    return [model(x).cpu() for x in batches]\n")
    (tmp_path / "main.py").write_text(
        "import torch\nfrom utils import *\n\nif __name__ == '__main__':\n    with torch.no_grad():\n"
        "        out = evaluate(model, batches)\n")
    (tmp_path / "other.py").write_text(
        "import torch\n\n\ndef evaluate(model, batches):\n    return [model(x).item() for x in batches]\n\n\n"
        "if __name__ == '__main__':\n    print(evaluate(model, batches))\n")

    def lines() -> list[int]:
        result = check_paths([str(tmp_path / "utils.py")], Config(select=["ML201"]), use_cache=False)
        return [f.line for f in result.findings]

    assert lines() == []
    (tmp_path / "other.py").write_text(
        "import torch\nfrom utils import evaluate\n\n\nif __name__ == '__main__':\n    print(evaluate(model, batches))\n")
    assert lines() == [6]


def test_a_root_found_while_a_module_is_checked_goes_after_that_modules_root(tmp_path):
    """Two scripts' folders each hold a ``dataclass.py``: while ``pretraining/train.py`` is checked,
    finding the other folder (a search of the project's files adds its root) must not make
    ``from dataclass import *`` resolve to the other folder's module."""
    for folder, name in (("pretraining", "Corpus"), ("story", "Story")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "dataclass.py").write_text(f"class {name}:\n    pass\n")
        (tmp_path / folder / "train.py").write_text("from dataclass import *\n")
    (tmp_path / "pyproject.toml").write_text("")
    project = project_for(str(tmp_path / "pretraining" / "train.py"))
    with project.looking_from(str(tmp_path / "pretraining" / "train.py")):
        project.file_of_path(str(tmp_path / "story" / "train.py"))  # adds story/ as an import root
        found = project.module_file("dataclass")
    assert found is not None and found.path == str((tmp_path / "pretraining" / "dataclass.py").resolve())


LIB_ON_THE_PATH = {
    "pyproject.toml": "",
    "lib/models/__init__.py": "",
    "lib/models/losses.py": """
        def kept_reward(loss):
            return loss * 2
    """,
    "tools/_init_paths.py": """
        import os.path as osp
        import sys

        sys.path.insert(0, osp.join(osp.dirname(__file__), "..", "lib"))
    """,
    "tools/train.py": """
        import _init_paths
        import torch
        from models.losses import kept_reward

        def train(model, loader, opt):
            total = 0
            for x in loader:
                loss = model(x).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += kept_reward(loss)
            return total
    """,
}


def test_a_script_sees_a_folder_other_files_are_imported_from_also_when_checked_alone(tmp_path):
    """``lib/models`` is a package whose import root is ``lib/`` (a script puts it on sys.path):
    the script checked alone, as a pre-commit hook passes it, finds ``models.losses`` as it does
    when the package's own files are checked beside it."""
    write(tmp_path, LIB_ON_THE_PATH)
    expected = [("train.py", 12, "ML101")]
    assert codes(check_paths([str(tmp_path / "tools/train.py")], Config(), use_cache=False)) == expected
    assert codes(check_paths([str(tmp_path)], Config(), use_cache=False)) == expected


@pytest.mark.parametrize("helper, reported", [
    # a configured class path looked up part by part: the names are the configuration's
    ("def import_class(name):\n    mod = __import__(name.split('.')[0])\n"
     "    for comp in name.split('.')[1:]:\n        mod = getattr(mod, comp)\n    return mod\n", False),
    # a name the program builds can be any method's
    ("def call(obj, kind):\n    return getattr(obj, 'lo' + kind)()\n", True),
    ("def call(obj, kind):\n    return getattr(obj, f'{kind}ad')()\n", True),
    # every attribute the object lists
    ("def call_all(obj):\n    for name in dir(obj):\n        getattr(obj, name)()\n", True),
    # the command line's options as a dict beside a configured lookup: no method's name listed
    ("def options(args):\n    return dict(vars(args))\n\ndef load_class(mod, name):\n    return getattr(mod, name)\n",
     False),
])
def test_a_method_nothing_names_and_getattr_in_its_module(tmp_path, helper, reported):
    """``getattr`` in the module of a plain class's method hides a call of it only when the name
    it looks up is built by the program or listed from the object: a name handed in as it is
    was written somewhere (code, configuration file) where the search for the method's name
    finds it."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "gan.py").write_text(textwrap.dedent("""
        import torch
        from torch import nn

        class GAN(object):
            def __init__(self, dim):
                self.G = nn.Linear(dim, dim)
                self.G.cuda()

            def load(self, path):
                state = torch.load(path)
                self.G.load_state_dict(state)

    """) + helper)
    (repo / "main.py").write_text("from gan import GAN\n\ndef main(path):\n    gan = GAN(8)\n")
    result = check_paths([str(repo / "gan.py")], Config(), use_cache=False)
    assert bool([f for f in result.findings if f.code == "ML203"]) == reported
