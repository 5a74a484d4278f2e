"""ML303 full-state-dict-on-every-rank: an FSDP model's full state dict is gathered on
every rank, on the GPU.

``StateDictType.FULL_STATE_DICT`` all-gathers every parameter into one unsharded copy of
the model. With the default ``FullStateDictConfig()`` each rank builds that full copy in
GPU memory: an FSDP job sized so that one shard fits runs out of memory at its first
checkpoint, and N ranks hold N copies of which only rank 0 writes one.
``FullStateDictConfig(offload_to_cpu=True, rank0_only=True)`` moves each gathered
parameter to CPU and keeps it only on rank 0.

Flagged: ``FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT[, config])`` and
``FSDP.set_state_dict_type(...)`` with no config, or with a ``FullStateDictConfig`` that
does not set both ``offload_to_cpu=True`` and ``rank0_only=True`` (a config held in a name
is followed to its assignment). Not flagged: a config it cannot see (a parameter, an
attribute) or whose flags are variables; a ``with FSDP.state_dict_type(...)`` block that
only loads (``load_state_dict``: the config only affects ``state_dict()``), or where no
``state_dict()`` / save is in view;
``SHARDED_STATE_DICT`` / ``LOCAL_STATE_DICT``; comparisons with ``FULL_STATE_DICT``;
accelerate's ``FullyShardedDataParallelPlugin`` (it defaults to offload + rank 0 only); a
``state_dict()`` of a name that is bound to the FSDP wrapper on some paths only (``self.model``
also set to the bare model) unless the call sits under a test that mentions FSDP.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import dotted_name, is_module_name
from memlint.static.rule import Invalid, Rule

_SETTERS = frozenset({"state_dict_type", "set_state_dict_type"})
_NO_CONFIG = "no config"
_SAVING_METHODS = frozenset({"state_dict", "optim_state_dict", "full_optim_state_dict", "get_state_dict",
                             "get_model_state_dict", "get_optimizer_state_dict", "save", "save_pretrained"})
_LOADING_METHODS = frozenset({"load_state_dict", "optim_state_dict_to_load", "set_state_dict",
                              "set_model_state_dict", "set_optimizer_state_dict", "load",
                              "scatter_full_optim_state_dict", "shard_full_optim_state_dict"})


# What gathers an optimizer's state: under ``state_dict_type`` it follows ``optim_state_dict_config``.
_OPTIMIZER_SAVING_METHODS = frozenset({"optim_state_dict", "full_optim_state_dict", "get_optimizer_state_dict"})


def _optimizer_config(call: cst.Call) -> cst.BaseExpression | None:
    """``optim_state_dict_config=...`` of a ``state_dict_type(...)`` call (or its fourth argument)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "optim_state_dict_config":
            return arg.value
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    return positional[3] if len(positional) > 3 else None


