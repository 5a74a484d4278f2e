"""ML103 retain-graph-in-loop: ``backward(retain_graph=True)`` every iteration on a graph that
is not backpropagated again in that iteration.

``retain_graph=True`` keeps the graph's saved tensors after the backward pass. That is needed
when a second backward pass goes through the same graph (a GAN's generator loss after the
discriminator's, a gradient penalty, per-row Jacobians). Otherwise the retained graph lives
until the next iteration replaces it, and the usual reason it is there at all is to silence
"Trying to backward through the graph a second time", whose real cause is a value carried
into the next iteration with its graph (ML102): then the graph is never freed and grows
every step.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import FunctionScope, Graph, Kind, Loop, backpropagated_expr, in_other_arms, names_in, visit
from memlint.static.fixes import remove_keyword_fix
from memlint.static.rule import Invalid, Rule
from memlint.static.rules.ML101_graph_accumulation import fit, source_of

_BACKWARD_METHODS = frozenset({"backward", "manual_backward"})
_AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.backward", "torch.autograd.grad"})


@dataclass
class _Backward:
    node: cst.Call
    loops: tuple[Loop, ...]  # enclosing loops of the function, outermost first
    names: frozenset[str]  # names in the backpropagated tensor
    retains: bool
    branches: tuple[tuple[int, str], ...] = ()  # the if/else arms it is in
    # torch.autograd.grad(..., create_graph=True): the names its gradients are bound to
    created: frozenset[str] = frozenset()
    # what the pass goes through: torch.autograd.grad's inputs, and a tensor.backward(grad)'s tensor
    through: frozenset[str] = frozenset()

    def excludes(self, other: "_Backward") -> bool:
        """Are the two in different arms of one ``if`` (never both in one iteration)?"""
        return in_other_arms(self.branches, other.branches)


class RetainGraphInLoop(Rule):
    code = "ML103"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._by_function: dict[int, list[_Backward]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        func = node.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if method not in _BACKWARD_METHODS and facts.qualified_name(func) not in _AUTOGRAD_FUNCTIONS:
            return
        tensor = backpropagated_expr(node)
        if tensor is None:
            return
        function = facts.function
        records = self._by_function.get(id(function))
        if records is None:
            records = self._by_function[id(function)] = []
            self.at_function_exit(lambda: self._decide(function, records))
        retains = any(arg.keyword is not None and arg.keyword.value == "retain_graph"
                      and isinstance(arg.value, cst.Name) and arg.value.value == "True" for arg in node.args)
        creates = any(arg.keyword is not None and arg.keyword.value == "create_graph"
                      and isinstance(arg.value, cst.Name) and arg.value.value == "True" for arg in node.args)
        if creates:
            # retain_graph defaults to create_graph: with create_graph=True the graph is kept
            # whatever retain_graph says, for the higher-order graph that reads it (a gradient
            # penalty backpropagated by the caller). retain_graph=True changes nothing there.
            retains = False
        created = self._checker.assign_targets if creates and facts.qualified_name(func) == "torch.autograd.grad" \
            else frozenset()
        through: set[str] = set()
        if facts.qualified_name(func) == "torch.autograd.grad":
            positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
            inputs = positional[1] if len(positional) > 1 else next(
                (arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "inputs"), None)
            through = names_in(inputs) if inputs is not None else set()
        elif isinstance(func, cst.Attribute) and method == "backward":
            through = names_in(func.value)  # input.backward(out_grad): through input's graph
        records.append(_Backward(node, tuple(facts.loops_in_function()), frozenset(names_in(tensor)), retains,
                                 tuple(facts.branch_path), created, frozenset(through)))

    # ----- decision at function exit ---------------------------------------------------------------
    def _decide(self, function: FunctionScope, records: list[_Backward]) -> None:
        for record in records:
            if not record.retains:
                continue
            if record.created and any(function.derives_from(other.names, record.created)
                                      for other in records if other is not record):
                continue  # a gradient penalty: its gradients (and the retained graph) are backpropagated later
            if function.derives_from(function.returned_names, record.names):
                continue  # the tensor goes back to the caller with its graph: it may backpropagate it
            if record.loops and not record.loops[-1].runs_steps and any(
                    other is not record and record.loops[-1] not in other.loops and record.through & other.through
                    for other in records):
                # The heads of one step's loss (for name, loss in losses.items(): autograd.grad(loss,
                # [input], retain_graph=True)), then a pass after the loop through the same input
                # (input.backward(out_grad)): the graph is used again, and freed, within the step.
                continue
            if record.loops:
                loop: Loop | None = record.loops[-1]
                # (not a name bound only in another arm of an if: ``if stochastic: w = f(p)``
                # beside ``else: grad(w, ...)`` reuses the graph made before the loop)
                bound = {name for name in loop.bound_this_iteration
                         if not all(in_other_arms(record.branches, arms) for arms in loop.bound_in_arms.get(name, [()]))}
            elif function.is_per_step_method:
                loop = None  # forward / training_step: one call is one iteration
                bound = {name for name, b in function.bindings.items() if not isinstance(b.node, cst.Param)}
                bound |= {name for name in function.stored_values if name.startswith("self.")}  # self.out = ...
            else:
                continue
            ancestors = self._graph_ancestors(function, record.names)
            if self._graph_from_outside(function, record, ancestors, bound):
                # Several backward passes over one graph built before this loop (layers, heads,
                # rows of a Jacobian): fine if one of them, or one after the loop, frees it within
                # the step; if every one retains it, it outlives the step (layer-wise distillation).
                if loop is not None and not _is_step(loop) and self._retained_past_the_step(function, record, records):
                    self.report(
                        record.node,
                        fit("'{call}' retains one graph for {what}: it outlives the step",
                            call=source_of(record.node, 50), what=_what(loop)),
                        help="retain it for all but the last (retain_graph=i < n - 1), or sum the losses and "
                             "call backward() once",
                    )
                continue
            if any(self._same_graph(function, record, other, ancestors, bound)
                   for other in records
                   if other is not record and (loop is None or loop in other.loops) and not record.excludes(other)):
                continue  # a second backward pass through this graph in the same iteration
            carried = sorted(name for name in ancestors if name in bound and name in function.derived_from.get(name, ()))
            text = source_of(record.node, 50)
            if carried:
                cause = (f"'{carried[0]}' carries every earlier step's graph (ML102): detach it once per "
                         f"iteration ({carried[0]} = {carried[0]}.detach()) and drop retain_graph=True")
            else:
                cause = ("drop retain_graph=True; if it silenced \"Trying to backward through the graph a second "
                         "time\", detach the value carried into the next iteration (ML102)")
            self.report(
                record.node,
                fit("'{call}' retains a graph that nothing backpropagates through again",
                    call=text),
                help=cause,
                # dropping it alone would break a loop-carried graph: no fix then (detach first)
                fix=None if carried else remove_keyword_fix(record.node, "retain_graph"),
            )

    def _retained_past_the_step(self, function: FunctionScope, record: _Backward, records: list[_Backward]) -> bool:
        """Inside a step (a step loop around the inner loop, or a per-step method), does no
        backward pass free the graph ``record`` retains?"""
        step = next((loop for loop in reversed(record.loops[:-1]) if _is_step(loop)), None)
        if step is None and not function.is_per_step_method:
            return False  # a helper (a Jacobian): the graph dies with the call
        bound = step.bound_this_iteration if step is not None else {
            name for name, b in function.bindings.items() if not isinstance(b.node, cst.Param)} | {
            name for name in function.stored_values if name.startswith("self.")}
        ancestors = self._graph_ancestors(function, record.names) | set(record.names)
        for other in records:
            if other is record or other.retains or record.excludes(other):
                continue
            if step is not None and step not in other.loops:
                continue
            if self._same_graph(function, record, other, ancestors, bound | ancestors):
                return False
        return True

    def _binding(self, function: FunctionScope, name: str):
        if name.startswith("self.") and function.class_info is not None:
            return function.class_info.attributes.get(name)
        scope = function
        while scope is not None:
            if name in scope.bindings:
                return scope.bindings[name]
            scope = scope.parent
        return None

    def _graph_ancestors(self, function: FunctionScope, names: frozenset[str], through_calls: bool = False) -> set[str]:
        """The names that hold (or may hold) a graph, that the backpropagated tensor comes from.
        ``through_calls``: also the arguments of a call a name was bound to, whatever the
        callee's summary says of them (``pen = disc.gradient_penalty(real, fake)``: a summary
        that knows only that the result carries the module's graph does not say it leaves out
        ``fake``'s): for telling that two backward passes may share a graph, where an unknown
        link must silence, not report."""
        def holds_a_graph(name: str) -> bool:
            binding = self._binding(function, name)
            if binding is None or binding.kind is Kind.MODULE or binding.called:
                return False  # (a module or another callable: not a tensor with a graph)
            # The backpropagated tensor itself has a graph whatever its binding says (a loop
            # target such as `loss` in `for loss in losses` is bound without one).
            return binding.graph.state is not Graph.NONE or name in names

        def sources(name: str) -> Iterable[str]:
            if not holds_a_graph(name):
                return ()
            derived = function.derived_from.get(name, ())
            binding = self._binding(function, name) if through_calls else None
            if binding is not None and isinstance(binding.node, cst.Call):
                return set(derived) | {found for arg in binding.node.args for found in names_in(arg.value)}
            return derived

        holding = [name for name in visit(names, sources) if holds_a_graph(name)]
        return set(holding)

    def _graph_from_outside(self, function: FunctionScope, record: _Backward, ancestors: set[str],
                            bound: set[str]) -> bool:
        for name in ancestors | set(record.names):
            if name in bound:
                continue
            binding = self._binding(function, name)
            # (the tensor backpropagated itself has a graph whatever its value says: backward needs one)
            if binding is not None and (binding.kind is Kind.MODULE or binding.called or (
                    binding.graph.state is Graph.NONE and name not in record.names)):
                continue
            is_param = binding is None or isinstance(binding.node, cst.Param)
            if is_param and name not in record.names:
                continue  # an input of the function, not the tensor itself: says nothing
            if name in ("self", "cls"):
                continue
            return True
        return False

    def _same_graph(self, function: FunctionScope, record: _Backward, other: _Backward, ancestors: set[str],
                    bound: set[str]) -> bool:
        shared = self._graph_ancestors(function, other.names, through_calls=True) & (
            ancestors | self._graph_ancestors(function, record.names, through_calls=True))
        return bool(shared & bound) or bool(record.names & other.names & (bound | ancestors))

    VALID = [
        # a gradient penalty computed by a method of the discriminator from the generator's
        # output, then the critic loss through that same output: the second backward pass needs
        # the graph the first retained (what the method returns is known only to carry a graph)
        """
