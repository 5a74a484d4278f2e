"""ML209 output-attentions-in-training: a training forward asks a Hugging Face model for
``output_attentions=True`` (or ``output_hidden_states=True``) and never reads them.

With ``output_attentions=True`` transformers cannot use SDPA or FlashAttention (which never
build the attention matrix): it falls back to eager attention, materialises every layer's
``batch x heads x seq x seq`` attention probabilities, returns them all, and autograd keeps
them for the backward pass. At sequence length 4096 that is gigabytes per layer group, on
every training step, for maps nobody looks at. ``output_hidden_states=True`` returns every
layer's hidden states; most are saved for backward anyway, so the cost is small (reported
as info).

Flagged: a call with ``output_attentions=True`` / ``output_hidden_states=True`` (a literal) in
a function that trains (it backpropagates, or it is ``training_step`` / ``compute_loss`` /
``train_step``) with autograd enabled, when the function never reads the attentions (resp.
hidden states): no ``.attentions`` / ``["attentions"]`` / ``.hidden_states``, no index past
the first output, and the outputs are not handed on whole (returned, passed to a function,
stored). Also ``from_pretrained(..., output_attentions=True)`` /
``config.output_attentions = True`` in a module that trains and whose code (not its comments)
never reads them. Not flagged: under ``torch.no_grad()`` / ``inference_mode()``, a model put
in ``eval()`` mode, or in a function that does not train (visualisation, evaluation);
attention distillation and layer pooling that read them.
"""

from __future__ import annotations

import os

import libcst as cst

from memlint.static.facts import FunctionScope, dotted_name, names_in
from memlint.static.rule import Invalid, Rule

_FLAGS = {"output_attentions": "attentions", "output_hidden_states": "hidden_states"}
_TRAINING_METHODS = frozenset({"training_step", "compute_loss", "train_step", "training_step_end", "_training_step"})
_TRAINING_TEXT = ("backward(", "Trainer(", ".fit(", "training_step")
# Subscripts of the outputs that are not the extra outputs.
_FIRST_OUTPUTS = frozenset({"0", "'loss'", '"loss"', "'logits'", '"logits"'})


