"""Name the holder of what survives a step, wherever it is on the heap.

Run once, at the end of a verify run, for a few surviving tensors per growing site.
Two searches, cheapest first:

1. **Down from the user's variables** (the locals of the user's frames, the globals
   of the user's modules, a step function's closure): containers, ``nn.Module``
   children and instances of the user's own classes. Free of heap scans; finds
   ``all_logits``, ``model.block.cache``, ``losses.sum``.
2. **Up from the tensor** through ``gc.get_referrers``, one heap pass per level
   for every tensor at once, until a root a user recognises: a variable of the
   user's frames, a module global, a class attribute (``KeepLogits.seen``), a
   closure cell (``seen`` in a closure cell of ``keep()``). On the way, an instance
   of a class from the user's files is remembered as an anchor (``Model.step_losses``
   when the module was passed inline to ``trainer.fit``); a path from a variable
   through public attributes (``trainer.callbacks[1].buffer``) beats it, a path
   through private ones (``trainer._strategy._model.step_losses``) does not.

Indices at the end of a path are dropped (a list that grows keeps one name); the
holder also says what it is (``list``, 23 items).
"""

from __future__ import annotations

import collections
import gc
import os
import sys
import types
from dataclasses import dataclass

from memlint.dynamic.usercode import UserFiles

MAX_LEVELS = 10  # heap passes of the upward search
LEVELS_PAST_ANCHOR = 4  # passes spent looking for a better name once an instance anchor was found
MAX_FRONTIER = 48  # objects per pass (gc.get_referrers compares each reference with every target)
MAX_PER_SOURCE = 16
MAX_DOWN_OBJECTS = 20_000  # per root of the downward search
MAX_DOWN_DEPTH = 6

_SCALARS = (str, bytes, int, float, complex, bool, type(None))
_NOT_HOLDERS = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, *_SCALARS)
_SEQUENCES = (list, tuple, collections.deque)
_MODULE_CHILDREN = ("_modules", "_parameters", "_buffers")
_MODULE_SKIP = {"_parameters", "_buffers", "_non_persistent_buffers_set", "training"}

# Ranks of a found path: lower is better.
USER_ROOT, USER_INSTANCE, PRIVATE_PATH, LIBRARY_ROOT = 0, 1, 2, 3


@dataclass(frozen=True)
class Root:
    """A named starting point: a variable, a global, a class attribute, a closure cell, an instance.

    ``function``/``path``/``first_line`` locate the code where the name lives (for the
    line that grows it); ``user`` says whether that code is the user's.
    """

    name: str
    kind: str  # variable | global | class_attribute | closure | instance | library
    function: str
    path: str
    first_line: int
    user: bool = True


@dataclass(frozen=True)
class HeapHolder:
    """What holds a surviving tensor: a path from a root, and what sits at its end."""

    name: str  # "Model.step_losses", "trainer.callbacks[1].buffer", "seen", "all_logits"
    kind: str  # the root's kind; "graph" when the tensor is only saved inside a kept graph
    function: str
    path: str
    first_line: int
    container: str | None = None  # type of the object at the end of the path ("list", "Tensor")
    items: int | None = None  # its length, for containers
    owner_file: str | None = None  # file of the class whose attribute ends the path
    rank: int = USER_ROOT


# -- edges: how one object refers to the next -----------------------------------------------

Edge = tuple  # (kind, label): ("attr", name) | ("key", key) | ("index", i) | ("member", None)
#               | ("cell", None) | ("closure", None) | ("dict", None) | ("local", name) | ("ref", typename)


def _edge(holder, child) -> Edge | None:
    """How ``holder`` refers to ``child``; None when it does not (any more)."""
    try:
        return _find_edge(holder, child)
    except Exception:  # an object whose attribute access runs code of its own and fails
        return ("ref", type(holder).__name__)


