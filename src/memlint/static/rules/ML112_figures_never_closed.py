"""ML112 figures-never-closed: a pyplot figure is made again and again and never closed.

``plt.figure()`` and ``plt.subplots()`` register every figure they make with pyplot's figure
manager, which keeps it (its canvas, its axes, the images drawn on it) until
``plt.close(fig)`` (or ``plt.close("all")``) releases it, whatever the backend (``Agg``
included) and whether or not the figure is saved. A visualisation helper called every few
steps of a training run therefore keeps every figure it ever drew: host memory grows until
the job is killed (matplotlib warns past 20 open figures).

Flagged: a figure made by pyplot, in a function that never closes one, when the function runs
again and again (the figure is made inside a loop, or the function is called from a loop or
from code that runs every step), and the figure does not leave the function (not returned,
not passed on) — or it is returned, and every caller in view drops it or keeps it without
closing it. Not flagged: a figure closed anywhere in its function (``plt.close(fig)``,
``plt.close()``, ``plt.close("all")``) or handed to ``SummaryWriter.add_figure`` (which closes
it), ``plt.show()`` (an interactive session), ``plt.figure(num)`` (a figure reused by number),
figures made with ``matplotlib.figure.Figure`` (pyplot never sees them), a returned figure
whose callers are not in view, notebooks.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import FunctionScope, Loop, dotted_name, names_in
from memlint.static.rule import Invalid, Rule

_FIGURE_MAKERS = frozenset({"matplotlib.pyplot.figure", "matplotlib.pyplot.subplots",
                            "matplotlib.pyplot.subplot_mosaic"})
# Calls after which the figure is released, or may be (an interactive window closed by the user).
_RELEASING = frozenset({"matplotlib.pyplot.close", "matplotlib.pyplot.show"})
# Calls that take a figure and keep nothing of it (they render or save it).
_RENDERING = frozenset({"savefig", "Image", "log_figure", "print", "tight_layout", "suptitle"})


@dataclass
class _Figure:
    call: cst.Call
    function: FunctionScope
    names: frozenset[str]  # what the figure (and its axes) are bound to
    loops: tuple[Loop, ...]  # the loops of its function around it


class FiguresNeverClosed(Rule):
    code = "ML112"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._figures: list[_Figure] = []
        self._releasing: set[int] = set()  # id(function) that closes a figure (or shows one)
        self._handed_on: dict[int, set[str]] = {}  # id(function) -> names passed to calls that may close them
        self._notebook = checker.path.endswith(".ipynb")

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        qualified = facts.qualified_name(node.func)
        function = facts.function
        if qualified in _FIGURE_MAKERS:
            if qualified.endswith(".figure") and (node.args and node.args[0].keyword is None or any(
                    arg.keyword is not None and arg.keyword.value == "num" for arg in node.args)):
                return  # plt.figure(1) / plt.figure("loss"): the same figure, reused
            if not self._notebook:
                self._figures.append(_Figure(node, function, self._checker.assign_targets,
                                             tuple(facts.loops_in_function())))
                if len(self._figures) == 1:
                    self.at_module_exit(self._decide)
            return
        func = node.func
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if qualified in _RELEASING or method == "add_figure":
            self._releasing.add(id(function))  # add_figure(tag, fig) closes it (close=True)
            return
        last = method if method is not None else (qualified or "").rsplit(".", 1)[-1]
        if last in _RENDERING:
            return
        names = {name for arg in node.args for name in names_in(arg.value)}
        if names:
            self._handed_on.setdefault(id(function), set()).update(names)

    def _decide(self) -> None:
        facts = self.facts
        for figure in self._figures:
            function = figure.function
            if id(function) in self._releasing or figure.names & self._handed_on.get(id(function), set()):
                continue
            if figure.names & function.returned_names:
                callers = facts.calls_into.get(id(function.node), [])
                if not callers or any(id(site.caller) in self._releasing for site in callers):
                    continue  # who closes it is not in view, or a caller does
                repeats = self._repeats([loop for site in callers for loop in site.loops],
                                        [site.caller for site in callers])
            else:
                callers = facts.calls_into.get(id(function.node), []) if function is not facts.module_scope else []
                repeats = self._repeats([*figure.loops, *(loop for site in callers for loop in site.loops)],
                                        [function, *(site.caller for site in callers)])
            if repeats:
                self.report(figure.call, "pyplot keeps this figure open: one more every step, never closed",
                            help="close it once saved or logged: plt.close(fig)", needs_grad=False,
                            function=function)

    def _repeats(self, loops: list[Loop], functions: list[FunctionScope]) -> bool:
        """Is the figure made again every step: in a loop that runs training or evaluation
        steps, or in code that runs every step? (A figure per run of a loop over runs or over a
        literal handful, ``for k in [10, 100]``, is bounded: not reported.)"""
        facts = self.facts
        return any(loop.runs_steps and not _over_a_literal(loop) for loop in loops) or any(
            function is not facts.module_scope and facts.runs_per_step(function) for function in functions)

    VALID = [
        # closed once saved; closed with "all"; handed to SummaryWriter.add_figure (closes it)
        """