class OutputAttentionsInTraining(Rule):
    code = "ML209"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._config_flags: list[tuple[cst.CSTNode, str]] = []
        self._scheduled = False
        self._words_read: set[str] = set()  # "attentions"/"hidden_states" read somewhere in the code

    def visit_Call(self, node: cst.Call) -> None:
        flag_args = [arg for arg in node.args
                     if arg.keyword is not None and arg.keyword.value in _FLAGS and _is_true(arg.value)]
        if not flag_args:
            return
        facts = self.facts
        func = node.func
        last = func.attr.value if isinstance(func, cst.Attribute) else dotted_name(func) or ""
        if last.endswith(("from_pretrained", "Config", "from_config")) or "config" in last.lower():
            for arg in flag_args:
                self._config_flag(arg, arg.keyword.value)
            return
        if facts.in_no_grad:
            return
        receiver = dotted_name(func.value) if isinstance(func, cst.Attribute) and last == "forward" else dotted_name(func)
        if receiver is not None:
            mode = facts.mode_of(receiver)
            if mode is not None and mode.mode == "eval":
                return
        function = facts.function
        results = set(self._checker.assign_targets)
        loop = facts.loop

        def decide() -> None:
            trains = function.has_backward or function.name in _TRAINING_METHODS or (
                loop is not None and loop.is_training_loop)
            if not trains:
                return
            for arg in flag_args:  # reported at the flag itself: one finding per flag, in order
                flag = arg.keyword.value
                if _reads(function, results, _FLAGS[flag]):
                    continue
                self._report(arg, flag, receiver or last)

        self.at_function_exit(decide)

    # What the module's code reads (not its comments): an attribute, a name or a key holding
    # the word, other than the flags themselves.
    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._note_word(node.attr.value)

    def visit_Name(self, node: cst.Name) -> None:
        self._note_word(node.value)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self._note_word(node.value.strip("'\"bBrRuU"))

    def _note_word(self, text: str) -> None:
        if text in _FLAGS:
            return
        for word in _FLAGS.values():
            if word in text:
                self._words_read.add(word)

    def visit_Assign(self, node: cst.Assign) -> None:
        # model.config.output_attentions = True
        for target in node.targets:
            name = dotted_name(target.target)
            if name is not None and name.rsplit(".", 1)[-1] in _FLAGS and ".config" in f".{name}" and _is_true(node.value):
                self._config_flag(node, name.rsplit(".", 1)[-1])

    def _config_flag(self, node: cst.CSTNode, flag: str) -> None:
        self._config_flags.append((node, flag))
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide_config)

    def _decide_config(self) -> None:
        source = self._checker.source
        if not any(text in source for text in _TRAINING_TEXT):
            return
        for node, flag in self._config_flags:
            if _FLAGS[flag] in self._words_read:
                continue  # read somewhere in the module
            if self._read_in_other_modules(_FLAGS[flag]):
                continue  # the config reaches every call of the model: another module may read them
            self._report(node, flag, "the model")

    def _read_in_other_modules(self, word: str) -> bool:
        """Does another module of the project name ``word`` ("attentions", "hidden_states"), or is
        that unknown? A flag set on the config changes the model's outputs wherever it runs: a
        trainer of another module may read them (``outputs[2]`` for the hidden states of a
        distillation loss), and only one that never names them cannot."""
        project = self.facts.project
        if project is None:
            return False
        mentioning = project.modules_mentioning(word)
        return mentioning is None or any(
            os.path.realpath(module.path) != os.path.realpath(self._checker.path) for module in mentioning)

    def _report(self, node: cst.CSTNode, flag: str, what: str) -> None:
        if flag == "output_attentions":
            self.report(
                node,
                f"'{what}' runs with output_attentions=True in training and never reads the attentions",
                help="drop it: it forces eager attention and keeps every layer's seq x seq maps for backward (ask "
                     "for them under torch.no_grad() to visualise)",
                needs_grad=False,
            )
        else:
            self.report(
                node,
                f"'{what}' runs with output_hidden_states=True in training and never reads them",
                help="drop it: every layer's hidden states are returned and held until the step ends",
                needs_grad=False, severity="info",
            )

    VALID = [
        # visualisation under no_grad
        """
import torch
def attention_maps(model, batch):
    with torch.no_grad():
        out = model(**batch, output_attentions=True)
    return [a.cpu() for a in out.attentions]
""",
        # attention distillation reads them
        """
import torch
import torch.nn.functional as F
def distill_step(student, teacher, batch, optimizer):
    with torch.no_grad():
        t_out = teacher(**batch, output_attentions=True)
    s_out = student(**batch, output_attentions=True)
    loss = sum(F.mse_loss(s, t) for s, t in zip(s_out.attentions, t_out.attentions))
    loss.backward()
    optimizer.step()
""",
        # layer pooling over hidden states, by index
        """
import torch
def train_step(model, head, batch, optimizer):
    outputs = model(input_ids=batch["input_ids"], output_hidden_states=True)
    pooled = torch.stack(outputs[2][-4:]).mean(0)[:, 0]
    loss = head(pooled, batch["labels"])
    loss.backward()
    optimizer.step()
""",
        # evaluation: the model is in eval mode, no backward
        """
def evaluate(model, loader):
    model.eval()
    for batch in loader:
        out = model(**batch, output_attentions=True)
        yield out.logits.argmax(-1)
""",
        # the outputs are handed on whole
        """
import torch
class Trainer:
    def compute_loss(self, model, inputs, return_outputs=False):
        outputs = model(**inputs, output_hidden_states=True)
        loss = self.loss_fn(outputs, inputs["labels"])
        return (loss, outputs) if return_outputs else loss
""",
        # a config flag in a module that reads the attentions
        """
from transformers import AutoModel, Trainer
model = AutoModel.from_pretrained("bert-base-uncased", output_attentions=True)
def compute_loss(model, inputs):
    out = model(**inputs)
    return out.loss + 0.1 * sum(a.mean() for a in out.attentions)
""",
    ]

    INVALID = [
        Invalid("""
import torch
def train(model, loader, optimizer):
    model.train()
    for batch in loader:
        outputs = model(**batch, output_attentions=True)
        loss = outputs.loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""", line=6),
        # Lightning training_step, hidden states never read (info)
        Invalid("""
import torch
import lightning as L
class Classifier(L.LightningModule):
    def training_step(self, batch, batch_idx):
        out = self.model(batch["input_ids"], attention_mask=batch["attention_mask"],
                         labels=batch["labels"], output_hidden_states=True)
        self.log("train_loss", out.loss)
        return out.loss
""", line=7),
        # a config flag in a training script that never reads them
        Invalid("""
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments
model = AutoModelForSequenceClassification.from_pretrained("roberta-base", output_attentions=True)
trainer = Trainer(model=model, args=TrainingArguments("out"), train_dataset=None)
trainer.train()
""", line=3),
        # a comment that mentions attentions is not a read
        Invalid("""
import pytorch_lightning as pl
from transformers import BertModel
class Classifier(pl.LightningModule):
    def __init__(self, name):
        super().__init__()
        # we may want to look at the attentions one day
        self.bert = BertModel.from_pretrained(name, output_attentions=True)

    def training_step(self, batch, batch_idx):
        return self.bert(**batch).pooler_output.sum()
""", line=8),
    ]


def _reads(function: FunctionScope, results: set[str], word: str) -> bool:
    """Does ``function`` read the extra outputs (``word``: "attentions"/"hidden_states"), or
    hand the outputs (``results``) on whole, where they may be read?"""
    stack: list[cst.CSTNode] = [function.node]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Attribute) and word in node.attr.value:
            return True
        if isinstance(node, cst.Name) and word in node.value:
            return True
        if isinstance(node, cst.SimpleString) and word in node.value:
            return True
        if isinstance(node, cst.Subscript) and dotted_name(node.value) in results:
            index = node.slice[0].slice if node.slice else None
            if not (isinstance(index, cst.Index) and cst.Module(body=()).code_for_node(index.value) in _FIRST_OUTPUTS):
                return True
        if isinstance(node, cst.Arg):
            if node.keyword is None and dotted_name(node.value) in results:
                return True  # passed on whole
            stack.append(node.value)  # not the keyword: output_attentions=True itself
            continue
        if isinstance(node, (cst.Return, cst.Yield)) and node.value is not None and names_in(node.value) & results:
            if not _only_attribute_uses(node.value, results):
                return True
        if isinstance(node, cst.Tuple) and any(dotted_name(el.value) in results for el in node.elements):
            return True
        stack.extend(node.children)
    return False


def _only_attribute_uses(node: cst.CSTNode, results: set[str]) -> bool:
    """``return out.loss``: every use of the outputs is an attribute read."""
    if isinstance(node, cst.Attribute) and dotted_name(node.value) in results:
        return True
    if isinstance(node, cst.Name):
        return node.value not in results
    return all(_only_attribute_uses(child, results) for child in node.children if isinstance(child, cst.BaseExpression))


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"