def _is_empty(node: cst.BaseExpression) -> bool:
    """``fsdp=""``, ``fsdp=None``, ``fsdp=False``, ``fsdp=[]``: no FSDP."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value in ("", b"")
    if isinstance(node, cst.Name):
        return node.value in ("None", "False")
    return isinstance(node, (cst.List, cst.Tuple)) and not node.elements


@dataclass
class _Block:
    node: cst.With
    call: cst.Call
    problem: str  # what the call lacks, see FullStateDictOnEveryRank._problem
    saves: bool = False
    loads: bool = False
    saves_the_model: bool = False  # a saving call other than the optimizer's (``FSDP.optim_state_dict``)


class FullStateDictOnEveryRank(Rule):
    code = "ML303"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._blocks: list[_Block] = []
        self._in_with_item: set[int] = set()
        self._fsdp_names: set[str] = set()  # names bound to FullyShardedDataParallel(...)
        self._prepared_names: set[str] = set()  # of those, returned by accelerator.prepare()
        self._trainer_names: set[str] = set()  # names bound to a *Trainer(...)
        self._fsdp_trainer = False  # TrainingArguments(fsdp=...) / fsdp_config=... in the module
        self._plain_state_dicts: list[tuple[cst.Call, str, bool]] = []  # (call, owner, under an FSDP test)
        self._scheduled = False
        self._not_fsdp: set[str] = set()  # names also bound to something else (self.model = model)
        self._tests: list[bool] = []  # the enclosing ifs: does the test mention FSDP?

    def visit_If(self, node: cst.If) -> None:
        self._tests.append("fsdp" in cst.Module([]).code_for_node(node.test).lower())

    def leave_If(self, node: cst.If) -> None:
        self._tests.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        assigned = {dotted_name(element) for target in node.targets for element in (
            [e.value for e in target.target.elements] if isinstance(target.target, cst.Tuple)
            else [target.target])} - {None}
        before = set(self._fsdp_names)
        self._assign(node)
        self._not_fsdp |= assigned - (self._fsdp_names - before)  # bound here to something else

    def _assign(self, node: cst.Assign) -> None:
        if not isinstance(node.value, cst.Call):
            return
        func = node.value.func
        last = (self.facts.qualified_name(func) or "").rsplit(".", 1)[-1]
        names = {dotted_name(element.value) for target in node.targets
                 for element in (target.target.elements if isinstance(target.target, cst.Tuple) else ())} - {None}
        names |= {dotted_name(target.target) for target in node.targets} - {None}
        if last == "FullyShardedDataParallel":
            self._fsdp_names |= names
        elif (isinstance(func, cst.Attribute) and func.attr.value == "prepare"
              and "FullyShardedDataParallelPlugin" in self._checker.source
              and "fsdp_version=2" not in self._checker.source):  # FSDP2's state_dict() stays sharded
            # accelerate with an FSDP plugin: what prepare() returns is FSDP-wrapped (the model among them)
            prepared = {name for name in names if is_module_name(name.rsplit(".", 1)[-1])}
            self._fsdp_names |= prepared
            self._prepared_names |= prepared
        elif last.endswith("Trainer"):
            self._trainer_names |= names

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if isinstance(call, cst.Call):
                problem = self._problem(call)
                if problem is not None:
                    self._blocks.append(_Block(node, call, problem))
                    self._in_with_item.add(id(call))

    def leave_With(self, node: cst.With) -> None:
        while self._blocks and self._blocks[-1].node is node:
            block = self._blocks.pop()
            if not block.saves:
                continue  # loading (the config only affects state_dict()), or what the block does is not in view
            if not block.saves_the_model and _optimizer_config(block.call) is not None:
                # only the optimizer's state is gathered there: its own config decides
                problem = self._config_problem(_optimizer_config(block.call))
                if problem is not None:
                    self._report(block.call, problem)
                continue
            self._report(block.call, block.problem)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in ("fsdp", "fsdp_config") and not _is_empty(arg.value):
                self._fsdp_trainer = True
        if isinstance(func, cst.Attribute) and func.attr.value == "state_dict" and not self._blocks:
            self._note_state_dict(node, dotted_name(func.value))
        if self._blocks and isinstance(func, (cst.Attribute, cst.Name)):
            method = func.attr.value if isinstance(func, cst.Attribute) else func.value
            if method in _SAVING_METHODS:
                for block in self._blocks:
                    block.saves = True
                    block.saves_the_model |= method not in _OPTIMIZER_SAVING_METHODS
            elif method in _LOADING_METHODS:
                for block in self._blocks:
                    block.loads = True
        if id(node) in self._in_with_item:
            return
        problem = self._problem(node)
        if problem is not None:
            self._report(node, problem)

    def _note_state_dict(self, node: cst.Call, owner: str | None) -> None:
        """``model.state_dict()`` of an FSDP model, or ``trainer.model.state_dict()`` of a Trainer
        with FSDP settings, outside any state_dict_type block (decided at the end of the module)."""
        if owner is None:
            return
        self._plain_state_dicts.append((node, owner, any(self._tests)))
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide_state_dicts)

    def _decide_state_dicts(self) -> None:
        source = self._checker.source
        if any(text in source for text in ("state_dict_type", "get_model_state_dict", "StateDictOptions")):
            return  # the module configures how the state dict is gathered
        for node, owner, under_fsdp_test in self._plain_state_dicts:
            parts = owner.split(".")
            through_trainer = (self._fsdp_trainer and len(parts) >= 2 and parts[-1] in ("model", "model_wrapped")
                               and ".".join(parts[:-1]) in self._trainer_names)
            if owner not in self._fsdp_names and not through_trainer:
                continue
            if owner in self._not_fsdp and not through_trainer and not under_fsdp_test:
                continue  # self.model holds the FSDP wrapper on some paths only: this one is not known to
            if through_trainer:
                remedy = "save with trainer.save_model(), which sets FSDP's state-dict config itself"
            elif owner in self._prepared_names:
                remedy = f"use accelerator.get_state_dict({owner}), which sets FSDP's state-dict config itself"
            else:
                remedy = (f"call it under FSDP.state_dict_type({owner}, StateDictType.FULL_STATE_DICT, "
                          f"FullStateDictConfig(offload_to_cpu=True, rank0_only=True))")
            self.report(
                node,
                f"'{owner}.state_dict()' of an FSDP model gathers the whole model on every rank's GPU",
                help=remedy,
                needs_grad=False,
            )

    def _report(self, node: cst.Call, missing: str) -> None:
        if missing == _NO_CONFIG:
            message = "FULL_STATE_DICT with no FullStateDictConfig gathers the whole model on every rank's GPU"
            help = "pass FullStateDictConfig(offload_to_cpu=True, rank0_only=True) as its state_dict_config"
        elif missing == "offload_to_cpu=True":
            message = "FULL_STATE_DICT without offload_to_cpu=True gathers the whole model in rank 0's GPU memory"
            help = "set offload_to_cpu=True in its FullStateDictConfig"
        elif missing == "rank0_only=True":
            message = "FULL_STATE_DICT without rank0_only=True copies the whole model to every rank's CPU memory"
            help = "set rank0_only=True in its FullStateDictConfig (only rank 0 needs the copy it saves)"
        else:
            message = "FULL_STATE_DICT without offload_to_cpu and rank0_only gathers the model on every rank's GPU"
            help = "set offload_to_cpu=True and rank0_only=True in its FullStateDictConfig"
        self.report(node, message, help=help, needs_grad=False)

    def _problem(self, call: cst.Call) -> str | None:
        """What the full-state-dict call lacks (``_NO_CONFIG``, or the flags its config does not
        set); None when it sets both, is not one, or cannot be told."""
        func = call.func
        method = func.attr.value if isinstance(func, cst.Attribute) else dotted_name(func)
        if method is None or method.rsplit(".", 1)[-1] not in _SETTERS:
            return None
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
        if any(arg.star for arg in call.args):
            return None
        kind = keywords.get("state_dict_type")
        kind_index = None
        for index, value in enumerate(positional):
            if self._is_full_state_dict(value):
                kind, kind_index = value, index
        if kind is None or not self._is_full_state_dict(kind):
            return None
        config = keywords.get("state_dict_config")
        if config is None and kind_index is not None and len(positional) > kind_index + 1:
            config = positional[kind_index + 1]
        if config is None:
            return _NO_CONFIG
        return self._config_problem(config)

    def _is_full_state_dict(self, node: cst.BaseExpression) -> bool:
        qualified = self.facts.qualified_name(node) or ""
        return qualified.endswith("StateDictType.FULL_STATE_DICT")

    def _config_problem(self, config: cst.BaseExpression, depth: int = 0) -> str | None:
        if isinstance(config, cst.Name) and depth < 3:
            binding = self.facts.lookup(config.value)
            if binding is not None and isinstance(binding.node, cst.Call):
                return self._config_problem(binding.node, depth + 1)
            return None
        if not isinstance(config, cst.Call):
            return None
        qualified = self.facts.qualified_name(config.func) or ""
        if not qualified.endswith(("FullStateDictConfig", "FullOptimStateDictConfig")):
            return None
        values: dict[str, cst.BaseExpression] = {}
        positional = [arg.value for arg in config.args if arg.keyword is None and not arg.star]
        if any(arg.star for arg in config.args):
            return None
        for name, value in zip(("offload_to_cpu", "rank0_only"), positional):
            values[name] = value
        for arg in config.args:
            if arg.keyword is not None:
                values[arg.keyword.value] = arg.value
        missing = []
        for flag in ("offload_to_cpu", "rank0_only"):
            value = values.get(flag)
            if value is None or (isinstance(value, cst.Name) and value.value == "False"):
                missing.append(f"{flag}=True")
            elif not (isinstance(value, cst.Name) and value.value == "True"):
                return None  # a variable: can't tell
        if not missing:
            return None
        return " and ".join(missing)

    VALID = [
        # self.model is wrapped in FSDP on one path only: a save on another path is not known to
        # hold the wrapper
        """
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
class Trainer:
    def __init__(self, model, fsdp):
        self.model, self.fsdp = model, fsdp
    def wrap(self):
        if self.fsdp:
            self.model = FSDP(self.model)
    def save_tpu(self, path):
        torch.save(self.model.state_dict(), path)