import torch
from torch import nn


class Discriminator(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.seq = nn.Linear(dim, 1)

    def calc_gradient_penalty(self, real_data, fake_data, device="cpu"):
        alpha = torch.rand(real_data.size(0), 1, device=device)
        interpolates = alpha * real_data + ((1 - alpha) * fake_data)
        disc_interpolates = self(interpolates)
        gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                        grad_outputs=torch.ones(disc_interpolates.size(), device=device),
                                        create_graph=True, retain_graph=True, only_inputs=True)[0]
        return ((gradients.norm(2, dim=1) - 1) ** 2).mean()

    def forward(self, x):
        return self.seq(x)


class Synthesizer:
    def __init__(self, device):
        self._device = device

    def fit(self, data, epochs, steps):
        generator = nn.Linear(8, 4).to(self._device)
        discriminator = Discriminator(4).to(self._device)
        optimizerD = torch.optim.Adam(discriminator.parameters())
        for i in range(epochs):
            for id_ in range(steps):
                fakez = torch.randn(64, 8, device=self._device)
                fake = generator(fakez)
                real = data[torch.randint(0, len(data), (64,))].to(self._device)
                y_fake = discriminator(fake)
                y_real = discriminator(real)
                pen = discriminator.calc_gradient_penalty(real, fake, self._device)
                loss_d = -(torch.mean(y_real) - torch.mean(y_fake))
                optimizerD.zero_grad()
                pen.backward(retain_graph=True)
                loss_d.backward()
                optimizerD.step()
