"""ML212 persistent-workers-per-evaluation: a DataLoader with ``persistent_workers=True`` is
built anew for every evaluation (or every epoch).

``persistent_workers=True`` keeps a loader's worker processes alive between passes over it,
so that the next epoch does not pay their start-up. That only helps if the same loader is
iterated again. Built per evaluation, every new loader starts its own ``num_workers``
processes (each with a copy of the dataset and the imported modules), and any reference
still held to an old loader keeps its workers alive: ``accelerator.prepare()`` keeps every
prepared loader, so transformers' Trainer leaked ``num_workers`` processes per evaluation
until the machine ran out of memory or file descriptors (huggingface/transformers#28469).

Flagged: ``DataLoader(..., persistent_workers=<not False>)`` built inside an epoch or step loop,
in a method named for evaluation loaders (``get_eval_dataloader``, ``get_test_dataloader``...),
or in a function of this module called inside an epoch or training loop, unless the function caches the loader
(an ``if`` on an attribute of ``self`` or a module-level cache, such as
``if name in self._eval_dataloaders:``). Not flagged: a loader built once (at module level,
in ``__init__``, in ``train_dataloader``/``val_dataloader`` hooks that Lightning calls once),
``persistent_workers=False``, loaders built in a loop over datasets at setup.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import FunctionScope, Loop, _tokens, dotted_name, names_in
from memlint.static.rule import Invalid, Rule

_EVAL_WORDS = frozenset({"eval", "evaluation", "val", "valid", "validation", "test", "predict", "prediction"})
# Lightning hooks, called once per fit: a loader built there is built once.
_LIGHTNING_HOOKS = frozenset({"train_dataloader", "val_dataloader", "test_dataloader", "predict_dataloader"})


@dataclass
class _Loader:
    node: cst.Call
    function: FunctionScope
    loop: Loop | None
    name: str | None


class PersistentWorkersPerEvaluation(Rule):
    code = "ML212"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._loaders: list[_Loader] = []
        self._called_in_loops: dict[str, list[Loop]] = {}  # function name -> loops it is called in
        self._caching: set[int] = set()  # id() of functions with an if on self's (or global) state
        self._scheduled = False

    def visit_If(self, node: cst.If) -> None:
        function = self.facts.function
        names = names_in(node.test)
        for name in names:
            root = name.split(".", 1)[0]
            if (root == "self" and ("." in name or names & {"getattr", "hasattr"})) or (
                    function is not self.facts.module_scope and root not in function.bindings
                    and root in self.facts.module_scope.bindings):
                self._caching.add(id(function))
                return

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        func = node.func
        if facts.loop is not None:
            callee = func.attr.value if isinstance(func, cst.Attribute) else dotted_name(func)
            if callee:
                self._called_in_loops.setdefault(callee, []).append(facts.loop)
        qualified = facts.qualified_name(func) or ""
        if qualified.rsplit(".", 1)[-1] != "DataLoader":
            return
        persistent = next((arg.value for arg in node.args
                           if arg.keyword is not None and arg.keyword.value == "persistent_workers"), None)
        if persistent is None:
            persistent = self._from_keyword_dict(node)
        if persistent is None or _is_off(persistent):
            return
        targets = [name for name in self._checker.assign_targets if name != "self"]
        self._loaders.append(_Loader(node, facts.function, facts.loop, targets[0] if len(targets) == 1 else None))
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide)

    def _from_keyword_dict(self, node: cst.Call) -> cst.BaseExpression | None:
        """``DataLoader(ds, **params)`` with ``params = {..., "persistent_workers": ...}`` bound here."""
        for arg in node.args:
            if arg.star == "**" and isinstance(arg.value, cst.Name):
                binding = self.facts.lookup(arg.value.value)
                if binding is not None and isinstance(binding.node, cst.Dict):
                    for element in binding.node.elements:
                        if (isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)
                                and element.key.evaluated_value == "persistent_workers"):
                            return element.value
        return None

    def _decide(self) -> None:
        for loader in self._loaders:
            where = self._rebuilt(loader)
            if where is None:
                continue
            what = f"'{loader.name}' is a new DataLoader" if loader.name else "a new DataLoader is built"
            self.report(
                loader.node,
                f"{what} with persistent_workers=True on {where}",
                help="build it once and reuse it: each new one starts its own workers, and a loader still "
                     "referenced (accelerator.prepare keeps them) keeps them alive",
                needs_grad=False,
            )

    def _rebuilt(self, loader: _Loader) -> str | None:
        """Where the loader is built again and again ("every epoch", "every call of f()"), or None."""
        loop = loader.loop
        if loop is not None:
            return "every epoch" if _repeats_training(loop) else None  # else a loop over datasets, at setup
        function = loader.function
        if function is self.facts.module_scope or function.name in _LIGHTNING_HOOKS or function.name == "__init__":
            return None
        if id(function) in self._caching:
            return None  # cached: built once per name
        tokens = set(_tokens(function.name))
        if any(_repeats_training(loop) for loop in self._called_in_loops.get(function.name, ())):
            return f"every call of {function.name}(), every epoch"
        if function.class_info is not None and tokens & _EVAL_WORDS and ("loader" in tokens or "dataloader" in tokens):
            return f"every call of {function.name}()"  # a trainer's method, called on every evaluation
        return None

    VALID = [
        # built once, iterated every epoch
        """
