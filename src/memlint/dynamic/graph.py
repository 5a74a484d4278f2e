"""The autograd graph kept alive past a step, whoever holds it.

Autograd nodes live in C++; what keeps them alive is a tensor's ``grad_fn`` (and
the nodes behind it). Every tensor that carries a graph was made by an operator,
so :class:`GraphTracker` (the storage tracker, extended) keeps a weak reference to
the tensor that created each storage and to the latest view of it. At a step
boundary :func:`sample_graph` walks ``grad_fn``/``next_functions`` from the live
ones: the nodes a LightningModule's list, a Trainer subclass's class attribute or
a closure keep alive are counted like those of the script's own variables, with no
scan of the heap. Nodes are attributed to the allocation site of the first tensor
(in creation order) that reaches them, so the site whose tensors hold a growing
graph can be found, and its holder named at the end (:mod:`memlint.dynamic.heap`).

Storages on other devices than the measured one (a CPU copy of a CUDA output that
kept its graph, ``out.cpu()``) are followed too, for the graph only.
"""

from __future__ import annotations

import gc
import weakref

import torch

from memlint.dynamic.storages import Site, StorageTracker, Survivor

# One step's walk stops here: a leak that big is already obvious, and the walk stays bounded.
MAX_GRAPH_NODES = 500_000


class GraphTracker(StorageTracker):
    """A :class:`StorageTracker` that also remembers which tensors own each storage.

    ``refs[key]`` is ``[creator, latest view]`` (weak references; the view replaces the
    creator as a root when the creator is gone but a view keeps the storage and its graph).
    ``foreign`` holds storages on other devices, followed for their graph only.
    """

    def __init__(self, device_type: str = "cpu", is_user=None) -> None:
        super().__init__(device_type, is_user)
        self.refs: dict[int, list] = {}
        self.foreign: dict[int, Survivor] = {}

    def _track(self, tensor: torch.Tensor) -> None:
        super()._track(tensor)
        self._remember(tensor)

    def _remember(self, tensor: torch.Tensor) -> None:
        try:
            storage = tensor.untyped_storage()
        except (RuntimeError, NotImplementedError):
            return
        key = id(storage)
        entry = self.refs.get(key)
        if entry is not None:
            if entry[0]() is not tensor:
                entry[1] = weakref.ref(tensor)
            return
        if key not in self.live:  # another device (or an empty storage)
            if tensor.device.type == self.device_type or not storage.nbytes():
                return
            self.foreign[key] = Survivor(storage.nbytes(), self._site(), self.step)
            weakref.finalize(storage, self._forget_foreign, key)
        self.refs[key] = [weakref.ref(tensor), _no_view]

    def _release(self, key: int) -> None:
        super()._release(key)
        self.refs.pop(key, None)

    def _forget_foreign(self, key: int) -> None:
        self.foreign.pop(key, None)
        self.refs.pop(key, None)

    def survivor(self, key: int) -> Survivor | None:
        return self.live.get(key) or self.foreign.get(key)

    def tensors(self, key: int) -> list[torch.Tensor]:
        """The live tensors we know of on storage ``key`` (creator first)."""
        entry = self.refs.get(key)
        if entry is None:
            return []
        return [t for t in (entry[0](), entry[1]()) if t is not None]

    def restart(self) -> None:
        """Steps are counted again from 1: everything alive now counts as made before them."""
        for survivor in (*self.live.values(), *self.foreign.values()):
            survivor.step = 0
        self.step = 1


def _no_view() -> None:
    """Stands for the weak reference to a view until a view of the storage is seen."""
    return None


def graph_roots(tracker: GraphTracker):
    """(storage key, site, tensor) for every live tracked tensor that carries a graph, oldest first."""
    for key, entry in list(tracker.refs.items()):
        for ref in entry:
            tensor = ref()
            if tensor is not None and tensor.grad_fn is not None:
                survivor = tracker.survivor(key)
                yield key, survivor.site if survivor else None, tensor