""",
        # DeepFool: per-class input gradients over one graph, in a while loop that refines one input
        # (it takes in no data and updates no parameters: no step for the graph to outlive)
        """
import torch


def deepfool(clf, x, n_class, max_iter=50):
    nx = x.clone().requires_grad_(True)
    eta = torch.zeros_like(x)
    out = clf(nx + eta)
    py = ny = int(out.argmax())
    i_iter = 0
    while py == ny and i_iter < max_iter:
        out[0, py].backward(retain_graph=True)
        grad_py = nx.grad.clone()
        best = None
        for i in range(n_class):
            nx.grad.zero_()
            out[0, i].backward(retain_graph=True)
            best = nx.grad - grad_py
        eta = eta + best
        out = clf(nx + eta)
        py = int(out.argmax())
        i_iter += 1
    return eta
""",
        # the same attack as a count of iterations over one batch (for i in range(nb_iter)): each
        # iteration builds one graph and rebinds it in the next; nothing new is taken in
        """
import numpy as np
import torch


def deepfool(predict, xvar, yvar, nb_iter=50):
    x = torch.empty_like(xvar).copy_(xvar).requires_grad_(True)
    batch_i = torch.arange(x.shape[0])
    for i in range(nb_iter):
        if x.grad is not None:
            x.grad.zero_()
        logits = predict(x)
        order = np.argsort(logits.detach().cpu().numpy(), axis=-1)
        logits[batch_i, order[:, -1]].sum().backward(retain_graph=True)
        grad_orig = x.grad.data.clone()
        for inds in order[:, :-1].T:
            x.grad.zero_()
            logits[batch_i, inds].sum().backward(retain_graph=True)
            x.data.add_(0.01 * (x.grad.data - grad_orig).sign())
    return x.detach()
