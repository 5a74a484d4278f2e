"""ML216 predictions-collected-unused: ``trainer.predict(...)`` whose result is thrown away.

Lightning's ``Trainer.predict`` keeps what ``predict_step`` returns for every batch of the run,
to hand the whole list back at the end (``return_predictions`` defaults to True). When the
caller throws that list away — the predictions are written by a ``BasePredictionWriter``
callback, or by ``predict_step`` itself — every batch's outputs are still held until the run
ends: memory grows with the dataset and a large inference job dies part-way through.

Evidence, all required:

- the call is a statement of its own (the result is never read) with no
  ``return_predictions=`` argument other than ``True``;
- the receiver is a Lightning ``Trainer`` (built in view), or the module imports Lightning and
  the call passes an argument only ``Trainer.predict`` takes (``datamodule=``, ``ckpt_path=``);
- ``predict_step`` returns something: the model passed is a class of this module whose
  ``predict_step`` returns a value (or that inherits Lightning's, which returns the forward
  output), or this module defines a prediction writer (which exists to receive predictions).
"""

from __future__ import annotations

import libcst as cst

from memlint.static.facts import ClassInfo, Scope, dotted_name
from memlint.static.fixes import add_keyword_fix
from memlint.static.rule import Invalid, Rule

# Arguments of Lightning's ``Trainer.predict`` that no other common ``predict`` takes.
_LIGHTNING_ONLY_ARGUMENTS = frozenset({"datamodule", "ckpt_path"})
_LIGHTNING_ROOTS = ("lightning.", "pytorch_lightning.")


def _is_lightning(qualified: str | None, class_name: str) -> bool:
    return bool(qualified) and qualified.startswith(_LIGHTNING_ROOTS) and qualified.rsplit(".", 1)[-1] == class_name


def _returns_a_value(function: cst.FunctionDef) -> bool:
    """Does ``function`` return something other than None on some path?"""
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        if isinstance(node, cst.Return) and node.value is not None \
                and not (isinstance(node.value, cst.Name) and node.value.value == "None"):
            return True
        stack.extend(node.children)
    return False


class PredictionsCollectedUnused(Rule):
    code = "ML216"

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if type(call) is not cst.Call or type(call.func) is not cst.Attribute or call.func.attr.value != "predict":
            return
        facts = self.facts
        if not facts.imports.uses_lightning:
            return
        keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
        returned = keywords.get("return_predictions")
        if returned is not None and not (isinstance(returned, cst.Name) and returned.value == "True"):
            return
        receiver = call.func.value
        built_by = facts.qualified_name(receiver.func) if type(receiver) is cst.Call else facts.constructed_by(receiver)
        if not _is_lightning(built_by, "Trainer") \
                and not _LIGHTNING_ONLY_ARGUMENTS & keywords.keys():
            return
        model = keywords.get("model")
        if model is None and call.args and call.args[0].keyword is None and not call.args[0].star:
            model = call.args[0].value
        scope = facts.scope
        self.at_module_exit(lambda: self._decide(call, receiver, model, scope))

    def _decide(self, call: cst.Call, receiver: cst.BaseExpression, model: cst.BaseExpression | None,
                scope: Scope) -> None:
        if not (self._model_returns_predictions(model, scope) or self._defines_a_writer()):
            return
        name = dotted_name(receiver) or "trainer"
        self.report(
            call,
            f"{name}.predict() keeps every batch's predictions to return them, and the result is thrown away: "
            "they all stay in memory until the run ends",
            help="pass return_predictions=False (the writer callback or predict_step still sees every batch)",
            fix=add_keyword_fix(call, "return_predictions", "False", safe=True),
            needs_grad=False,
        )

    def _model_returns_predictions(self, model: cst.BaseExpression | None, scope: Scope) -> bool:
        info = self.facts.instance_class(model, scope) if model is not None else None
        if info is None or not info.is_lightning:
            return False
        predict_step = self.facts.find_method(info, "predict_step")
        if predict_step is not None:
            return _returns_a_value(predict_step.node)
        # Lightning's own predict_step returns self(batch); a base of the project elsewhere may not
        return all(_is_lightning(base, "LightningModule") for base in info.base_names)

    def _defines_a_writer(self) -> bool:
        return any(_is_lightning(base, "BasePredictionWriter")
                   for info in self.facts.classes.values() for base in info.base_names)

    VALID = [
        # the predictions are used
        """
import lightning.pytorch as pl

class Model(pl.LightningModule):
    def predict_step(self, batch, batch_idx):
        return self(batch)

def run(loader):
    trainer = pl.Trainer(accelerator="gpu")
    predictions = trainer.predict(Model(), loader)
    return predictions
""",
        # a writer callback receives them, and the trainer is told not to keep them
        """
import lightning.pytorch as pl
from lightning.pytorch.callbacks import BasePredictionWriter

class Writer(BasePredictionWriter):
    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx, dataloader_idx):
        pass

def run(model, datamodule):
    trainer = pl.Trainer(callbacks=[Writer(write_interval="batch")])
    trainer.predict(model, datamodule=datamodule, return_predictions=False)
""",
        # predict_step writes its own output and returns nothing: a list of None is kept
        """
import torch
import lightning.pytorch as pl

class Model(pl.LightningModule):
    def predict_step(self, batch, batch_idx):
        torch.save(self(batch).cpu(), f"out_{batch_idx}.pt")

def run(loader):
    trainer = pl.Trainer()
    trainer.predict(Model(), loader)
""",
        # a scikit-learn style predict whose result is discarded (not Lightning's Trainer)
        """
import lightning.pytorch as pl
from sklearn.linear_model import LogisticRegression

def probe(features, labels):
    clf = LogisticRegression().fit(features, labels)
    clf.predict(features)
""",
        # a model handed in, no writer in view: what predict_step returns is unknown
        """
import lightning.pytorch as pl

def run(model, loader):
    trainer = pl.Trainer()
    trainer.predict(model, loader)
""",
    ]

    INVALID = [
        Invalid("""
import torch
import lightning.pytorch as pl
from lightning.pytorch.callbacks import BasePredictionWriter

class Writer(BasePredictionWriter):
    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx, dataloader_idx):
        torch.save(prediction.cpu(), f"pred_{batch_idx}.pt")

def run(model, datamodule):
    trainer = pl.Trainer(accelerator="gpu", callbacks=[Writer(write_interval="batch")])
    trainer.predict(model, datamodule=datamodule)
""", line=12, fixed="trainer.predict(model, datamodule=datamodule, return_predictions=False)"),
        # a trainer handed in; the model's predict_step returns its embeddings
        Invalid("""
import torch.nn as nn
import pytorch_lightning as pl

class Embedder(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(16, 8)

    def predict_step(self, batch, batch_idx):
        return {"embedding": self.net(batch)}

def embed(trainer, datamodule):
    trainer.predict(model=Embedder(), datamodule=datamodule)
""", line=14),
        # Lightning's own predict_step returns the forward output
        Invalid("""
import torch.nn as nn
from lightning.pytorch import LightningModule, Trainer

class Net(LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        return self.layer(x)

def main(loader):
    model = Net()
    trainer = Trainer(devices=1)
    trainer.predict(model, dataloaders=loader)
""", line=16),
    ]
