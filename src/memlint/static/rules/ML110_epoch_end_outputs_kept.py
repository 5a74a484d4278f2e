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

from memlint.static.facts import ClassScope, Graph, constant_key
from memlint.static.rule import Invalid, Rule
from memlint.static.rules.ML101_graph_accumulation import source_of

# Methods of a tensor that return a Python number (not a tensor kept on the device).
_NUMBER_METHODS = frozenset({"item", "tolist", "size", "dim", "numel", "nelement", "element_size",
                             "get_device", "data_ptr", "__len__"})
_NUMBER_FUNCTIONS = frozenset({"float", "int", "bool", "len", "round", "str"})
_HOOKS = {"training_step": "training_epoch_end", "training_step_end": "training_epoch_end"}


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
        if self.facts.graph_value(value).state is not Graph.NONE:
            return True
        if isinstance(value, cst.Name) and depth < 3:
            binding = self.facts.lookup(value.value)
            node = getattr(binding, "node", None)
            if isinstance(node, cst.BaseExpression) and not isinstance(node, cst.Name):
                return self._holds_tensor(node, depth + 1)
            return False
        return isinstance(value, (cst.Call, cst.Subscript, cst.Attribute))

    def _report(self, node: cst.CSTNode, key: str, method: str, hook: str) -> None:
        self.report(
            node,
            f"{method}() returns '{key[:20]}' besides the loss: kept every step until {hook}()",
            help=f"Lightning keeps what it returns for {hook}: return only the loss and update a metric "
                 f"each step (torchmetrics), or keep what {hook} needs yourself (.detach().cpu())",
            needs_grad=False,
        )

    VALID = [
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
