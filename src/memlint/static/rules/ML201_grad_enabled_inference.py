"""ML201 grad-enabled-inference: a module put in eval mode is called with autograd on.

Autograd then records the forward pass and keeps every activation it saved for a backward
pass that never comes: evaluation uses several times the memory it needs, and a validation
loop that also accumulates its outputs grows until the epoch ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from memlint.static.facts import FunctionScope, Graph, dotted_name
from memlint.static.fixes import no_grad_fix
from memlint.static.rule import Invalid, Rule


@dataclass
class _ModuleCall:
    target: str
    node: cst.Call
    results: frozenset[str]
    eval_mode: bool
    input_carries: bool = False  # an argument carries a graph (e.g. a generator's output)


@dataclass
class _FunctionCalls:
    calls: list[_ModuleCall] = field(default_factory=list)


class GradEnabledInference(Rule):
    code = "ML201"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._calls: dict[int, _FunctionCalls] = {}

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        target = _called_module(node)
        if target is None or facts.in_no_grad:
            return
        change = facts.mode_of(target)
        is_eval = change is not None and change.mode == "eval"
        if change is None and not facts.is_module_expr(node.func if target == dotted_name(node.func) else node.func.value):
            return
        function = facts.function
        record = self._calls.get(id(function))
        if record is None:
            record = self._calls[id(function)] = _FunctionCalls()
            self.at_function_exit(lambda: self._decide(function, record))
        input_carries = any(facts.graph_value(arg.value).state is Graph.CARRIES for arg in node.args)
        record.calls.append(_ModuleCall(target, node, self._checker.assign_targets, is_eval, input_carries))

    def _decide(self, function: FunctionScope, record: _FunctionCalls) -> None:
        def backpropagated(call: _ModuleCall) -> bool:
            return id(call.node) in function.backward_nodes or function.is_backpropagated(call.results)

        for call in record.calls:
            if not call.eval_mode or call.target in self.facts.frozen_modules:
                continue
            if backpropagated(call):
                if function.requires_grad_inputs:
                    continue  # saliency / adversarial examples: gradients w.r.t. the input
                # another module trained on its own inputs (a student, a generator); a criterion or
                # a head fed with this call's output is downstream of it, not "another module"
                trained_elsewhere = any(
                    other.target != call.target and not other.eval_mode and not other.input_carries
                    and backpropagated(other)
                    for other in record.calls
                )
                if not trained_elsewhere:
                    continue  # training in eval mode on purpose (frozen batch-norm statistics)
                if call.input_carries:
                    continue  # gradients flow through it into the trained module (GAN generator step)
                message = (
                    f"'{call.target}' is in eval mode but runs with autograd enabled while another "
                    f"module is trained: its activations are saved and gradients computed for "
                    f"parameters that never update; call it under 'with torch.no_grad():' "
                    f"(or freeze it with {call.target}.requires_grad_(False))"
                )
            else:
                message = (
                    f"'{call.target}' is in eval mode but called with autograd enabled: every "
                    f"activation is kept for a backward pass that never comes; run it under "
                    f"'with torch.no_grad():' (or torch.inference_mode())"
                )
            self.report(call.node, message, fix=no_grad_fix(call.node, self.facts))

    VALID = [
        # no_grad context
        """
import torch
def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            out = model(x)
""",
        # no_grad decorator, no_grad via the caller, inference_mode
        """
import torch
@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return [model(x) for x in loader]

def validate(model, loader):
    model.eval()
    return [model(x) for x in loader]

def fit(model, loader):
    with torch.inference_mode():
        validate(model, loader)
""",
        # saliency: the eval-mode output is backpropagated to the input
        """
import torch
def saliency(model, image, target):
    model.eval()
    image.requires_grad_()
    out = model(image)
    out[0, target].backward()
    return image.grad.abs()
""",
        # adversarial examples with autograd.grad
        """
import torch
import torch.nn.functional as F
def fgsm(model, x, y, eps):
    model.eval()
    x_adv = x.clone().requires_grad_(True)
    loss = F.cross_entropy(model(x_adv), y)
    grad, = torch.autograd.grad(loss, [x_adv])
    return x_adv + eps * grad.sign()
""",
        # a method merely named eval on something that is not a module
        """
import torch
def run(env, agent):
    env.eval()
    state = env.reset()
    return state
""",
        # back in train mode before the call
        """
import torch
def epoch(model, train_loader, opt, crit):
    model.eval()
    model.train()
    for x, y in train_loader:
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
""",
        # training in eval mode on purpose (frozen batch norm): the output is backpropagated
        """
import torch
def finetune(model, loader, opt, crit):
    model.eval()
    for x, y in loader:
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
""",
        # a frozen teacher does not record a graph
        """