""",
        # a restore: the block fills the parameters from a file (helpers of the project), no state_dict()
        """
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType, FullStateDictConfig

def restore_checkpoint(dist_model, optim, load_path):
    with FSDP.state_dict_type(dist_model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(rank0_only=False, offload_to_cpu=True)):
        state_dict_to_load = load_state_dict(load_path, "model.pt", map_location="cpu")
        copy_into_flat_params(dist_model, state_dict_to_load)
        load_fsdp_optim_state(dist_model, optim, load_state_dict(load_path, "optim.pt", map_location="cpu"))
""",
        # offloaded to CPU, rank 0 only
        """
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullStateDictConfig, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

def save_checkpoint(model, path):
    config = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, config):
        state = model.state_dict()
    if dist.get_rank() == 0:
        torch.save(state, path)
""",
        # sharded checkpoints; comparisons with FULL_STATE_DICT
        """
import torch.distributed.checkpoint as dcp
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType

def save(model, path, state_dict_type):
    if state_dict_type == StateDictType.FULL_STATE_DICT:
        raise ValueError("use save_full()")
    with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
        dcp.save({"model": model.state_dict()}, checkpoint_id=path)
""",
        # loading a full state dict: the config only affects state_dict()
        """
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType

def load(model, path):
    state = torch.load(path, map_location="cpu")
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
        model.load_state_dict(state)