import torch
from torch.utils.data import DataLoader
def fit(model, train_set, val_set, epochs, evaluate, train_epoch):
    train_loader = DataLoader(train_set, batch_size=64, num_workers=8, persistent_workers=True)
    val_loader = DataLoader(val_set, batch_size=64, num_workers=4, persistent_workers=True)
    for epoch in range(epochs):
        train_epoch(model, train_loader)
        evaluate(model, val_loader)
""",
        # the eval loader is cached per dataset name (transformers' fix)
        """
from torch.utils.data import DataLoader
class Trainer:
    def get_eval_dataloader(self, eval_dataset=None, name="eval"):
        if name in self._eval_dataloaders:
            return self._eval_dataloaders[name]
        loader = DataLoader(eval_dataset, batch_size=self.args.eval_batch_size,
                            num_workers=self.args.dataloader_num_workers,
                            persistent_workers=self.args.dataloader_persistent_workers)
        self._eval_dataloaders[name] = loader
        return loader
""",
        # Lightning's hooks, called once per fit
        """
import lightning as L
from torch.utils.data import DataLoader
class DataModule(L.LightningDataModule):
    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=32, num_workers=4, persistent_workers=True)
""",
        # a module-level builder called once at setup
        """
from torch.utils.data import DataLoader
def get_test_loader(dataset):
    return DataLoader(dataset, batch_size=64, num_workers=4, persistent_workers=True)

test_loader = get_test_loader(None)
""",
        # persistent workers off in the per-evaluation builder; loaders for each dataset at setup
        """
from torch.utils.data import DataLoader
def get_eval_dataloader(dataset, workers):
    return DataLoader(dataset, batch_size=32, num_workers=workers, persistent_workers=False)

def build_loaders(datasets):
    loaders = {}
    for name, dataset in datasets.items():
        loaders[name] = DataLoader(dataset, batch_size=32, num_workers=2, persistent_workers=True)
    return loaders
""",
    ]

    VALID += [
        # a helper called in a setup loop over the splits (pytorch_geometric's graphgym)
        """
from torch.utils.data import DataLoader
def get_loader(dataset, batch_size, workers):
    return DataLoader(dataset, batch_size=batch_size, num_workers=workers, persistent_workers=workers > 0)

def create_loaders(splits, batch_size, workers):
    loaders = []
    for split in splits:
        loaders.append(get_loader(split, batch_size, workers))
    return loaders
""",
    ]

    INVALID = [
        # an eval loader per epoch
        Invalid("""
import torch
from torch.utils.data import DataLoader
def fit(model, train_loader, val_set, epochs, train_epoch, evaluate):
    for epoch in range(epochs):
        train_epoch(model, train_loader)
        val_loader = DataLoader(val_set, batch_size=128, num_workers=8, persistent_workers=True)
        evaluate(model, val_loader)
""", line=7),
        # a Trainer override that builds (and prepares) a new loader on every evaluation
        Invalid("""
from torch.utils.data import DataLoader
from transformers import Trainer
class MyTrainer(Trainer):
    def get_eval_dataloader(self, eval_dataset=None):
        dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
        loader = DataLoader(dataset, batch_size=self.args.eval_batch_size, collate_fn=self.data_collator,
                            num_workers=self.args.dataloader_num_workers,
                            persistent_workers=self.args.dataloader_persistent_workers)
        return self.accelerator.prepare(loader)
""", line=7),
        # a helper called from the epoch loop
        Invalid("""
import torch
from torch.utils.data import DataLoader
def evaluate(model, dataset):
    loader = DataLoader(dataset, batch_size=256, num_workers=4, persistent_workers=True)
    with torch.no_grad():
        return sum(model(x).argmax(1).eq(y).sum().item() for x, y in loader) / len(dataset)

def main(model, train, val_set, epochs):
    for epoch in range(epochs):
        train(model)
        print(evaluate(model, val_set))
""", line=5),
    ]


def _repeats_training(loop: Loop) -> bool:
    """An epoch loop, or a loop that trains (evaluating every N steps)."""
    return loop.mentions_epoch or loop.contains_step_loop or loop.is_training_loop


def _is_off(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Name):
        return node.value in ("False", "None")
    return isinstance(node, cst.Integer) and node.value == "0"