""",
        # the heads of one step's loss, each differentiated with respect to the model's output, then
        # one pass through that output with the balanced gradient (a loss balancer)
        """
import torch
from torch import autograd
class Balancer:
    def backward(self, losses, output):
        grads = {}
        for name, loss in losses.items():
            grad, = autograd.grad(loss, [output], retain_graph=True)
            grads[name] = grad / grad.norm()
        output.backward(sum(grads.values()))
""",
        # GAN: the discriminator's backward retains the graph through `fake` for the generator's
        """
import torch
def train_gan(netG, netD, loader, optD, optG, criterion, nz, device):
    for real, _ in loader:
        real = real.to(device)
        noise = torch.randn(real.size(0), nz, 1, 1, device=device)
        fake = netG(noise)
        ones = torch.ones(real.size(0), device=device)
        zeros = torch.zeros(real.size(0), device=device)
        optD.zero_grad()
        d_loss = criterion(netD(real).view(-1), ones) + criterion(netD(fake).view(-1), zeros)
        d_loss.backward(retain_graph=True)
        optD.step()
        optG.zero_grad()
        g_loss = criterion(netD(fake).view(-1), ones)
        g_loss.backward()
        optG.step()
""",
        # gradient penalty: autograd.grad retains, then the total loss is backpropagated
        """
