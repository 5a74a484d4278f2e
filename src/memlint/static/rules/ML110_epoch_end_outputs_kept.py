"""ML110 epoch-end-outputs-kept: a LightningModule overrides ``training_epoch_end(outputs)``
and its ``training_step`` returns tensors besides the loss.

Lightning (before 2.0) keeps the return value of every ``training_step`` of the epoch in a
list, to hand it to ``training_epoch_end``: every tensor returned besides the loss
(predictions, targets, features) stays on the device until the epoch ends, so memory grows
with every step, and a long epoch runs out of memory (Lightning issue #15514). Lightning 2.0
removed these hooks for this reason.
"""

from __future__ import annotations

import libcst as cst

from memlint.static.facts import FUNCTIONAL_LOSS_WORDS, ClassScope, Graph, constant_key, dotted_name
from memlint.static.rule import Invalid, Rule
from memlint.static.rules.ML101_graph_accumulation import source_of

# Methods of a tensor that return a Python number (not a tensor kept on the device).
_NUMBER_METHODS = frozenset({"item", "tolist", "size", "dim", "numel", "nelement", "element_size",
                             "get_device", "data_ptr", "__len__"})
_NUMBER_FUNCTIONS = frozenset({"float", "int", "bool", "len", "round", "str"})
_HOOKS = {"training_step": "training_epoch_end", "training_step_end": "training_epoch_end"}
# Tensor methods that reshape or retype a value where it is (on the same device).
_SHAPING_METHODS = frozenset({"view", "reshape", "unsqueeze", "squeeze", "float", "double", "long", "int",
                              "detach", "clone", "flatten"})
# torch functions that make a tensor on the host unless given device=.
_HOST_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.Tensor"})
# Python containers: what they hold is what is stored in them.
_CONTAINERS = frozenset({"dict", "list", "set", "collections.defaultdict", "collections.OrderedDict",
                         "collections.deque"})


def _is_container(node: object, facts) -> bool:
    if isinstance(node, (cst.Dict, cst.List, cst.Set)):
        return not any(True for _ in node.elements)  # empty here, filled below
    return isinstance(node, cst.Call) and (facts.qualified_name(node.func) or "") in _CONTAINERS


def _stored_in(name: str, facts) -> list[cst.BaseExpression]:
    """The values the current function stores in the container ``name``: ``name[k] = v``,
    ``name[k][j] = v``, ``name.append(v)``."""
    stored: list[cst.BaseExpression] = []
    stack: list[cst.CSTNode] = [facts.function.node]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Assign):
            for target in node.targets:
                root = target.target
                while isinstance(root, cst.Subscript):
                    root = root.value
                if root is not target.target and isinstance(root, cst.Name) and root.value == name:
                    stored.append(node.value)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in ("append", "add", "appendleft") and dotted_name(node.func.value) == name \
                and node.args:
            stored.append(node.args[0].value)
        stack.extend(node.children)
    return stored