def _find_edge(holder, child) -> Edge | None:
    if isinstance(holder, dict):
        for key, value in list(holder.items()):
            if value is child:
                return ("key", key)
        return ("ref", "dict key") if any(key is child for key in holder) else None
    if isinstance(holder, _SEQUENCES):
        for index, value in enumerate(holder):
            if value is child:
                return ("index", index)
        return None
    if isinstance(holder, (set, frozenset)):
        return ("member", None)
    if isinstance(holder, types.CellType):
        return ("cell", None)
    if isinstance(holder, types.FunctionType):
        return ("closure", None) if holder.__closure__ is child else ("ref", "function")
    if isinstance(holder, types.MethodType):
        return ("attr", "__self__") if holder.__self__ is child else ("ref", "method")
    if isinstance(holder, type):
        return ("dict", None) if isinstance(child, dict) and _is_class_namespace(holder, child) else None
    if isinstance(holder, (types.FrameType, types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
        frame = holder if isinstance(holder, types.FrameType) else _suspended_frame(holder)
        for name, value in (frame.f_locals.items() if frame is not None else ()):
            if value is child:
                return ("local", name)
        return None
    if getattr(holder, "__dict__", None) is child:
        return ("dict", None)
    for name, value in list(getattr(holder, "__dict__", {}).items()):
        if value is child:
            return ("attr", name)
    for name in _slot_names(type(holder)):
        if getattr(holder, name, None) is child:
            return ("attr", name)
    return ("ref", type(holder).__name__)


def _slot_names(cls: type) -> list[str]:
    names = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else slots)
    return names


def _is_class_namespace(cls: type, namespace: dict) -> bool:
    proxy = cls.__dict__
    if len(proxy) != len(namespace):
        return False
    return all(proxy.get(key) is value for key, value in list(namespace.items())[:8])


def _suspended_frame(generator):
    for attribute in ("gi_frame", "cr_frame", "ag_frame"):
        frame = getattr(generator, attribute, None)
        if frame is not None:
            return frame
    return None


# -- rendering ------------------------------------------------------------------------------

def render(root: Root, chain: list[tuple[object, Edge]], target) -> HeapHolder:
    """The holder for ``chain`` (from the root's object down to ``target``), trailing indices dropped.

    ``chain[i]`` is (object, edge to the next object); the last edge leads to ``target``.
    """
    objects = [obj for obj, _ in chain] + [target]
    edges = [edge for _, edge in chain]
    keep = len(edges)
    while keep and (edges[keep - 1][0] in ("index", "member")
                    or (edges[keep - 1][0] == "key" and not isinstance(edges[keep - 1][1], str))):
        keep -= 1
    text, private, owner = root.name, False, None
    i = 0
    while i < keep:
        kind, label = edges[i]
        if kind == "dict":  # an object's __dict__ (or a class namespace): the key is an attribute
            if i + 1 < keep and edges[i + 1][0] == "key":
                kind, label, owner_obj = "attr", edges[i + 1][1], objects[i]
                i += 1
            else:
                i += 1
                continue
        else:
            owner_obj = objects[i]
        if kind == "attr":
            if label in _MODULE_CHILDREN and i + 1 < keep and edges[i + 1][0] == "key":
                label = edges[i + 1][1]  # model._modules["block"] reads model.block
                i += 1
            text += f".{label}"
            private = private or (isinstance(label, str) and label.startswith("_") and label != "__self__")
            owner = type(owner_obj)
        elif kind in ("key", "index"):
            text += f"[{key_text(label)}]"
        elif kind == "member":
            text += "{…}"
        elif kind == "ref":
            text += f".<{label}>"
            private = True
        i += 1  # cell, closure and local edges are part of the root's name
    end = objects[keep]
    container = type(end).__name__
    items = len(end) if isinstance(end, (list, tuple, dict, set, frozenset, collections.deque)) else None
    if not root.user:
        rank = LIBRARY_ROOT
    elif private:
        rank = PRIVATE_PATH
    else:
        rank = USER_INSTANCE if root.kind == "instance" else USER_ROOT
    owner_file = _class_file(owner) if owner is not None else None
    return HeapHolder(text, root.kind, root.function, root.path, root.first_line, container, items, owner_file, rank)


MAX_KEY_CHARS = 40


def key_text(key) -> str:
    """A dict key or index as a holder's path shows it, on one short line: ``'loss'``, ``3``,
    ``<Parameter 51×1>`` (a tensor key, such as an optimizer's state, never its values), ``<Step>``."""
    if isinstance(key, str):
        return repr(key if len(key) <= MAX_KEY_CHARS else key[:MAX_KEY_CHARS - 1] + "…")
    if isinstance(key, (int, float, bool, type(None))):
        return repr(key)
    shape = getattr(key, "shape", None) if _is_tensor(key) else None
    if shape is not None:
        return f"<{type(key).__name__} {'×'.join(map(str, shape)) if len(shape) else 'scalar'}>"
    return f"<{type(key).__name__}>"


def _class_file(cls) -> str:
    module = sys.modules.get(getattr(cls, "__module__", ""), None)
    return getattr(module, "__file__", None) or ""


_OWN_FOLDER = os.path.dirname(os.path.abspath(__file__))


# -- the search -----------------------------------------------------------------------------

class HolderSearch:
    """Finds holders for tensors, given named roots (the user's variables) and what is the user's code.

    ``roots`` is a list of (Root, value): the variables the downward search starts from and
    that end an upward path. The search keeps the objects it visits in one dictionary
    (ignored when reading referrers), and everything else by id, so that its own
    bookkeeping never shows up as a holder. The caller must not keep the targets in
    containers of its own while searching, other than the list it passes.
    """

    def __init__(self, roots: list, is_user: UserFiles) -> None:
        self.roots = roots
        self.is_user = is_user
        self._root_of: dict[int, Root] = {}
        for root, value in roots:
            self._root_of.setdefault(id(value), root)
        self._module_of = {id(vars(m)): m for m in list(sys.modules.values())
                           if isinstance(m, types.ModuleType) and hasattr(m, "__dict__")}
        self._ignore = {id(roots), id(self.__dict__)}
        self._ignore.update(id(pair) for pair in roots)

    def find(self, targets: list) -> list[HeapHolder | None]:
        """Holders for ``targets`` (tensors or other objects), the downward search first."""
        self._ignore.add(id(targets))
        results = self.down(targets)
        missing = [i for i, found in enumerate(results) if found is None]
        if missing:
            for i, found in zip(missing, self.up(targets, missing)):
                results[i] = found
        return results

    # Downward ---------------------------------------------------------------------------------
    def down(self, targets: list) -> list[HeapHolder | None]:
        """For each target: the first path from a user variable that reaches it, else None."""
        wanted = {id(t): i for i, t in enumerate(targets)}
        found: list[HeapHolder | None] = [None] * len(targets)
        for root, value in self.roots:
            if all(found):
                break
            self._walk_down(root, value, targets, wanted, found)
        return found

    def _walk_down(self, root: Root, value, targets: list, wanted: dict, found: list) -> None:
        stack = [(value, [])]
        seen: set[int] = set()
        budget = MAX_DOWN_OBJECTS
        while stack and budget > 0:
            obj, chain = stack.pop()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            budget -= 1
            index = wanted.get(id(obj))
            if index is not None and obj is targets[index]:
                if found[index] is None:
                    found[index] = render(root, chain, obj)
                continue
            if len(chain) >= MAX_DOWN_DEPTH or isinstance(obj, _NOT_HOLDERS) or _is_tensor(obj):
                continue
            for edge, child in self._children(obj):
                stack.append((child, chain + [(obj, edge)]))

    def _children(self, obj):
        if isinstance(obj, _SEQUENCES):
            return [(("index", i), item) for i, item in enumerate(obj)]
        if isinstance(obj, (set, frozenset)):
            return [(("member", None), item) for item in obj]
        if isinstance(obj, dict):
            return [(("key", key), item) for key, item in list(obj.items())]
        if _is_module(obj):
            out = []
            for attr, item in vars(obj).items():
                if attr == "_modules":
                    out.extend((("attr", name), sub) for name, sub in item.items())
                elif attr not in _MODULE_SKIP and not attr.startswith("_"):
                    out.append((("attr", attr), item))
            return out
        if hasattr(obj, "__dict__") and self.is_user(_class_file(type(obj))):
            return [(("attr", attr), item) for attr, item in list(vars(obj).items())]
        return []

    # Upward -----------------------------------------------------------------------------------
    def up(self, targets: list, which: list[int]) -> list[HeapHolder | None]:
        """For ``targets[i]``, i in ``which``: the best holder found by walking referrers upwards.

        One ``gc.get_referrers`` pass per level for all of them. A path ends at a root; an
        instance of a user class is an anchor that a better path may still beat.
        """
        objects: dict[int, object] = {id(targets[i]): targets[i] for i in which}  # everything we hold
        sources = list(range(len(which)))
        # per source: id -> (edge to the child, id of the child); the target has no edge
        parents: list[dict[int, tuple]] = [{id(targets[i]): (None, None)} for i in which]
        frontier: list[list[int]] = [[id(targets[i])] for i in which]
        best: list[HeapHolder | None] = [None] * len(which)
        done = [False] * len(which)
        anchored_at: dict[int, int] = {}  # source -> level where an instance anchor was found
        self._ignore.add(id(objects))
        for depth in range(MAX_LEVELS):
            for s, level in anchored_at.items():
                done[s] = done[s] or depth - level > LEVELS_PAST_ANCHOR
            active = [s for s in sources if not done[s] and frontier[s]]
            if not active:
                break
            level_ids: set[int] = set()
            for s in active:
                for oid in frontier[s][:MAX_PER_SOURCE]:
                    if len(level_ids) < MAX_FRONTIER:
                        level_ids.add(oid)
            level = tuple(objects[oid] for oid in level_ids)
            self._ignore.add(id(level))
            referrers = gc.get_referrers(*level)
            self._ignore.discard(id(level))
            del level
            next_frontier: list[list[int]] = [[] for _ in which]
            for holder in referrers:
                if id(holder) in self._ignore or id(holder) in objects and _seen_by_all(holder, parents, active):
                    continue
                if self._is_own(holder):
                    continue
                for child in gc.get_referents(holder):
                    child_id = id(child)
                    if child_id not in level_ids:
                        continue
                    edge = None
                    for s in active:
                        if done[s] or child_id not in parents[s] or id(holder) in parents[s]:
                            continue
                        if child_id not in frontier[s][:MAX_PER_SOURCE]:
                            continue
                        if edge is None:
                            edge = _edge(holder, child)
                            if edge is None:
                                break
                        parents[s][id(holder)] = (edge, child_id)
                        objects[id(holder)] = holder
                        found = self._as_root(holder, edge, s, parents[s], objects, targets[which[s]])
                        if found is not None:
                            if best[s] is None or (found.rank, len(found.name)) < (best[s].rank, len(best[s].name)):
                                best[s] = found
                            if found.rank == USER_ROOT:
                                done[s] = True
                            if found.kind == "instance":
                                anchored_at.setdefault(s, depth)
                            else:
                                continue  # a root: nothing above it names the holder better
                        next_frontier[s].append(id(holder))
            del referrers
            frontier = next_frontier
        self._ignore.discard(id(objects))
        objects.clear()
        return best

    @staticmethod
    def _is_own(obj) -> bool:
        """memlint's own frames and generators are never holders."""
        if isinstance(obj, types.FrameType):
            return obj.f_code.co_filename.startswith(_OWN_FOLDER)
        if isinstance(obj, types.GeneratorType):
            return obj.gi_code.co_filename.startswith(_OWN_FOLDER)
        return False

    @staticmethod
    def _chain(parents: dict, objects: dict, top_id: int) -> list[tuple[object, Edge]]:
        """(object, edge) from ``top_id`` down to the target."""
        chain = []
        edge, child_id = parents[top_id]
        node_id = top_id
        while edge is not None:
            chain.append((objects[node_id], edge))
            node_id = child_id
            edge, child_id = parents[node_id]
        return chain

    def _as_root(self, holder, edge: Edge, s: int, parents: dict, objects: dict, target) -> HeapHolder | None:
        """A holder when ``holder`` is a root (or an anchor); None to keep climbing."""
        child_id = parents[id(holder)][1]
        known = self._root_of.get(id(holder))
        if known is not None:
            return render(known, self._chain(parents, objects, id(holder)), target)
        if isinstance(holder, dict) and id(holder) in self._module_of and edge[0] == "key":
            module = self._module_of[id(holder)]
            path = getattr(module, "__file__", None) or ""
            user = self.is_user(path)
            name = edge[1] if user and module.__name__ == "__main__" else f"{module.__name__}.{edge[1]}"
            root = Root(str(name), "global" if user else "library", "<module>", path, 1, user)
            return render(root, self._chain(parents, objects, child_id), target)
        if isinstance(holder, type) and edge[0] == "dict":
            key_edge, below = parents[child_id]
            if key_edge is None or key_edge[0] != "key":
                return None
            path = _class_file(holder)
            user = self.is_user(path)
            root = Root(f"{holder.__qualname__}.{key_edge[1]}", "class_attribute", "<module>", path, 1, user)
            return render(root, self._chain(parents, objects, below), target)
        if isinstance(holder, types.FunctionType) and edge[0] == "closure":
            index_edge, cell_id = parents[child_id]
            if index_edge is None or index_edge[0] != "index":
                return None
            code = holder.__code__
            variable = code.co_freevars[index_edge[1]] if index_edge[1] < len(code.co_freevars) else "?"
            user = self.is_user(code.co_filename)
            root = Root(variable, "closure", holder.__name__, code.co_filename, code.co_firstlineno, user)
            return render(root, self._chain(parents, objects, parents[cell_id][1]), target)
        if edge[0] == "local":
            frame = holder if isinstance(holder, types.FrameType) else _suspended_frame(holder)
            code = frame.f_code
            user = self.is_user(code.co_filename)
            root = Root(edge[1], "variable", code.co_name, code.co_filename, code.co_firstlineno, user)
            return render(root, self._chain(parents, objects, child_id), target)
        cls = type(holder)
        if (hasattr(holder, "__dict__") and not isinstance(holder, (type, types.ModuleType, types.FunctionType))
                and self.is_user(_class_file(cls))):
            root = Root(cls.__qualname__, "instance", "<module>", _class_file(cls), 1, True)
            return render(root, self._chain(parents, objects, id(holder)), target)
        return None


def _seen_by_all(holder, parents: list[dict], active: list[int]) -> bool:
    return all(id(holder) in parents[s] for s in active)


def _is_tensor(obj) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def _is_module(obj) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def frame_roots(frames, is_user: UserFiles) -> list[tuple[Root, object]]:
    """(Root, value) for the locals of the user's frames and the globals of their modules."""
    roots: list[tuple[Root, object]] = []
    seen_globals: set[int] = set()
    for frame in frames:
        code = frame.f_code
        if code.co_name != "<module>":
            roots.extend(namespace_roots(frame.f_locals, "variable", code.co_name, code.co_filename,
                                         code.co_firstlineno))
        module_globals = frame.f_globals
        if id(module_globals) not in seen_globals:
            seen_globals.add(id(module_globals))
            filename = module_globals.get("__file__") or code.co_filename
            if is_user(filename):
                roots.extend(namespace_roots(module_globals, "global", "<module>", filename, 1))
    return roots


def namespace_roots(namespace, kind: str, function: str, path: str, first_line: int) -> list[tuple[Root, object]]:
    """(Root, value) for the variables of one namespace worth following (no modules, functions, numbers).

    ``self`` is named by its class (``Server.responses`` reads better than ``self.responses``).
    """
    return [(Root(type(value).__qualname__ if name == "self" else name, kind, function, path, first_line), value)
            for name, value in list(namespace.items())
            if not name.startswith("__") and not isinstance(value, _NOT_HOLDERS)]