""",
        # a config passed in by the caller, flags from variables; accelerate's plugin
        """
from accelerate import FullyShardedDataParallelPlugin
from torch.distributed.fsdp import FullStateDictConfig, FullyShardedDataParallel as FSDP, StateDictType

def gather(model, state_dict_config):
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, state_dict_config):
        return model.state_dict()

def configure(offload, rank0):
    FSDP.set_state_dict_type(model, StateDictType.FULL_STATE_DICT,
                             FullStateDictConfig(offload_to_cpu=offload, rank0_only=rank0))
    return FullyShardedDataParallelPlugin(state_dict_type=StateDictType.FULL_STATE_DICT)
""",
    ]

    VALID += [
        # the Trainer saves the FSDP model itself; a state_dict of a model that is not FSDP
        """
from transformers import Trainer, TrainingArguments
def finish(model, data, ddp_model):
    args = TrainingArguments("out", fsdp="full_shard auto_wrap")
    trainer = Trainer(model=model, args=args, train_dataset=data)
    trainer.train()
    trainer.save_model("final")
    return ddp_model.state_dict()
""",
    ]

    INVALID = [
        # ... and the save on the FSDP path itself
        Invalid("""
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
class Trainer:
    def __init__(self, model, fsdp):
        self.model, self.fsdp = model, fsdp
    def wrap(self):
        if self.fsdp:
            self.model = FSDP(self.model)
    def save(self, path):
        if self.fsdp is not None:
            torch.save(self.model.state_dict(), path)
""", line=12),
        # the state dict of a Trainer's FSDP-wrapped model
        Invalid("""
import torch
from transformers import Trainer, TrainingArguments
def train_and_save(model, data):
    args = TrainingArguments("out", fsdp="full_shard auto_wrap", bf16=True)
    trainer = Trainer(model=model, args=args, train_dataset=data)
    trainer.train()
    state = trainer.model.state_dict()
    if trainer.is_world_process_zero():
        torch.save(state, "model.pt")
""", line=8),
        # accelerate with an FSDP plugin: the prepared model's own state_dict() (accelerate#1181)
        Invalid("""
import torch
from accelerate import Accelerator, FullyShardedDataParallelPlugin
def train(model, optimizer, loader):
    accelerator = Accelerator(fsdp_plugin=FullyShardedDataParallelPlugin(sharding_strategy="FULL_SHARD"))
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        accelerator.backward(model(**batch).loss)
        optimizer.step()
    state = model.state_dict()
    accelerator.save(state, "model.pt")
""", line=10),
        # a raw FSDP model's state_dict with no state_dict_type anywhere
        Invalid("""
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
def train(module, loader, optimizer, path):
    model = FSDP(module, device_id=torch.cuda.current_device())
    for batch in loader:
        model(batch).sum().backward()
        optimizer.step()
    state = model.state_dict()
    if dist.get_rank() == 0:
        torch.save(state, path)
""", line=10),
        Invalid("""
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType

def save_checkpoint(model, optimizer, path):
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
        state = model.state_dict()
    if dist.get_rank() == 0:
        torch.save(state, path)
""", line=7),
        # rank0_only without offload: rank 0 still gathers on its GPU
        Invalid("""
import torch
from torch.distributed.fsdp import FullStateDictConfig, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

save_policy = FullStateDictConfig(rank0_only=True)

def save(model, path):
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, save_policy):
        cpu_state = model.state_dict()
    torch.save(cpu_state, path)
""", line=9),
        # set_state_dict_type with a keyword config lacking rank0_only
        Invalid("""
from torch.distributed import fsdp

def configure(model):
    fsdp.FullyShardedDataParallel.set_state_dict_type(
        model,
        state_dict_type=fsdp.StateDictType.FULL_STATE_DICT,
        state_dict_config=fsdp.FullStateDictConfig(offload_to_cpu=True),
    )
""", line=5),
    ]