import torch
def train_critic(critic, loader, opt, gp_weight):
    for real in loader:
        real.requires_grad_(True)
        scores = critic(real)
        grads = torch.autograd.grad(scores.sum(), real, create_graph=True, retain_graph=True)[0]
        penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
        loss = -scores.mean() + gp_weight * penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        # per-row Jacobian: many backward passes over one graph built before the loop
        """
import torch
def jacobian(model, x):
    x = x.requires_grad_(True)
    y = model(x)
    rows = []
    for i in range(y.shape[1]):
        (g,) = torch.autograd.grad(y[:, i].sum(), x, retain_graph=True)
        rows.append(g)
    return torch.stack(rows, dim=1)
""",
        # several heads' losses over one shared forward pass, backpropagated one by one: the
        # last one frees the graph
        """
import torch
def train(model, loader, opt, criteria):
    for x, targets in loader:
        features = model.backbone(x)
        opt.zero_grad()
        for i, (name, criterion) in enumerate(criteria.items()):
            loss = criterion(model.heads[name](features), targets[name])
            loss.backward(retain_graph=i < len(criteria) - 1)
        opt.step()
""",
        # per-layer distillation losses retained, then the task loss frees the shared graph
        """
import torch
import torch.nn.functional as F
def distill(student, teacher, loader, opt, layer_pairs, criterion):
    for x, y in loader:
        out = student(x, output_hidden_states=True)
        with torch.no_grad():
            t_feats = teacher(x, output_hidden_states=True).hidden_states
        opt.zero_grad()
        for s_idx, t_idx in layer_pairs:
            F.mse_loss(out.hidden_states[s_idx], t_feats[t_idx]).backward(retain_graph=True)
        criterion(out.logits, y).backward()
        opt.step()
""",
        # a gradient penalty kept on the object and added to the loss backpropagated after it
        """
import torch
from torch import autograd
class WGANGP:
    def __init__(self, critic, opt):
        self.critic = critic
        self.opt = opt
    def train_step(self, real, fake):
        mixed = (0.5 * real + 0.5 * fake).requires_grad_(True)
        scores = self.critic(mixed)
        grads = autograd.grad(outputs=scores, inputs=mixed, grad_outputs=torch.ones_like(scores),
                              create_graph=True, retain_graph=True)[0]
        self.penalty = ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        loss = self.critic(fake).mean() - self.critic(real).mean()
        self.opt.zero_grad()
        (loss + 10.0 * self.penalty).backward()
        self.opt.step()
""",
        # multi-scale penalties collected over the scales and backpropagated with the loss
        """
import torch
import torch.nn.functional as F
from torch import autograd
def train_critic(critic, loader, opt, scales):
    for real in loader:
        penalties = []
        for scale in scales:
            real_s = F.interpolate(real, scale_factor=scale).requires_grad_(True)
            grads = autograd.grad(critic(real_s).sum(), real_s, create_graph=True, retain_graph=True)[0]
            penalties.append(grads.pow(2).flatten(1).sum(1).mean())
        loss = -critic(real).mean() + 10.0 * sum(penalties)
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        # retain_graph forwarded from a caller (a framework's backward wrapper)
        """
import torch
def backward(loss, optimizer, retain_graph=None):
    for _ in range(1):
        loss.backward(retain_graph=retain_graph)
""",
        # not in a loop nor a per-step method
        """
import torch
def explain(model, x):
    out = model(x)
    out.sum().backward(retain_graph=True)
    return x.grad
""",
        # a second backward pass in the same arm, or after the if
        """
import torch
def train(model, loader, opt, crit, aux_crit, use_aux, step_aux):
    for i, (x, y) in enumerate(loader):
        out = model(x)
        loss = crit(out, y)
        if use_aux:
            loss.backward(retain_graph=True)
            aux_crit(out).backward()
        else:
            loss.backward()
        if i % step_aux == 0:
            out = model(x)
            crit(out, y).backward(retain_graph=True)
            if i % 2:
                aux_crit(out).backward()
        opt.step()
""",
    ]

    VALID += [
        # a gradient penalty returned to the caller, who backpropagates it: create_graph=True
        # keeps the graph anyway (retain_graph defaults to it)
        """
