"""Optimizer state that is bounded by construction: it grows for a while, then stops.

LBFGS keeps the last ``history_size`` pairs of directions and steps (``old_dirs``,
``old_stps``, their ``ro``, and ``al`` of the same length); until that history is full,
every step adds to it, which reads exactly like a leak. It is not one: the child
leaves these tensors out of the live bytes it samples and out of the growing lines,
and says so in the report, with how full the history is.

Child side (torch).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# Optimizer class (or a base class) -> the hyperparameter that bounds its history, and the
# entries of its state that the history is made of.
BOUNDED_HISTORIES = {
    "LBFGS": ("history_size", ("old_dirs", "old_stps", "ro", "al")),
}


@dataclass
class BoundedState:
    """One optimizer's bounded history at one step boundary."""

    optimizer: str  # its class
    hyperparameter: str  # history_size
    bound: int
    length: int  # entries in the history now
    entries: tuple[str, ...]
    keys: set[int]  # ids of the storages of its tensors

    def to_json(self) -> dict:
        return {"optimizer": self.optimizer, "hyperparameter": self.hyperparameter, "bound": self.bound,
                "length": self.length, "entries": list(self.entries)}


def bounded_history(optimizer) -> BoundedState | None:
    """The history of ``optimizer`` if its class keeps one bounded by a hyperparameter."""
    spec = next((BOUNDED_HISTORIES[cls.__name__] for cls in type(optimizer).__mro__
                 if cls.__name__ in BOUNDED_HISTORIES), None)
    if spec is None:
        return None
    hyperparameter, entries = spec
    groups = getattr(optimizer, "param_groups", None) or [{}]
    bound = groups[0].get(hyperparameter)
    if not isinstance(bound, int):
        return None
    keys: set[int] = set()
    length = 0
    for state in list(optimizer.state.values()):
        if not isinstance(state, dict):
            continue
        for entry in entries:
            values = state.get(entry)
            if not isinstance(values, (list, tuple)):
                continue
            if entry == entries[0]:
                length = max(length, len(values))
            for value in values:
                if isinstance(value, torch.Tensor):
                    try:
                        keys.add(id(value.untyped_storage()))
                    except (RuntimeError, NotImplementedError):
                        continue
    return BoundedState(type(optimizer).__name__, hyperparameter, bound, length, entries, keys)