class EpochEndOutputsKept(Rule):
    code = "ML110"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._returns: list[tuple[object, cst.Return, str]] = []

    def visit_Return(self, node: cst.Return) -> None:
        facts = self.facts
        function = facts.function
        info = function.class_info
        hook = _HOOKS.get(function.name)
        if hook is None or info is None or not info.is_lightning or not isinstance(function.parent, ClassScope):
            return
        if node.value is None:
            return
        if not facts.methods_of(info.name, hook):
            return
        if function.name == "training_step" and facts.methods_of(info.name, "training_step_end"):
            return  # Lightning hands it to training_step_end, whose return is what is kept
        value = node.value
        if isinstance(value, cst.Dict):
            for element in value.elements:
                if not isinstance(element, cst.DictElement):
                    continue
                key = constant_key(element.key)
                if key != "loss" and self._holds_tensor(element.value):
                    self._report(element.value, str(key) if key is not None else source_of(element.key), function.name, hook)
                    return
            return
        graph = facts.graph_value(value)
        if graph.parts is not None or graph.pending:
            self.at_function_exit(lambda: self._decide_parts(value, graph, function.name, hook))

    def _decide_parts(self, node: cst.BaseExpression, graph, method: str, hook: str) -> None:
        """``return self.shared_step(batch)``: the dict a helper of this module builds."""
        resolved = self.facts.resolve(graph)
        for key, part in resolved.parts or ():
            if key != "loss" and isinstance(key, str) and part.state is not Graph.NONE:
                self._report(node, key, method, hook)
                return

    def _holds_tensor(self, value: cst.BaseExpression, depth: int = 0) -> bool:
        """Is ``value`` a tensor (kept on the device), not a Python number?"""
        if isinstance(value, (cst.Integer, cst.Float, cst.BaseString)):
            return False
        if isinstance(value, cst.Call):
            func = value.func
            if isinstance(func, cst.Attribute) and func.attr.value in _NUMBER_METHODS:
                return False
            if isinstance(func, cst.Name) and func.value in _NUMBER_FUNCTIONS:
                return False
        binding = self.facts.lookup(value.value) if isinstance(value, cst.Name) else None
        if binding is not None and depth < 3 and _is_container(binding.node, self.facts):
            # mse_vals = defaultdict(dict); mse_vals[f][i] = ...: what the function stores in it
            return any(self._holds_tensor(stored, depth + 1) for stored in _stored_in(value.value, self.facts))
        graph = self.facts.graph_value(value).state
        if graph is not Graph.CARRIES and self._made_on_cpu(value):
            return False  # torch.tensor(metric).view(1), x.cpu(), x.numpy(): no device memory kept
        if graph is not Graph.CARRIES and self._detached_loss(value):
            return False  # scalar_loss.detach(): one number per step, no graph
        if graph is not Graph.NONE:
            return True
        if isinstance(value, cst.Name) and depth < 3:
            node = getattr(binding, "node", None)
            if isinstance(node, cst.BaseExpression) and not isinstance(node, cst.Name):
                return self._holds_tensor(node, depth + 1)
            return False
        return isinstance(value, (cst.Call, cst.Subscript, cst.Attribute))

    def _detached_loss(self, value: cst.BaseExpression) -> bool:
        """``scalar_loss.detach()`` where ``scalar_loss`` is a loss (a loss module's call, a
        functional loss, or a ``.mean()`` / ``.sum()`` of a value): a detached scalar per step."""
        detached = False
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in _SHAPING_METHODS:
            detached |= value.func.attr.value == "detach"
            value = value.func.value
        if not detached:
            return False
        if isinstance(value, cst.Name):  # every value the name is given here (one per branch)
            values = self.facts.function.stored_values.get(value.value, ())
            return bool(values) and all(self._a_loss(stored) or self._made_on_cpu(stored) for stored in values)
        return self._a_loss(value)

    def _a_loss(self, value: cst.BaseExpression) -> bool:
        if not isinstance(value, cst.Call):
            return False
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("mean", "sum") and not value.args:
            return True
        qualified = self.facts.qualified_name(func) or ""
        return self.facts.is_loss_module_call(value) or (
            qualified.startswith("torch.nn.functional.")
            and any(word in qualified.rsplit(".", 1)[-1] for word in FUNCTIONAL_LOSS_WORDS))

    def _made_on_cpu(self, value: cst.BaseExpression) -> bool:
        """``x.cpu()``, ``x.numpy()``, ``torch.tensor(v)`` / ``torch.as_tensor(v)`` with no
        ``device=`` (possibly reshaped: ``.view(1)``): a value on the host."""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in _SHAPING_METHODS:
            value = value.func.value
        if not isinstance(value, cst.Call):
            return False
        if isinstance(value.func, cst.Attribute) and value.func.attr.value in ("cpu", "numpy"):
            return True
        return self.facts.qualified_name(value.func) in _HOST_FACTORIES and not any(
            arg.keyword is not None and arg.keyword.value == "device" for arg in value.args)

    def _report(self, node: cst.CSTNode, key: str, method: str, hook: str) -> None:
        self.report(
            node,
            f"{method}() returns '{key[:20]}' besides the loss: kept every step until {hook}()",
            help=f"Lightning keeps what it returns for {hook}: return only the loss and update a metric "
                 f"each step (torchmetrics), or keep what {hook} needs yourself (.detach().cpu())",
            needs_grad=False,
        )

    VALID = [
        # the extra losses returned detached: one number per step, no graph
        """
import torch
import pytorch_lightning as pl
class Forecaster(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        preds = self(batch["x"])
        scalar_loss = self.criterion(preds[:, :2], batch["y"][:, :2])
        if self.has_vectors:
            vector_loss = self.criterion(preds[:, 2:], batch["y"][:, 2:])
        else:
            vector_loss = torch.tensor(0.0)
        loss = scalar_loss + vector_loss
        return {"loss": loss, "scalar_loss": scalar_loss.detach(), "vector_loss": vector_loss.detach()}
    def training_epoch_end(self, outputs):
        print(torch.stack([o["scalar_loss"] for o in outputs]).mean())
""",
        # per-sample metrics made on the host (torch.tensor of a number, .cpu()) in a container
        """
from collections import defaultdict
import torch
import pytorch_lightning as pl
class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        output = self(batch.x)
        loss = torch.nn.functional.mse_loss(output, batch.y)
        mse_vals = defaultdict(dict)
        for i, fname in enumerate(batch.fname):
            mse_vals[fname][i] = torch.tensor(float(((output[i] - batch.y[i]) ** 2).mean())).view(1)
        return {"loss": loss, "mse_vals": mse_vals, "target": batch.y[0].cpu()}

    def training_epoch_end(self, outputs):
        self.log("mse", torch.cat([v for o in outputs for d in o["mse_vals"].values() for v in d.values()]).mean())
""",
        # training_step's dict goes to an overridden training_step_end: only that one's return is kept
        """
import torch
import pytorch_lightning as pl
class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        output = self(batch.x)
        return {"loss": torch.nn.functional.mse_loss(output, batch.y), "output": output, "target": batch.y}

    def training_step_end(self, train_logs):
        return {"loss": train_logs["loss"]}

    def training_epoch_end(self, outputs):
        self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())
""",
        # only the loss is returned: Lightning keeps one detached scalar per step
        """
import torch
import pytorch_lightning as pl
class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        self.log("acc", (logits.argmax(-1) == y).float().mean())
        return {"loss": loss, "n": len(y), "acc": (logits.argmax(-1) == y).float().mean().item()}
    def training_epoch_end(self, outputs):
        self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())
""",
        # no epoch-end hook that receives the outputs: Lightning drops them after each step
        """
import torch
import lightning as L
class Model(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        return {"loss": torch.nn.functional.cross_entropy(logits, y), "preds": logits.argmax(-1)}
    def on_train_epoch_end(self):
        pass
""",
    ]

    INVALID = [
        # a list the step fills with device tensors (detached: the tensors themselves are kept)
        Invalid("""
import torch
import pytorch_lightning as pl
class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        logits = self(batch[0])
        loss = torch.nn.functional.cross_entropy(logits, batch[1])
        preds = []
        for row in logits:
            preds.append(row.argmax().detach())
        return {"loss": loss, "preds": preds}

    def training_epoch_end(self, outputs):
        self.log("n", float(len(outputs)))
""", line=11),
        Invalid("""
import torch
import pytorch_lightning as pl
class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        return {"loss": loss, "preds": logits.detach(), "target": y}
    def training_epoch_end(self, outputs):
        preds = torch.cat([o["preds"] for o in outputs])
""", line=9),
        # the dict comes from a shared step of the same module
        Invalid("""
import torch
import pytorch_lightning as pl
class Model(pl.LightningModule):
    def shared_step(self, batch):
        x, y = batch
        z = self.encoder(x)
        return {"loss": self.criterion(self.head(z), y), "x": z}
    def training_step(self, batch, batch_idx):
        return self.shared_step(batch)
    def training_epoch_end(self, outputs):
        pass
""", line=10),
    ]