import torch
from torch import nn
class GradientPenaltyLoss(nn.Module):
    def forward(self, fake, real, critic):
        alpha = torch.rand((real.size(0), 1, 1, 1), device=real.device)
        mixed = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
        scores = critic(mixed)
        grads = torch.autograd.grad(outputs=scores, inputs=mixed, grad_outputs=torch.ones_like(scores),
                                    create_graph=True, retain_graph=True)[0]
        return ((grads.view(grads.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()
""",
    ]

    VALID += [
        # importance scores taken with autograd.grad in forward; the loss goes back to the
        # caller, which backpropagates it: the graph is retained for that pass
        """
import torch
from types import SimpleNamespace
from torch import nn
class Nucleus(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.encoder = nn.Linear(8, 8)
        self.peer_weights = nn.Parameter(torch.ones(n))
    def forward(self, inputs, peers):
        w = torch.softmax(self.peer_weights, dim=0)
        loss = ((self.encoder(inputs) - (w.view(-1, 1, 1) * peers).sum(0)) ** 2).mean()
        scores = torch.autograd.grad(loss, self.peer_weights, retain_graph=True)[0].abs()
        return SimpleNamespace(loss=loss, scores=scores)
""",
    ]

    INVALID = [
        # the classic: retain_graph=True to silence the error caused by a carried hidden state
        Invalid("""
import torch
def train(model, loader, optimizer, criterion, batch_size):
    hidden = model.init_hidden(batch_size)
    for step, (inputs, targets) in enumerate(loader):
        output, hidden = model(inputs, hidden)
        loss = criterion(output.view(-1, output.size(-1)), targets.view(-1))
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
""", line=9),
        # plain training loop with a needless retain_graph=True
        Invalid("""
import torch
import torch.nn.functional as F
def fit(model, loader, opt, epochs):
    for epoch in range(epochs):
        for batch in loader:
            logits = model(batch["input_ids"])
            loss = F.cross_entropy(logits, batch["labels"])
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
""", line=10),
        # torch.autograd.backward in a module-level script
        Invalid("""
import torch
from torch import nn
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.Adam(model.parameters())
for it in range(1000):
    x = torch.randn(64, 16)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    torch.autograd.backward(loss, retain_graph=True)
    opt.step()
""", line=10),
        # Lightning manual optimization: one call of training_step is one iteration
        Invalid("""
import torch
import lightning as L
class Model(L.LightningModule):
    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        opt.zero_grad()
        self.manual_backward(loss, retain_graph=True)
        opt.step()
""", line=10),
        # two backward passes over two different graphs: the first one retains for nothing
        Invalid("""
import torch
def train(model, loader, opt, crit, aux_crit):
    for x, y, z in loader:
        opt.zero_grad()
        main = crit(model(x), y)
        main.backward(retain_graph=True)
        aux = aux_crit(model(z), y)
        aux.backward()
        opt.step()
""", line=7),
        # several heads' losses over one shared forward pass, each backward retaining the graph:
        # the last one too, so the backbone's graph outlives the step
        Invalid("""
import torch
def train(model, loader, opt, criteria):
    for x, targets in loader:
        features = model.backbone(x)
        opt.zero_grad()
        for name, criterion in criteria.items():
            loss = criterion(model.heads[name](features), targets[name])
            loss.backward(retain_graph=True)
        opt.step()
""", line=9),
        # layer-wise distillation: one backward per matched layer of one forward, all retaining
        Invalid("""
import torch
import torch.nn.functional as F
def distill(student, teacher, loader, optimizer, layer_pairs):
    for x, _ in loader:
        s_feats = student(x, output_hidden_states=True).hidden_states
        with torch.no_grad():
            t_feats = teacher(x, output_hidden_states=True).hidden_states
        optimizer.zero_grad()
        for s_idx, t_idx in layer_pairs:
            loss = F.mse_loss(s_feats[s_idx], t_feats[t_idx])
            loss.backward(retain_graph=True)
        optimizer.step()
""", line=12),
        # the other backward pass is in the other arm of the if: never in the same iteration
        Invalid("""
import torch
def train(model, loader, opt, crit):
    for x, y in loader:
        out = model(x)
        loss = crit(out, y)
        if loss.item() > 10:
            loss.backward(retain_graph=True)
        else:
            loss.backward()
        opt.step()
""", line=8),
    ]


def _is_step(loop: Loop) -> bool:
    """Does an iteration of ``loop`` stand for a training step (not a pass over the layers,
    heads or rows of one)? It updates parameters, or takes in data: a ``for`` over data, a
    ``while`` or a ``for`` over a count that draws a batch (``next(it)``); not a ``while`` or a
    ``for i in range(nb_iter)`` that refines one input (DeepFool's attack iterations, which
    backpropagate but take in nothing new)."""
    if loop.has_optimizer_step:
        return True
    if isinstance(loop.node, cst.While) or _counts(loop.node.iter):
        return loop.draws  # for i in range(nb_iter): a count takes in nothing; next(it) in the body does
    return loop.iterates_data


def _counts(iterable: cst.BaseExpression) -> bool:
    """``range(n)`` (or ``enumerate``/``tqdm`` of one): the loop only counts."""
    while isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.args:
        if iterable.func.value in ("range", "trange"):
            return True
        if iterable.func.value not in ("enumerate", "tqdm"):
            return False
        iterable = iterable.args[0].value
    return False


def _what(loop: Loop) -> str:
    """``each of 'layer_pairs'`` for ``for s, t in layer_pairs``; else ``iteration of the loop``."""
    node = loop.node
    if isinstance(node, cst.For):
        iterable = node.iter
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in (
                "enumerate", "zip") and iterable.args:
            iterable = iterable.args[0].value
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value in (
                "items", "values", "keys"):
            iterable = iterable.func.value
        return f"each of '{source_of(iterable, 30)}'"
    return "iteration of the loop"