import torch
import matplotlib.pyplot as plt
def plot_loss(history, path):
    fig, ax = plt.subplots()
    ax.plot(history)
    fig.savefig(path)
    plt.close(fig)

def plot_grid(images, writer, step):
    fig = plt.figure(figsize=(8, 8))
    plt.imshow(images[0].permute(1, 2, 0).cpu())
    writer.add_figure("samples", fig, step)

def train(model, loader, writer):
    for step, batch in enumerate(loader):
        plot_loss(model(batch).tolist(), "loss.png")
        plot_grid(batch, writer, step)
""",
        # the same figure reused by number; the OO API (not registered with pyplot)
        """
import torch
from matplotlib import pyplot as plt
from matplotlib.figure import Figure
def train(model, loader):
    for step, batch in enumerate(loader):
        plt.figure(1)
        plt.clf()
        plt.plot(model(batch).detach().cpu())
        plt.savefig(f"{step}.png")
        fig = Figure()
        fig.add_subplot().plot([1, 2])
        fig.savefig("b.png")
""",
        # made once, outside any loop; returned to a caller that closes it
        """
import torch
import matplotlib.pyplot as plt
def summary_plot(values):
    fig, ax = plt.subplots()
    ax.plot(values)
    return fig

def main(model, loader):
    for batch in loader:
        fig = summary_plot(model(batch).tolist())
        fig.savefig("x.png")
        plt.close(fig)
""",
    ]

    INVALID = [
        # a helper returns the figure, the training loop drops it (OCVP)
        Invalid("""
import torch
from matplotlib import pyplot as plt
def visualize_sequence(sequence, savepath):
    fig, ax = plt.subplots(1, sequence.shape[0])
    for i in range(sequence.shape[0]):
        ax[i].imshow(sequence[i].permute(1, 2, 0).cpu().detach())
    plt.savefig(savepath)
    return fig, ax

def train_one_epoch(model, loader, optimizer, every):
    for i, videos in enumerate(loader):
        recons = model(videos)
        loss = (recons - videos).pow(2).mean()
        loss.backward()
        optimizer.step()
        if i % every == 0:
            visualize_sequence(recons[0], f"recons_{i}.png")
""", line=5),
        # a figure made every validation batch inside the loop, saved, never closed
        Invalid("""
import torch
import matplotlib.pyplot as plt
def validate(model, loader, out_dir):
    for i, (x, y) in enumerate(loader):
        with torch.no_grad():
            pred = model(x)
        plt.figure(figsize=(6, 3))
        plt.plot(pred[0].cpu().numpy())
        plt.plot(y[0].numpy())
        plt.savefig(f"{out_dir}/val_{i}.png")
""", line=8),
    ]


def _over_a_literal(loop: Loop) -> bool:
    """``for k in [10, 100]``, ``for i in range(3)``: a fixed handful of iterations."""
    node = loop.node
    if not isinstance(node, cst.For):
        return False
    iterable = node.iter
    if isinstance(iterable, (cst.List, cst.Tuple, cst.Set)):
        return True
    return isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "range" and bool(iterable.args) and all(
        isinstance(arg.value, cst.Integer) for arg in iterable.args)
