"""What a module's functions and methods do, as other modules see them: the summary the
engine's walk of the module leaves behind (:meth:`memlint.static.engine.FileChecker.module_summary`).

A summary is computed from the module's text and the outlines of the modules it imports (never
from other modules' summaries), so it is the same whichever module asked first; what it says
about calls into other modules stays symbolic (a call by qualified name) and is resolved when
a rule asks (:meth:`memlint.static.facts.Facts.resolve`, :meth:`memlint.static.project.Project.has_effect`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlint.static.facts import GradMode, GraphValue

# What a function does that other modules' rules ask about (directly, or through its calls).
BACKWARD = "backward"  # runs a backward pass (or torch.autograd.grad)
OPTIMIZER_STEP = "optimizer_step"
SETS_DEVICE = "sets_device"  # torch.cuda.set_device, a torch.cuda.device context, one GPU per process
# CUDA_VISIBLE_DEVICES set to one computed device per process (``str(rank % 8)``): each process
# sees one GPU, so ``cuda:0`` is its own
PINS_ONE_GPU = "pins_one_gpu"
# CUDA_VISIBLE_DEVICES set to one device written out (``"0"``, ``",".join(map(str, gpus))`` for
# ``gpus = [1]``): the whole program sees a single GPU
SEES_ONE_GPU = "sees_one_gpu"
PROCESS_GROUP = "process_group"  # torch.distributed.init_process_group
# ... only in a branch its parameters' defaults turn off (``if local_rank >= 0:`` with
# ``local_rank=-1``): a process group when a caller asks for one, not a premise of the program
PROCESS_GROUP_ON_REQUEST = "process_group_on_request"
# puts something on the current CUDA device (``.cuda()``, ``pin_memory=True``, a device with no
# index): see memlint.static.facts.runs_on_current_device
USES_CURRENT_DEVICE = "uses_current_device"
MODULE_CALL = "module_call"  # runs an nn.Module's forward
# memlint.static.facts.FREEZES_ARGUMENT + a position: the function freezes that argument (read
# by Facts, which this module may not import).
# runs a torch.distributed collective on tensors (all_gather, broadcast, all_reduce...): what it
# is handed must stay on the device the process group communicates on
COLLECTIVE = "collective"
# computes a loss: a loss module called (``loss_fct(logits, labels)`` with ``loss_fct =
# CrossEntropyLoss()``) or a loss of torch.nn.functional
COMPUTES_LOSS = "computes_loss"
STEP_LOOP = "step_loop"  # holds a loop that runs training or evaluation steps
# runs a module's forward in a loop of its own (a helper scoring every prefix of an episode, a
# pass over a loader): a loop that calls it runs a whole inner pass per iteration
REPEATS_MODULE = "repeats_module"
SAVES_CPU_STATE = "saves_cpu_state"  # torch.save of state moved to the CPU (``{k: v.cpu() ...}``, ``model.cpu()`` first)
SAVES_DEVICE_STATE = "saves_device_state"  # torch.save of anything else: device tensors, as far as can be told
# ... and of those, what is shown to be a model's or an optimizer's own state (``model.state_dict()``,
# a dict holding one, the module itself), not moved to the CPU: the checkpoints hold GPU tensors
SAVES_MODULE_STATE = "saves_module_state"
# a model's weights (a module's state: not an optimizer's, a schedule's or a scaler's) saved on the
# device, or moved to the CPU first: what a load that restores only a model reads back
SAVES_DEVICE_WEIGHTS = "saves_device_weights"
SAVES_CPU_WEIGHTS = "saves_cpu_weights"
STOPS_MEMORY_HISTORY = "stops_memory_history"  # torch.cuda.memory._record_memory_history(enabled=None)

MODULE_CODE = "<module>"  # the key of the module's top-level statements among its functions


@dataclass(frozen=True)
class FunctionSummary:
    # What a call returns, in terms of the parameters (see Facts.summary_form); a call into
    # another module stays a pending call by qualified name.
    returns: "GraphValue"
    # The grad mode a decorator or a framework imposes on the body (None: the caller's).
    entry_grad_mode: "GradMode | None" = None
    effects: frozenset[str] = frozenset()
    # What it calls: ``module:function`` / ``module:Class.method`` when known here, else the
    # qualified name as imported (``pkg.utils.get_device``), resolved when asked.
    calls: tuple[str, ...] = ()
    # (parameter, attribute, appends, partial, partial_via): the method keeps what it is passed
    # in its object (``def update(self, val): self.sum += val``; ``appends``: as given, one more
    # per call; ``partial``: the graph reaches it on some paths only; ``partial_via``: other
    # modules' functions it passes through, which may say so), also through an object it holds
    # (``self.meters[k].update(v)``); ``**kwargs`` / ``*args`` keep their stars. See
    # memlint.static.facts.Store.
    stores: tuple[tuple[str, str, bool, bool, tuple[str, ...]], ...] = ()
    # A generator (a @contextmanager) whose every ``yield`` is in a region it puts in one grad
    # mode, or a class's ``__enter__`` that enters one (``self.no_grad_context.__enter__()``;
    # MAYBE_OFF under a branch): ``with`` its call, the block runs in that mode. None: it sets none.
    context_grad_mode: "GradMode | None" = None
    # Used as a decorator, the grad mode it gives the decorated function: ``@f`` (it returns its
    # argument wrapped by ``torch.no_grad()``), ``@f(...)`` (it returns such a decorator). None: none.
    decorator_grad_mode: "GradMode | None" = None
    factory_grad_mode: "GradMode | None" = None
    # A module method that returns one thing ``if self.training:`` and another otherwise (a
    # detector's losses in training, its predictions computed under no_grad in eval mode): what
    # it returns in eval mode. None when no return depends on ``self.training``.
    eval_returns: "GraphValue | None" = None


@dataclass
class ModuleSummary:
    name: str
    # "function" or "Class.method" -> its summary (nested functions are not summarised), and
    # MODULE_CODE for the module's top-level statements
    functions: dict[str, FunctionSummary] = field(default_factory=dict)
    # The calls this module makes, by the callee's last name (``evaluate`` for ``self.task.evaluate()``):
    # (the grad mode at the call, the calling function's name, whether that mode is the caller's own
    # entry mode, set by nothing in it, and for ``self.evaluate()`` the qualified name of that
    # ``self``'s class, else "", and whether it is ``obj.name(...)`` on anything but an imported
    # module: a method's call). See Project.only_called_without_grad.
    call_sites: dict[str, tuple[tuple["GradMode", str, bool, str, bool], ...]] = field(default_factory=dict)
    # Calls into other modules of the project made with grad on (``engine.run_epoch(model, loader,
    # train=False)``): the callee's qualified name as this module imports it -> for each call,
    # (position or keyword, value) of its arguments, ``Ellipsis`` for one that is no literal
    # (see facts.literal_arguments).
    literal_calls: dict[str, tuple[tuple[tuple["int | str", object], ...], ...]] = field(default_factory=dict)
    # The files this module ``torch.save``s to a path whose last part is written out
    # (``os.path.join(out, "data_args.bin")``): file name -> whether every such save writes no
    # device tensor (state moved to the CPU, a run's arguments).
    saved_files: dict[str, bool] = field(default_factory=dict)