def sample_graph(tracker: GraphTracker) -> tuple[int, dict[Site | None, int]]:
    """Distinct autograd nodes kept alive by tracked tensors, and per allocation site."""
    seen: set = set()
    per_site: dict[Site | None, int] = {}
    for _, site, tensor in graph_roots(tracker):
        before = len(seen)
        _reach(tensor.grad_fn, seen)
        if len(seen) > before:
            per_site[site] = per_site.get(site, 0) + len(seen) - before
        if len(seen) >= MAX_GRAPH_NODES:
            break
    return len(seen), per_site


def graph_sinks(tracker: GraphTracker, born_after: int) -> list[tuple[int, Site | None, torch.Tensor]]:
    """(key, site, tensor) for live tracked tensors born after step ``born_after`` whose graph no
    other tracked tensor's graph contains: the outputs that are kept (a list of logits, a cache of
    responses), not the activations their graphs saved. Oldest first."""
    roots = list(graph_roots(tracker))
    below: set = set()  # nodes some tensor's graph reaches beneath its own grad_fn
    for _, _, tensor in roots:
        for child, _ in tensor.grad_fn.next_functions:
            if child is not None:
                _reach(child, below)
        if len(below) >= MAX_GRAPH_NODES:
            break
    sinks, seen_fns = [], set()
    for key, site, tensor in roots:
        survivor = tracker.survivor(key)
        grad_fn = tensor.grad_fn
        if survivor is None or survivor.step <= born_after or grad_fn in below or grad_fn in seen_fns:
            continue
        seen_fns.add(grad_fn)
        sinks.append((key, site, tensor))
    return sinks


def _reach(start, seen: set) -> None:
    if start in seen:
        return
    stack = [start]
    seen.add(start)
    while stack and len(seen) < MAX_GRAPH_NODES:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)


def tensors_sharing(keys: set[int], skip: set[int], per_key: int = 4) -> tuple[list[int], list[torch.Tensor]]:
    """(storage keys, tensors): live tensors on the storages ``keys`` other than those in ``skip``
    (ids), at most ``per_key`` each, found in one pass over the objects the garbage collector tracks.

    Used once, at the end, for storages whose known tensors lead to no holder: what is kept is
    often another view of the storage than the one the tracker saw made last (``q`` of
    ``qkv.chunk(3)``, ``out.squeeze()`` before ``out.view(-1)``), or a tensor made outside the
    dispatcher around an output it saw (a compiled graph's output, a model output's field).
    """
    found_keys: list[int] = []
    found: list[torch.Tensor] = []
    per: dict[int, int] = {}
    for obj in gc.get_objects():
        if not issubclass(type(obj), torch.Tensor) or id(obj) in skip:  # type(): no __class__ lookups
            continue
        try:
            key = id(obj.untyped_storage())
        except (RuntimeError, NotImplementedError):
            continue
        if key in keys and per.get(key, 0) < per_key:
            per[key] = per.get(key, 0) + 1
            found_keys.append(key)
            found.append(obj)
    return found_keys, found


def saved_storages(tensor: torch.Tensor, wanted: set[int], limit: int = MAX_GRAPH_NODES) -> set[int]:
    """The storages in ``wanted`` that ``tensor``'s graph saved for backward (``_saved_*`` of its nodes).

    Used once, at the end: an activation that survives only inside the graph of a kept
    output has no tensor object left to follow, but the graph that saves it has a holder.
    """
    found: set[int] = set()
    seen: set = set()
    _reach(tensor.grad_fn, seen)
    names: dict[type, list[str]] = {}
    for index, node in enumerate(seen):
        if index >= limit or len(found) == len(wanted):
            break
        kind = type(node)
        if kind not in names:
            names[kind] = [name for name in dir(node) if name.startswith("_saved_")]
        for name in names[kind]:
            try:
                value = getattr(node, name)
            except RuntimeError:  # freed by a backward pass
                continue
            for item in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(item, torch.Tensor):
                    try:
                        key = id(item.untyped_storage())
                    except (RuntimeError, NotImplementedError):
                        continue
                    if key in wanted:
                        found.add(key)
    return found
