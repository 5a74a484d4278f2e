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

from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import FunctionScope, Graph, Kind, Loop, backpropagated_expr, names_in
from memlint.static.fixes import remove_keyword_fix
from memlint.static.rule import Invalid, Rule
from memlint.static.rules.ML101_graph_accumulation import source_of

_BACKWARD_METHODS = frozenset({"backward", "manual_backward"})
_AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.backward", "torch.autograd.grad"})


@dataclass
class _Backward:
    node: cst.Call
    loops: tuple[Loop, ...]  # enclosing loops of the function, outermost first
    names: frozenset[str]  # names in the backpropagated tensor
    retains: bool
    branches: tuple[tuple[int, str], ...] = ()  # the if/else arms it is in

    def excludes(self, other: "_Backward") -> bool:
        """Are the two in different arms of one ``if`` (never both in one iteration)?"""
        arms = dict(self.branches)
        return any(arms.get(node, arm) != arm for node, arm in other.branches)


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
        records.append(_Backward(node, tuple(facts.loops_in_function()), frozenset(names_in(tensor)), retains,
                                 tuple(facts.branch_path)))

    # ----- decision at function exit ---------------------------------------------------------------
    def _decide(self, function: FunctionScope, records: list[_Backward]) -> None:
        for record in records:
            if not record.retains:
                continue
            if record.loops:
                loop: Loop | None = record.loops[-1]
                bound = loop.bound_this_iteration
            elif function.is_per_step_method:
                loop = None  # forward / training_step: one call is one iteration
                bound = {name for name, b in function.bindings.items() if not isinstance(b.node, cst.Param)}
            else:
                continue
            ancestors = self._graph_ancestors(function, record.names)
            if self._graph_from_outside(function, record, ancestors, bound):
                continue  # several backward passes over one graph built before the loop
            if any(self._same_graph(function, record, other, ancestors, bound)
                   for other in records
                   if other is not record and (loop is None or loop in other.loops) and not record.excludes(other)):
                continue  # a second backward pass through this graph in the same iteration
            carried = sorted(name for name in ancestors if name in bound and name in function.derived_from.get(name, ()))
            text = source_of(record.node, 50)
            if carried:
                cause = (f"'{carried[0]}' is computed from its own previous value, so the graph of every "
                         f"earlier step stays attached (ML102): detach it once per iteration "
                         f"({carried[0]} = {carried[0]}.detach()) and drop retain_graph=True")
            else:
                cause = ("if it was added to silence \"Trying to backward through the graph a second time\", "
                         "the real bug is a value carried into the next iteration with its graph (ML102: "
                         "detach it); otherwise drop retain_graph=True")
            self.report(
                record.node,
                f"'{text}' keeps this iteration's graph and its saved activations alive after the "
                f"backward pass, but nothing backpropagates through it again in this iteration; {cause}",
                # dropping it alone would break a loop-carried graph: no fix then (detach first)
                fix=None if carried else remove_keyword_fix(record.node, "retain_graph"),
            )

    def _binding(self, function: FunctionScope, name: str):
        scope = function
        while scope is not None:
            if name in scope.bindings:
                return scope.bindings[name]
            scope = scope.parent
        return None

    def _graph_ancestors(self, function: FunctionScope, names: frozenset[str]) -> set[str]:
        """The names that hold (or may hold) a graph, that the backpropagated tensor comes from."""
        found: set[str] = set()
        frontier = list(names)
        while frontier:
            name = frontier.pop()
            if name in found:
                continue
            binding = self._binding(function, name)
            if binding is None or binding.kind is Kind.MODULE:
                continue
            # The backpropagated tensor itself has a graph whatever its binding says (a loop
            # target such as `loss` in `for loss in losses` is bound without one).
            if binding.graph.state is Graph.NONE and name not in names:
                continue
            found.add(name)
            frontier.extend(function.derived_from.get(name, ()))
        return found

    def _graph_from_outside(self, function: FunctionScope, record: _Backward, ancestors: set[str],
                            bound: set[str]) -> bool:
        for name in ancestors | set(record.names):
            if name in bound:
                continue
            binding = self._binding(function, name)
            if binding is not None and (binding.kind is Kind.MODULE or binding.graph.state is Graph.NONE):
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
        shared = self._graph_ancestors(function, other.names) & ancestors
        return bool(shared & bound) or bool(record.names & other.names & (bound | ancestors))

    VALID = [
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
        # several heads' losses over one shared forward pass, backpropagated one by one
        """
import torch
def train(model, loader, opt, criteria):
    for x, targets in loader:
        features = model.backbone(x)
        opt.zero_grad()
        for name, criterion in criteria.items():
            loss = criterion(model.heads[name](features), targets[name])
            loss.backward(retain_graph=True)
        opt.step()
""",
        # per-head losses from one forward pass, backpropagated one by one from a list
        """
import torch
def train(model, heads, loader, opt, crit):
    for x, y in loader:
        feats = model(x)
        losses = [crit(head(feats), y) for head in heads]
        opt.zero_grad()
        for loss in losses:
            loss.backward(retain_graph=True)
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
