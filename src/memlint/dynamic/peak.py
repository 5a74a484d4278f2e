"""The peak of live tensor bytes inside each step: when it happens and what the bytes are.

Child side of ``memlint verify`` (and of the in-process fixtures). The
:class:`~memlint.dynamic.storages.StorageTracker` already sees every storage born
and freed; the :class:`PeakAccountant` attached to it keeps a running total per
class of storage, so that a new peak costs a copy of six integers, never a walk
over the live set:

- **parameters**: storages of the modules' ``nn.Parameter``s and of every
  optimizer's ``param_groups`` (found at the outermost module call and at
  ``Optimizer.step``);
- **gradients**: ``.grad`` of those parameters (a post-accumulate-grad hook on each,
  and a look at ``.grad`` before each optimizer step);
- **optimizer_state**: tensors in any optimizer's ``state`` (after each step);
- **activations**: storages saved for backward (a ``saved_tensors_hooks`` pack hook),
  parameters excluded, until autograd lets go of them; a storage counts once what is
  saved of it covers at least half of it (not a dataset a batch was sliced from);
- **other**: the rest (inputs, outputs, temporaries, buffers).

A storage gets its class after its birth (an output is saved by the op that made
it, a gradient lands in ``.grad``, optimizer state is found after the step that made
it); the peaks of the step recorded since its birth are corrected then, so the
composition at a peak is that of the live set at that moment.

The phase of a birth is ``backward`` while the autograd engine runs a node
(``torch._C._current_autograd_node``, set on the engine's threads too), ``forward``
inside a module call and from then until backward, ``optimizer`` inside
``Optimizer.step``, ``other`` otherwise. Each step keeps its peak per phase; the
step boundary is decided by the caller (:meth:`PeakAccountant.end_step`), so the
same accounting serves optimizer, data-loader, module-call and marker steps.

``torch.func.grad`` and friends refuse to run while saved-tensor hooks are set:
``torch.autograd.graph.disable_saved_tensors_hooks`` is wrapped so that ours step
aside inside it (what such regions save counts as ``other``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import weakref

import torch
from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

from memlint.dynamic.storages import StorageTracker

PHASES = ("forward", "backward", "optimizer", "other")
FORWARD, BACKWARD, OPTIMIZER, BETWEEN = range(4)
CATEGORIES = ("parameters", "gradients", "optimizer_state", "activations", "other")
# Classes of a storage, most specific first: a parameter saved for backward stays a parameter.
# Activations are split by width so that the parent can tell what bf16 would save.
PARAM, GRAD, STATE, ACT_NARROW, ACT_WIDE = range(5)
_CATEGORY_OF = (0, 1, 2, 3, 3)
_WIDE_DTYPES = (torch.float32, torch.float64)
MAX_BLOCK_GROUPS = 5


def _guarded(method):
    """Hooks run inside the user's training step and must never break it: on an internal
    error the accountant stops measuring and records why (the report then has no peak)."""

    @functools.wraps(method)
    def guarded(self, *args):
        if self.error is None:
            try:
                return method(self, *args)
            except Exception as exc:  # any failure of ours is recorded, never raised into the script
                self._stop(exc)
        return None

    return guarded


class _Saved:
    """What autograd keeps for one saved tensor while our pack hook is on; tells us when it lets go."""

    __slots__ = ("accountant", "key", "tensor", "nbytes")

    def __init__(self, accountant: "PeakAccountant", key: int, tensor: torch.Tensor, nbytes: int) -> None:
        self.accountant = accountant
        self.key = key
        self.tensor = tensor
        self.nbytes = nbytes

    def __del__(self) -> None:
        self.accountant.unsaved(self.key, self.nbytes)


class PeakAccountant:
    """Per-step peaks of one tracker's live bytes, by phase and class (see the module docstring)."""

    def __init__(self, tracker: StorageTracker, warmup: int = 0) -> None:
        self.tracker = tracker
        self.warmup = warmup
        self.classes: dict[int, int] = {}  # storage key -> class, for storages that are not "other"
        self.class_bytes = [0, 0, 0, 0, 0]
        self.classified = 0  # sum of class_bytes
        self.saves: dict[int, list[int]] = {}  # storage key -> [saved views autograd holds, their bytes]
        self.clock = 0  # births so far: orders births and recorded peaks
        self.births: dict[int, int] = {}  # storage key -> clock at its birth
        self.module_stack: list = []
        self.optimizer_depth = 0
        self.forward_pending = False  # a module ran since the last backward or optimizer step
        self.roots: dict[int, weakref.ref] = {}  # outermost modules seen
        self.parameters: dict[int, weakref.ref] = {}
        self.optimizers: dict[int, dict] = {}
        self._optimizer_refs: dict[int, weakref.ref] = {}
        self._batch_dimensions: dict[int, int] = {}  # outermost module -> the dimension of its inputs' batch
        self.autocast = False
        self.steps: list[dict] = []
        self.blocks: dict | None = None  # repeated blocks and what they saved, in the highest measured step
        self._best_measured_peak = -1
        self._handles: list = []
        self._installed = False
        self._original_disable = None
        self.error: str | None = None
        self._start_step()

    def _stop(self, exc: Exception) -> None:
        self.error = f"{type(exc).__name__}: {exc}"
        self.tracker.accountant = None

    # -- hooks in and out --------------------------------------------------
    def install(self) -> None:
        """Hook the optimizers, the modules and autograd; attach to the tracker."""
        self._handles += [
            register_optimizer_step_pre_hook(self._optimizer_pre),
            register_optimizer_step_post_hook(self._optimizer_post),
            register_module_forward_pre_hook(self._module_pre),
            register_module_forward_hook(self._module_post, with_kwargs=True, always_call=True),
        ]
        torch._C._autograd._push_saved_tensors_default_hooks(self._pack, self._unpack)
        graph = torch.autograd.graph
        self._original_disable = graph.disable_saved_tensors_hooks
        graph.disable_saved_tensors_hooks = self._disable_saved_tensors_hooks
        self.tracker.accountant = self
        self._installed = True

    def uninstall(self) -> None:
        if not self._installed:
            return
        self._installed = False
        self.tracker.accountant = None
        torch.autograd.graph.disable_saved_tensors_hooks = self._original_disable
        if self._ours_on_top():
            torch._C._autograd._pop_saved_tensors_default_hooks()
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _ours_on_top(self) -> bool:
        top = torch._C._autograd._top_saved_tensors_default_hooks(True)
        return top is not None and top[0] == self._pack

    @contextlib.contextmanager
    def _disable_saved_tensors_hooks(self, error_message: str):
        """``torch.autograd.graph.disable_saved_tensors_hooks`` with our hooks stepped aside."""
        ours = self._ours_on_top()
        if ours:
            torch._C._autograd._pop_saved_tensors_default_hooks()
        try:
            with self._original_disable(error_message):
                yield
        finally:
            if ours:
                torch._C._autograd._push_saved_tensors_default_hooks(self._pack, self._unpack)

    # -- the tracker's events (hot path) -----------------------------------
    def born(self, key: int, live: int) -> None:
        """A storage was born (or adopted); ``live`` is the new total."""
        try:
            self._born(key, live)
        except Exception as exc:  # see _guarded
            self._stop(exc)

    def _born(self, key: int, live: int) -> None:
        self.clock += 1
        self.births[key] = self.clock
        phase = self._phase()
        peak = self.phase_peaks[phase]
        if peak is None or live > peak[0]:
            b = self.class_bytes
            self.phase_peaks[phase] = [live, b[0], b[1], b[2], b[3], b[4]]
            self.peak_clock[phase] = self.clock
        other = live - self.classified
        if other > self.high_water[4]:
            self.high_water[4] = other
            self.other_clock = self.clock

    def died(self, key: int, nbytes: int) -> None:
        try:
            self.births.pop(key, None)
            cls = self.classes.pop(key, None)
            if cls is not None:
                self.class_bytes[cls] -= nbytes
                self.classified -= nbytes
            self.saves.pop(key, None)
        except Exception as exc:  # see _guarded
            self._stop(exc)

    def _phase(self) -> int:
        if torch._C._current_autograd_node() is not None:
            if self.grads_before_backward is None:
                self.grads_before_backward = self.class_bytes[GRAD]
            self.forward_pending = False
            return BACKWARD
        if self.module_stack:
            return FORWARD
        if self.optimizer_depth:
            return OPTIMIZER
        return FORWARD if self.forward_pending else BETWEEN

    # -- classes -----------------------------------------------------------
    def classify(self, tensor, cls: int) -> int | None:
        """Class ``tensor``'s storage as ``cls`` unless it already has a more specific class."""
        key = self.tracker.adopt(tensor)
        if key is not None:
            old = self.classes.get(key)
            if old is None or old > cls:
                self._set_class(key, cls)
        return key

    def _set_class(self, key: int, cls: int | None) -> None:
        nbytes = self.tracker.live[key].nbytes
        old = self.classes.pop(key, None)
        if old is None:
            self.classified += nbytes
        else:
            self.class_bytes[old] -= nbytes
        if cls is None:
            self.classified -= nbytes
        else:
            self.classes[key] = cls
            self.class_bytes[cls] += nbytes
        b = self.class_bytes
        high = self.high_water
        for index, value in enumerate((b[0], b[1], b[2], b[3] + b[4])):
            if value > high[index]:
                high[index] = value
        other = self.tracker.live_bytes - self.classified
        if other > high[4]:
            high[4] = other
            self.other_clock = self.clock
        if old is None and cls is not None:
            self._reclass_past(key, cls, nbytes)

    def _reclass_past(self, key: int, cls: int, nbytes: int) -> None:
        """A storage that was "other" since its birth has a class now: so it had one at every
        peak of this step recorded since its birth (it was alive then: it is alive now)."""
        born = self.births.get(key, self.clock)
        category = _CATEGORY_OF[cls]
        high = self.high_water
        for phase, snapshot in enumerate(self.phase_peaks):
            if snapshot is not None and self.peak_clock[phase] >= born:
                snapshot[1 + cls] += nbytes
                value = snapshot[4] + snapshot[5] if category == 3 else snapshot[1 + cls]
                if value > high[category]:
                    high[category] = value
        if self.other_clock >= born:
            high[4] = max(high[4] - nbytes, self.tracker.live_bytes - self.classified)

    def _pack(self, tensor):
        if self.error is not None:
            return tensor
        try:
            return self._saved(tensor)
        except Exception as exc:  # see _guarded
            self._stop(exc)
            return tensor

    def _saved(self, tensor):
        key = self.tracker.adopt(tensor)
        if key is None:
            return tensor
        view_bytes = tensor.nbytes
        saved = self.saves.get(key)
        if saved is None:
            saved = self.saves[key] = [0, 0]
        saved[0] += 1
        saved[1] += view_bytes
        # A storage is an activation once what is saved of it covers half of it or more: q, k and v
        # chunked from one projection are; a batch sliced from a dataset held in memory is not.
        if key not in self.classes and 2 * saved[1] >= self.tracker.live[key].nbytes:
            self._set_class(key, ACT_WIDE if tensor.dtype in _WIDE_DTYPES else ACT_NARROW)
            if self.module_stack:
                owner = id(self.module_stack[-1])
                self.module_saved[owner] = self.module_saved.get(owner, 0) + self.tracker.live[key].nbytes
        return _Saved(self, key, tensor, view_bytes)

    @staticmethod
    def _unpack(packed):
        return packed.tensor if type(packed) is _Saved else packed

    @_guarded
    def unsaved(self, key: int, view_bytes: int) -> None:
        saved = self.saves.get(key)
        if saved is None:
            return
        if saved[0] > 1:
            saved[0] -= 1
            saved[1] -= view_bytes
            return
        del self.saves[key]
        if self.classes.get(key) in (ACT_NARROW, ACT_WIDE) and key in self.tracker.live:
            self._set_class(key, None)

    def _add_parameters(self, parameters) -> None:
        for p in parameters:
            ref = self.parameters.get(id(p))
            if ref is None or ref() is not p:
                self.parameters[id(p)] = weakref.ref(p)
                if p.requires_grad:
                    try:
                        self._handles.append(p.register_post_accumulate_grad_hook(self._grad_ready))
                    except RuntimeError:  # not a leaf
                        pass
            self.classify(p, PARAM)

    @_guarded
    def _grad_ready(self, parameter) -> None:
        if parameter.grad is not None:
            self.classify(parameter.grad, GRAD)

    def _grads(self) -> None:
        for ref in list(self.parameters.values()):
            p = ref()
            if p is not None and p.grad is not None:
                self.classify(p.grad, GRAD)

    # -- modules and optimizers --------------------------------------------
    @_guarded
    def _module_pre(self, module, args) -> None:
        stack = self.module_stack
        if not stack:
            ref = self.roots.get(id(module))
            if ref is None or ref() is not module:
                self.roots[id(module)] = weakref.ref(module)
                self._add_parameters(module.parameters())
            if not self.autocast:
                self.autocast = torch.is_autocast_enabled(self.tracker.device_type)
        stack.append(module)
        self.forward_pending = True
        if args and isinstance(args[0], torch.Tensor):
            owner = id(module)
            self.module_input[owner] = self.module_input.get(owner, 0) + args[0].nbytes

    @_guarded
    def _module_post(self, module, args, *rest) -> None:
        stack = self.module_stack
        if stack and stack[-1] is module:
            stack.pop()
        elif module in stack:  # a forward raised past modules whose hooks did not run
            del stack[stack.index(module):]
        if not stack and self.batch is None:
            kwargs = rest[0] if len(rest) == 2 else {}
            dimension = self._batch_dimensions.get(id(module))
            if dimension is None:
                dimension = self._batch_dimensions[id(module)] = _batch_dimension(module)
            size = _batch_size(args, kwargs, dimension)
            if size is not None:
                self.batch = {"size": size, "module": type(module).__name__}

    @_guarded
    def _optimizer_pre(self, optimizer, args, kwargs) -> None:
        self.optimizer_depth += 1
        self.forward_pending = False
        ref = self._optimizer_refs.get(id(optimizer))
        if ref is None or ref() is not optimizer:
            self._optimizer_refs[id(optimizer)] = weakref.ref(optimizer)
        if id(optimizer) not in self.optimizers:
            defaults = getattr(optimizer, "defaults", {}) or {}
            self.optimizers[id(optimizer)] = {"class": type(optimizer).__name__,
                                              "fused": bool(defaults.get("fused")),
                                              "foreach": defaults.get("foreach")}
        self._add_parameters(p for group in optimizer.param_groups for p in group["params"])
        self._grads()

    @_guarded
    def _optimizer_post(self, optimizer, args, kwargs) -> None:
        self.optimizer_depth = max(0, self.optimizer_depth - 1)
        for state in list(optimizer.state.values()):
            if not isinstance(state, dict):
                continue
            for value in state.values():
                if isinstance(value, torch.Tensor):
                    self.classify(value, STATE)
                elif isinstance(value, (list, tuple)):
                    for item in value:
                        if isinstance(item, torch.Tensor):
                            self.classify(item, STATE)

    def live_optimizers(self) -> list:
        """Every optimizer that stepped and is still alive."""
        return [optimizer for ref in list(self._optimizer_refs.values()) if (optimizer := ref()) is not None]

    # -- steps -------------------------------------------------------------
    def _start_step(self) -> None:
        b = self.class_bytes
        live = self.tracker.live_bytes
        # What is alive at the boundary is the start of the next step, in no phase of its own.
        self.phase_peaks: list[list[int] | None] = [None, None, None, [live, *b]]
        self.peak_clock = [0, 0, 0, self.clock]  # when each phase's peak was recorded
        self.high_water = [b[0], b[1], b[2], b[3] + b[4], live - self.classified]
        self.other_clock = self.clock
        self.forward_pending = False
        self.grads_before_backward: int | None = None  # gradients alive when the step's backward began
        self.batch: dict | None = None
        self.module_saved: dict[int, int] = {}
        self.module_input: dict[int, int] = {}

    @_guarded
    def end_step(self, step: int) -> None:
        """Close step ``step`` (1-based) at its boundary and start the next one."""
        if self.steps and step <= self.steps[-1]["step"]:  # counted again from 1: another boundary took over
            self.steps.clear()
            self.blocks, self._best_measured_peak = None, -1
        for ref in list(self.roots.values()):
            module = ref()
            if module is not None:
                self._add_parameters(module.parameters())
        self._grads()
        record = self._record(step)
        self.steps.append(record)
        peak = max(p[0] for p in self.phase_peaks if p)
        if peak > self._best_measured_peak and (step > self.warmup or self.blocks is None):
            if step > self.warmup:
                self._best_measured_peak = peak
            self.blocks = {"step": step, "groups": self._block_groups()}
        self._start_step()

    def _record(self, step: int) -> dict:
        b = self.class_bytes
        return {"step": step,
                "phases": {PHASES[i]: peak for i, peak in enumerate(self.phase_peaks) if peak is not None},
                "high_water": list(self.high_water),
                "end": [self.tracker.live_bytes, *b],
                "grads_before_backward": self.grads_before_backward,
                "batch": self.batch}

    def _block_groups(self) -> list[dict]:
        """Children of one module that share a class (the repeated blocks a model is made of),
        with what each group saved for backward in this step: the raw numbers of the
        activation-checkpointing estimate."""
        saved, inputs = self.module_saved, self.module_input
        if not saved:
            return []
        groups = []
        for ref in self.roots.values():
            root = ref()
            if root is None:
                continue
            for name, parent in root.named_modules():
                by_class: dict[type, list] = {}
                for child in parent.children():
                    by_class.setdefault(type(child), []).append(child)
                for cls, children in by_class.items():
                    if len(children) < 2:
                        continue
                    per_block = [sum(saved.get(id(m), 0) for m in child.modules()) for child in children]
                    if not any(per_block):
                        continue
                    groups.append({"name": f"{type(root).__name__}.{name}" if name else type(root).__name__,
                                   "class": cls.__name__, "count": len(children), "saved_bytes": sum(per_block),
                                   "max_block_bytes": max(per_block),
                                   "input_bytes": sum(inputs.get(id(child), 0) for child in children)})
        groups.sort(key=lambda g: -g["saved_bytes"])
        return groups[:MAX_BLOCK_GROUPS]

    def to_json(self, device: str) -> dict:
        """Everything the parent needs to build the report's ``memory`` section."""
        partial = None
        if self.phase_peaks[:3] != [None, None, None]:
            partial = self._record(len(self.steps) + 1)  # the step in progress when the script ended
        data = {"steps": self.steps, "partial": partial, "blocks": self.blocks, "error": self.error,
                "optimizers": list(self.optimizers.values()), "autocast": self.autocast,
                "wide_parameter_bytes": self._wide_parameter_bytes(),
                "world_size": int(os.environ.get("WORLD_SIZE", "1") or 1),
                "allocator": None, "device_total_bytes": None}
        if device == "cuda":
            try:
                data["allocator"] = {"max_allocated": int(torch.cuda.max_memory_allocated()),
                                     "max_reserved": int(torch.cuda.max_memory_reserved())}
                data["device_total_bytes"] = int(torch.cuda.get_device_properties(
                    torch.cuda.current_device()).total_memory)
            except RuntimeError:  # the script broke the CUDA context (an illegal access, say)
                pass
        return data

    def _wide_parameter_bytes(self) -> int:
        """fp32/fp64 parameter bytes: under autocast their low-precision copies are saved for backward."""
        seen, total = set(), 0
        for ref in self.parameters.values():
            p = ref()
            if p is not None and p.dtype in _WIDE_DTYPES and p.is_floating_point():
                key = self.tracker.adopt(p)
                if key is not None and key not in seen:
                    seen.add(key)
                    total += self.tracker.live[key].nbytes
        return total


def _batch_dimension(module) -> int:
    """1 when the model runs its sequences time-first (an RNN, a transformer or attention layer
    with ``batch_first=False``, torch's default: inputs are (sequence, batch, ...)), else 0."""
    for sub in module.modules():
        batch_first = getattr(sub, "batch_first", None)
        if isinstance(batch_first, bool):
            return 0 if batch_first else 1
    return 0


def _batch_size(args, kwargs, dimension: int = 0) -> int | None:
    """The batch size a module was called with: dimension ``dimension`` of its first tensor input
    (the first, for a one-dimensional input)."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, dict):
            value = next((v for v in value.values() if isinstance(v, torch.Tensor)), None)
        elif isinstance(value, (list, tuple)):
            value = next((v for v in value if isinstance(v, torch.Tensor)), None)
        if isinstance(value, torch.Tensor) and value.dim() >= 1:
            return int(value.shape[dimension if value.dim() > dimension else 0])
    return None