import torch
def distill(teacher, student, loader, opt, kd):
    teacher.eval()
    teacher.requires_grad_(False)
    for x, y in loader:
        loss = kd(student(x), teacher(x))
        loss.backward()
        opt.step()
""",
        # a GAN generator step through an eval-mode discriminator: the backward must pass
        # through it to reach the generator, so its activations are needed (fastai GANTrainer)
        """
import torch
def generator_step(generator, discriminator, loader, opt_g, crit):
    discriminator.eval()
    generator.train()
    for z, _ in loader:
        fake = generator(z)
        loss = crit(discriminator(fake), torch.ones(z.size(0)))
        opt_g.zero_grad()
        loss.backward()
        opt_g.step()
""",
        # the PyTorch transfer-learning tutorial: one loop for both phases, grad on only for "train";
        # the criterion fed with the model's output is not "another module being trained"
        """
import torch
def train_model(model, criterion, optimizer, dataloaders, num_epochs=25):
    for epoch in range(num_epochs):
        for phase in ["train", "val"]:
            if phase == "train":
                model.train()
            else:
                model.eval()
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == "train"):
                    outputs = model(inputs)
                    loss = criterion(outputs, labels)
                    if phase == "train":
                        loss.backward()
                        optimizer.step()
    return model
""",
        # Lightning runs validation_step under no_grad
        """
import torch
import lightning as L
class Model(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        self.backbone.eval()
        return self.backbone(batch)
""",
    ]

    VALID += [
        # a grad context held in a variable, or chosen by an if-expression (lightning)
        """
import contextlib
import torch
def extract(model, loader, freeze=True):
    model.eval()
    ctx = torch.no_grad() if freeze else contextlib.nullcontext()
    feats = []
    with ctx:
        for x in loader:
            feats.append(model(x).cpu())
    with contextlib.nullcontext() if not freeze else torch.no_grad():
        last = model(x)
    return feats, last
""",
        # the global switch as a statement
        """
import torch
def evaluate(model, loader):
    model.eval()
    torch.set_grad_enabled(False)
    return [model(x).argmax(1) for x, y in loader]
""",
        # set_grad_enabled(flag): grad may be off, so not reported (skorch, speechbrain)
        """
import torch
def evaluate(model, loader, training=False):
    model.eval()
    outs = []
    for x in loader:
        with torch.set_grad_enabled(training):
            outs.append(model(x))
    return outs
""",
        # frozen through its parameters (speechbrain's freeze_model)
        """
import torch
def distill(student, teacher, loader, opt, crit):
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad = False
    for x, y in loader:
        loss = crit(student(x), teacher(x))
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        # mode chosen by a branch: unknown afterwards
        """
import torch
def run_epoch(model, loader, phase):
    if phase == "train":
        model.train()
    else:
        model.eval()
    for x, y in loader:
        out = model(x)
""",
    ]

    INVALID = [
        Invalid("""
import torch
def evaluate(model, loader, crit):
    model.eval()
    total = 0.0
    for x, y in loader:
        out = model(x)
        total += crit(out, y).item()
    return total
""", line=7),
        # validation loop inside the training epoch, without no_grad
        Invalid("""
import torch
def train(model, train_loader, val_loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        model.eval()
        correct = 0
        for x, y in val_loader:
            preds = model(x).argmax(1)
            correct += (preds == y).sum().item()
""", line=14),
        # model.forward and .train(False)
        Invalid("""
import torch
def predict(net, batches):
    net.train(False)
    return [net.forward(b).argmax(-1) for b in batches]
""", line=5),
        # a teacher in eval mode, called outside no_grad while the student trains
        Invalid("""
import torch
import torch.nn.functional as F
def distill(teacher, student, loader, opt):
    teacher.eval()
    student.train()
    for x, y in loader:
        t_out = teacher(x)
        s_out = student(x)
        loss = F.kl_div(F.log_softmax(s_out, -1), F.softmax(t_out, -1)) + F.cross_entropy(s_out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
""", line=8),
        # eval mode set before a branch still holds inside it
        Invalid("""
import torch
def predict(model, batches, verbose):
    model.eval()
    if verbose:
        return [model(b) for b in batches]
    return None
""", line=6),
        # module-level script
        Invalid("""
import torch
from torch import nn
model = nn.Sequential(nn.Linear(4, 4))
model.eval()
x = torch.randn(2, 4)
y = model(x)
""", line=7),
    ]


def _called_module(call: cst.Call) -> str | None:
    """``model`` for ``model(x)`` and ``model.forward(x)``; ``self`` for ``self(x)``."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "forward":
        return dotted_name(func.value)
    if isinstance(func, (cst.Name, cst.Attribute)):
        return dotted_name(func)
    return None
