"""Levers on a step's peak: the changes that would lower it most, with the bytes each would save.

Each lever is worked out from the measured step, phase by phase: it says what the
peak of each phase (forward, backward, optimizer, between) would become, and what
it saves is the measured peak minus the highest of those. So a lever that shrinks
activations saves nothing when the peak is in the optimizer step, and one that
shrinks optimizer state is capped by the next-highest phase. Estimates, stated with
their assumptions:

- bf16 autocast: fp32 activations saved for backward take half; autocast also saves
  bf16 copies of the fp32 weights (half the parameters) for backward;
- activation checkpointing of repeated blocks (children of one module that share a
  class): each keeps its input, one block's activations come back during backward;
- 8-bit optimizer state: 1 byte per element instead of 4;
- a fused optimizer step: no temporaries beyond the state;
- ``zero_grad(set_to_none=True)`` before the forward pass: the previous step's
  gradients are not alive during forward; nor during backward when they were still
  alive when it began (an upper bound: fresh gradients appear as backward runs);
- gradient accumulation over two half-batches: activations halve (without a backward pass:
  two chunks per batch);
- in a step with no backward pass and no optimizer (batch inference, serving),
  ``torch.inference_mode()``: nothing is saved for backward; activation checkpointing is then
  not offered;
- FSDP (full sharding) over the ranks of a distributed run.
"""

from __future__ import annotations

from collections.abc import Callable

from memlint.dynamic.memory import Lever, other_bytes

_ADAM_LIKE = {"Adam", "AdamW", "NAdam", "RAdam", "Adamax", "SparseAdam", "Lamb", "LAMB", "Lion"}
_EIGHT_BIT = {"Adam": "Adam8bit", "AdamW": "AdamW8bit", "SGD": "SGD8bit", "RMSprop": "RMSprop8bit",
              "Lion": "Lion8bit", "Adagrad": "Adagrad8bit", "LAMB": "LAMB8bit"}
_FUSABLE = {"Adam", "AdamW", "SGD", "Adagrad"}
MIN_SHARE = 0.01  # levers that would save less than this share of the peak are left out
MAX_LEVERS = 6

# A snapshot is the child's [live, parameters, gradients, state, narrow activations, wide activations].
Snapshot = list
Transform = Callable[[str, Snapshot], float]


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "0%"


def levers(record: dict, raw: dict) -> list[Lever]:
    """The levers for one step (the one with the highest peak), best first."""
    phases: dict[str, Snapshot] = record["phases"]
    peak = max(s[0] for s in phases.values())
    if peak <= 0:
        return []

    def saving(transform: Transform) -> int:
        return int(peak - max(max(0.0, transform(name, s)) for name, s in phases.items()))

    found: list[Lever] = []

    def offer(what: str, transform: Transform) -> None:
        saves = saving(transform)
        if saves >= max(1, MIN_SHARE * peak):
            found.append(Lever(what, saves))

    top = max(phases.values(), key=lambda s: s[0])
    training = ("forward", "backward")
    optimizers = raw.get("optimizers") or []
    backpropagates = "backward" in phases or bool(optimizers)

    # bf16 autocast
    wide = max((s[5] for name, s in phases.items() if name in training), default=0)
    if wide and not raw.get("autocast"):
        weights = raw.get("wide_parameter_bytes", 0)
        offer(f"bf16 autocast (torch.autocast(device_type, dtype=torch.bfloat16)): fp32 activations are "
              f"{_pct(top[5], peak)} of the peak and would take half, less the bf16 weight copies it keeps",
              lambda name, s: s[0] - s[5] / 2 + (weights / 2 if s[4] + s[5] else 0) if name in training else s[0])

    # activation checkpointing of the repeated blocks
    best = None
    for group in (raw.get("blocks") or {}).get("groups", []):
        estimate = group["saved_bytes"] - group["input_bytes"] - group["max_block_bytes"]
        if estimate > 0 and (best is None or estimate > best[0]):
            best = (estimate, group)
    if best is not None and backpropagates:
        estimate, group = best
        offer(f"activation checkpointing of the {group['count']} {group['class']} blocks in {group['name']} "
              "(torch.utils.checkpoint): each keeps its input, its activations are recomputed in backward",
              lambda name, s: s[0] - min(estimate, s[4] + s[5]) if name in training else s[0])

    # optimizer state and the optimizer step
    names = [o["class"] for o in optimizers]
    state = top[3]
    if state and any(n in _ADAM_LIKE or n in _EIGHT_BIT for n in names):
        name = names[0]
        ratio = state / top[1] if top[1] else 0
        alternative = f"bitsandbytes.optim.{_EIGHT_BIT[name]}" if name in _EIGHT_BIT else "an 8-bit optimizer"
        factored = " or a factored optimizer (Adafactor)" if name in _ADAM_LIKE else ""
        offer(f"8-bit optimizer state ({alternative}){factored}: {name} keeps {ratio:.1f}x the parameters as state",
              lambda _, s: s[0] - 0.75 * s[3])
    step = phases.get("optimizer")
    unfused = [o for o in optimizers if not o.get("fused") and o["class"] in _FUSABLE]
    if step is not None and unfused:
        end = record.get("end")
        temporaries = other_bytes(step) - (other_bytes(end) if end else 0)
        if temporaries > 0:
            name = unfused[0]["class"]
            offer(f"{name}(..., fused=True): the optimizer step without its temporaries",
                  lambda phase, s: s[0] - temporaries if phase == "optimizer" else s[0])

    # gradients kept through the forward pass (and into backward, when they are zeroed rather than freed)
    forward = phases.get("forward")
    if forward is not None and forward[2]:
        kept = record.get("grads_before_backward") or 0
        offer("optimizer.zero_grad(set_to_none=True) before the forward pass rather than after it: the previous "
              "step's gradients are alive during forward" + (" and backward (at most this much)" if kept else ""),
              lambda name, s: s[0] - s[2] if name in ("forward", "other")
              else s[0] - min(s[2], kept) if name == "backward" else s[0])

    # no backward pass in the step (batch inference, serving): what autograd saved is never used
    if not backpropagates and top[4] + top[5]:
        offer("torch.inference_mode() (or torch.no_grad()) around the forward pass: no backward pass runs, "
              "so nothing needs saving for one",
              lambda name, s: s[0] - (s[4] + s[5]))

    # gradient accumulation (smaller chunks, without a backward pass)
    batch = (record.get("batch") or {}).get("size")
    if batch and batch >= 2 and top[4] + top[5]:
        half = batch // 2
        what = (f"gradient accumulation: 2 micro-batches of {half} instead of one of {batch} (the same effective "
                "batch); activations halve") if backpropagates else (
                f"2 chunks of {half} instead of one batch of {batch}; activations halve")
        offer(what, lambda name, s: s[0] - (s[4] + s[5]) / 2 if name != "optimizer" else s[0])

    # sharding across the ranks of a distributed run
    ranks = int(raw.get("world_size") or 1)
    if ranks > 1:
        kept = 1 / ranks
        offer(f"FSDP (full sharding over the {ranks} ranks): each rank keeps 1/{ranks} of the parameters, "
              "gradients and optimizer state between uses",
              lambda _, s: s[0] - (1 - kept) * (s[1] + s[2] + s[3]))

    found.sort(key=lambda lever: -lever.saves_bytes)
    return found[:MAX_LEVERS]
