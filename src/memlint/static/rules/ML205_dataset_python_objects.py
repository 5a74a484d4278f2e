"""ML205 dataset-python-objects: a Dataset keeps its samples in a big Python list or dict,
and a DataLoader of the same module reads it from worker processes.

Workers are forked from the main process and share its memory copy-on-write, but reading a
Python object writes its reference count: every page of the list (and of every string, int
and tuple in it) touched by a worker gets copied into that worker. Each worker's memory then
climbs until it holds a full copy of the dataset ("memory leak" with ``num_workers > 0``,
pytorch/pytorch#13246). Keep samples in numpy arrays, an arrow table, or one serialized
buffer plus offsets; Python objects are fine for a few thousand items. A list of tensors or
arrays costs less: only the pages of their Python objects are copied, not their data.

Flagged (info): in ``__init__`` of a Dataset class, ``self.x = `` a list/dict/set
comprehension, ``json.load``, ``pickle.load``, ``yaml.*load``, ``f.readlines()``,
``.splitlines()``, ``.tolist()``, ``list(...)`` or ``sorted(...)``, or ``self.x.append(...)``
in a loop, when the module builds a ``DataLoader`` with ``num_workers`` above zero for that
class (or for a dataset it cannot name). ``num_workers`` counts as above zero when it is a
literal above 0 or any non-literal expression (``args.workers``, ``os.cpu_count()``): a
configurable worker count is there to be raised. No ``num_workers`` (the default, 0) or a
literal 0 is not flagged; small attributes named like ``classes``, ``transforms``,
``columns``, ``keys`` are not flagged either; nor a container that ``__getitem__`` does not
read one entry per sample (not indexed by the item index, or by a key looked up with it, and
not what ``__len__`` counts): one entry per file or shard, found with ``bisect`` over offsets,
is bounded by the number of files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import ClassInfo, data_loader_call, descendants, dotted_name, methods_of_class, names_in
from memlint.static.rule import Invalid, Rule

# Methods of an array that hand back an array (``np.vstack(x).reshape(...)``).
_ARRAY_METHODS = frozenset({"reshape", "transpose", "astype", "squeeze", "view", "flatten", "permute", "contiguous",
                            "float", "long", "int"})
_LOADERS = frozenset({"json.load", "json.loads", "pickle.load", "pickle.loads", "yaml.load", "yaml.safe_load",
                      "yaml.full_load", "yaml.unsafe_load", "orjson.loads", "ujson.load", "ujson.loads"})
_BUILDERS = frozenset({"list", "sorted"})
_PANDAS_BUILDERS = frozenset({"pandas.DataFrame", "pandas.concat", "pandas.merge"})
_LISTING_METHODS = frozenset({"readlines", "splitlines", "tolist"})
# Attributes that are small by nature.
_SMALL_WORDS = frozenset({"class", "classes", "transform", "transforms", "column", "columns", "field", "fields",
                          "keys", "cfg", "config", "args", "splits", "shape", "dims"})
_LOOKUP_WORDS = frozenset({"map", "mapping", "lookup", "vocab", "vocabulary"})


@dataclass
class _Storage:
    node: cst.CSTNode
    attribute: str
    how: str
    info: ClassInfo
    elements: str | None = None  # "tensor" / "array": one such object per sample


class DatasetPythonObjects(Rule):
    code = "ML205"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._storages: list[_Storage] = []
        # Dataset classes used by DataLoaders with workers; None: a dataset it cannot name.
        self._loaded_with_workers: set[str | None] = set()
        # self.x = param in a Dataset's __init__: (node, attribute, param, position, class)
        self._parameter_storages: list[tuple[cst.Assign, str, str, int, ClassInfo]] = []
        # Calls passing a loaded container: (callee's last name, position or keyword, how it was loaded)
        self._constructions: list[tuple[str, int | str, str]] = []
        self._scheduled = False

    # ----- storing samples in __init__ -----------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1:
            self._attribute_assigned(node, node.targets[0].target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:  # self.index: List[Tuple[int, int]] = [...]
            self._attribute_assigned(node, node.target, node.value)

    def _attribute_assigned(self, node: cst.Assign | cst.AnnAssign, target: cst.BaseExpression,
                            value: cst.BaseExpression) -> None:
        info = self._dataset_init()
        if info is None:
            return
        attribute = dotted_name(target)
        if attribute is None or not attribute.startswith("self.") or attribute.count(".") != 1:
            return
        how = self._python_container(value)
        if how is not None:
            elements = self._element_kind(value.elt) if isinstance(value, cst.ListComp) else None
            self._store(node, attribute, how, info, elements)
        elif isinstance(value, cst.Name):
            self._note_parameter_storage(node, attribute, value.value, info)

    def _note_parameter_storage(self, node: cst.Assign, attribute: str, name: str, info: ClassInfo) -> None:
        """``self.data = data`` with ``data`` a parameter of ``__init__``: big if a caller of this
        module passes a loaded dict or list (decided at the end)."""
        function = self.facts.function
        params = [p.name.value for p in function.node.params.params][1:]  # without self
        if name not in params or _is_small(attribute):
            return
        self._parameter_storages.append((node, attribute, name, params.index(name), info))
        self._schedule()

    def _note_construction(self, node: cst.Call) -> None:
        """``Dataset(annotations, ...)`` where ``annotations`` was loaded here (json.load, a comprehension...)."""
        name = dotted_name(node.func)
        if name is None or name.rsplit(".", 1)[-1] not in self.facts.classes:
            return  # only calls of this module's classes (defined above the call)
        for position, arg in enumerate(node.args):
            if arg.star or not isinstance(arg.value, cst.Name):
                continue
            binding = self.facts.lookup(arg.value.value)
            value = binding.node if binding is not None else None
            how = self._python_container(value) if isinstance(value, cst.BaseExpression) else None
            if how is not None:
                key = arg.keyword.value if arg.keyword is not None else position
                self._constructions.append((name.rsplit(".", 1)[-1], key, f"'{arg.value.value}' = {how}"))

    def visit_Call(self, node: cst.Call) -> None:
        self._note_data_loader(node)
        if node.args and isinstance(node.func, (cst.Name, cst.Attribute)):
            self._note_construction(node)
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("append", "extend"):
            return
        info = self._dataset_init()
        if info is None or self.facts.loop is None:
            return
        attribute = dotted_name(func.value)
        if attribute is None or not attribute.startswith("self.") or attribute.count(".") != 1:
            return
        if all(self._over_a_literal(loop.node) for loop in self.facts.loops_in_function()):
            return  # for i in range(len(month_list)), month_list = [1, 2, 4]: a few entries, not one per sample
        values = [arg.value for arg in node.args if arg.keyword is None]
        elements = self._element_kind(values[0]) if func.attr.value == "append" and values else None
        self._store(node, attribute, f"{func.attr.value}() in a loop", info, elements)

    def _over_a_literal(self, loop: cst.CSTNode) -> bool:
        """Does the ``for`` run over a literal list or tuple (through a name bound to one,
        ``range(len(...))`` of one, ``enumerate``/``zip`` of ones)? Its count is written in the code
        (``range(10000)`` is not: that count may be the samples')."""
        if not isinstance(loop, cst.For):
            return False
        stack, seen = [loop.iter], 0
        while stack and seen < 8:
            seen += 1
            value = stack.pop()
            if isinstance(value, cst.Name):
                binding = self.facts.lookup(value.value)
                value = binding.node if binding is not None else None
            if isinstance(value, (cst.List, cst.Tuple)):
                if any(isinstance(element, cst.StarredElement) for element in value.elements):
                    return False
                continue
            if isinstance(value, cst.Call) and dotted_name(value.func) in ("range", "len", "enumerate", "zip") \
                    and value.args and self.facts.lookup(dotted_name(value.func)) is None:
                if dotted_name(value.func) == "range":
                    if len(value.args) != 1:
                        return False  # (range(10000) is a count, not a literal's length: no)
                    stack.append(value.args[0].value)
                else:
                    stack.extend(arg.value for arg in value.args)
                continue
            return False
        return not stack

    def _store(self, node: cst.CSTNode, attribute: str, how: str, info: ClassInfo,
               elements: str | None = None) -> None:
        if _is_small(attribute):
            return
        if any(s.attribute == attribute and s.info is info for s in self._storages):
            return
        storage = _Storage(node, attribute, how, info, elements)
        self._storages.append(storage)
        self.at_module_exit(lambda: self._decide(storage))

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide_parameters)

    def _decide_parameters(self) -> None:
        for node, attribute, param, index, info in self._parameter_storages:
            for cls, key, how in self._constructions:
                if cls in self._class_and_subclasses(info) and key in (param, index):
                    self._decide(_Storage(node, attribute, how, info))
                    break

    def _decide(self, storage: _Storage) -> None:
        if not self._loaded_with_workers:
            return
        if None not in self._loaded_with_workers and not any(
            name in self._loaded_with_workers for name in self._class_and_subclasses(storage.info)
        ):
            return
        attribute = storage.attribute
        if self._converted_after(storage):
            return  # self.data = np.vstack(self.data) once the loop is done: one array, not a list of objects
        if self._read_per_sample(storage.info, attribute, direct_only=storage.elements is not None) is False:
            # one entry per file or shard (read by another index): bounded by the file count; for
            # arrays, also one per room or file that a per-sample table points into
            # (``self.room_points[self.room_idxs[idx]]``): a few objects, whatever their data
            return
        if "pandas." in storage.how:
            message = f"'{attribute}' holds a pandas frame ({storage.how}) whose string columns workers copy"
            help = "convert the columns to numpy arrays in __init__ (strings as one fixed-width or arrow array)"
        elif storage.elements is not None:
            message = (f"'{attribute}' holds one {storage.elements} per sample ({storage.how}), whose objects "
                       f"workers copy as they read them")
            help = (f"stack them into one {storage.elements} and index it (with offsets for ragged samples): "
                    f"a worker then touches one object, not one per sample")
        else:
            message = f"'{attribute}' holds Python objects ({storage.how}) that workers copy as they read them"
            help = "store the samples in numpy arrays, an arrow table, or one serialized buffer with offsets"
        self.report(storage.node, message, help=help, needs_grad=False)

    def _converted_after(self, storage: _Storage) -> bool:
        """Does the method that fills the attribute rebind it, in its own top-level statements after
        the one filling it, to an array or a tensor made by numpy or torch (``self.data =
        np.vstack(self.data).reshape(-1, 3, 32, 32)``, ``self.targets = np.asarray(self.targets)``)?"""
        method = next((scope.node for scope in storage.info.methods.values()
                       if any(node is storage.node for node in descendants(scope.node))), None)
        if not isinstance(method, cst.FunctionDef) or not isinstance(method.body, cst.IndentedBlock):
            return False
        after = False
        for statement in method.body.body:
            if not after:
                after = any(node is storage.node for node in descendants(statement))
                continue
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and dotted_name(small.targets[0].target) == storage.attribute:
                    value = small.value
                    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                            and not isinstance(value.func.value, (cst.Name,)) and value.func.attr.value in _ARRAY_METHODS:
                        value = value.func.value  # np.vstack(x).reshape(...): the array np.vstack made
                    qualified = self.facts.qualified_name(value.func) if isinstance(value, cst.Call) else None
                    if qualified is not None and qualified.startswith(("numpy.", "torch.")) \
                            and qualified not in ("torch.load", "numpy.load"):
                        return True
        return False

    def _read_per_sample(self, info: ClassInfo, attribute: str, direct_only: bool = False) -> bool | None:
        """Is ``attribute`` read one entry per sample: indexed by ``__getitem__``'s index
        (``self.rows[idx]``, ``self.rows.iloc[idx]``), or its length is ``__len__``'s? None when
        the class defines no ``__getitem__`` to tell (a base's, an iterable dataset's).
        ``direct_only``: a key looked up with the index in another container
        (``room = self.room_idxs[idx]``) does not count."""
        methods = self.facts.class_methods.get(info.name)
        if methods is None:  # a class defined in a function or under ``if __name__ == "__main__":``
            methods = methods_of_class(info.node)
        getitem = methods.get("__getitem__")
        if getitem is None:
            return None
        params = [p.name.value for p in getitem.params.params]
        index = params[1] if len(params) > 1 else None
        reads = _Reads(attribute if attribute.startswith("self.") else f"self.{attribute}", index, direct_only)
        getitem.body.visit(reads)
        length = methods.get("__len__")
        if length is not None:
            length.body.visit(reads)
        return reads.per_sample

    def _class_and_subclasses(self, info: ClassInfo) -> set[str]:
        names = {info.name}
        changed = True
        while changed:
            changed = False
            for other in self.facts.classes.values():
                if other.name not in names and any(base in names for base in other.base_names):
                    names.add(other.name)
                    changed = True
        return names

    def _dataset_init(self) -> ClassInfo | None:
        function = self.facts.function
        info = function.class_info
        if function.name != "__init__" or info is None or not self._is_dataset(info):
            return None
        return info

    def _is_dataset(self, info: ClassInfo, depth: int = 0) -> bool:
        if info.is_dataset:
            return True
        return depth < 5 and any(
            base in self.facts.classes and self.facts.classes[base] is not info
            and self._is_dataset(self.facts.classes[base], depth + 1)
            for base in info.base_names
        )

    def _python_container(self, value: cst.BaseExpression) -> str | None:
        if isinstance(value, cst.ListComp):
            return "a list comprehension"
        if isinstance(value, cst.DictComp):
            return "a dict comprehension"
        if isinstance(value, cst.SetComp):
            return "a set comprehension"
        if not isinstance(value, cst.Call):
            return None
        qualified = self.facts.qualified_name(value.func)
        if qualified in _LOADERS:
            return f"{qualified}()"
        if qualified is not None and qualified.startswith("pandas.") and (
                qualified.rsplit(".", 1)[-1].startswith("read_") or qualified in _PANDAS_BUILDERS):
            return f"{qualified}()"
        if qualified in _BUILDERS and value.args:
            return f"{qualified}(...)"
        if isinstance(value.func, cst.Attribute) and value.func.attr.value in _LISTING_METHODS:
            return f".{value.func.attr.value}()"
        return None

    def _element_kind(self, element: cst.BaseExpression | None, depth: int = 0) -> str | None:
        """"tensor" / "array" when each stored sample is one (``torch.tensor(x)``,
        ``np.array(x)``, ``t.numpy()``, ``x.astype(np.uint8)``, a slice of one, a local bound to one: ``points =
        np.load(path)[:, :6]``): its data is not copied into workers, only its object."""
        if depth > 3 or element is None:
            return None
        if isinstance(element, cst.Subscript):
            return self._element_kind(element.value, depth + 1)
        if isinstance(element, cst.Name):
            binding = self.facts.lookup(element.value)
            node = binding.node if binding is not None and isinstance(binding.node, cst.BaseExpression) else None
            return self._element_kind(node, depth + 1) if node is not element else None
        if not isinstance(element, cst.Call):
            return None
        if isinstance(element.func, cst.Attribute) and element.func.attr.value in ("numpy", "astype"):
            return "array"  # (``astype``: numpy's and pandas' method, never a list's or a tensor's)
        qualified = self.facts.qualified_name(element.func) or ""
        if qualified.startswith("torch.") and qualified not in ("torch.load", "torch.jit.load"):
            return "tensor"
        if qualified.startswith("numpy."):
            return "array"
        return None

    # ----- the DataLoader ------------------------------------------------------------------
    def _note_data_loader(self, node: cst.Call) -> None:
        loader = data_loader_call(node, self.facts)
        if loader is not None and loader[1] is True:
            self._loaded_with_workers.add(self._dataset_class(loader[0]))

    def _dataset_class(self, dataset: cst.BaseExpression | None) -> str | None:
        if isinstance(dataset, cst.Name):
            binding = self.facts.lookup(dataset.value)
            dataset = binding.node if binding is not None and isinstance(binding.node, cst.Call) else dataset
        if isinstance(dataset, cst.Call):
            name = dotted_name(dataset.func)
            if name is not None and name.rsplit(".", 1)[-1] in self.facts.classes:
                return name.rsplit(".", 1)[-1]
        return None

    VALID = [
        # one array per room, read through the per-sample table of rooms: a few objects
        """
import numpy as np
from torch.utils.data import Dataset, DataLoader
class RoomBlocks(Dataset):
    def __init__(self, paths, samples_per_room):
        self.room_points = []
        room_idxs = []
        for index, path in enumerate(paths):
            self.room_points.append(np.load(path)[:, :6])
            room_idxs.extend([index] * samples_per_room)
        self.room_idxs = np.array(room_idxs)
    def __len__(self):
        return len(self.room_idxs)
    def __getitem__(self, idx):
        points = self.room_points[self.room_idxs[idx]]
        return points[np.random.choice(len(points), 4096)]
loader = DataLoader(RoomBlocks(["a.npy"], 100), batch_size=16, num_workers=4)
""",
        # batches gathered in a list, then stacked into one array before __init__ returns
        """
import pickle
import numpy as np
from torch.utils.data import Dataset, DataLoader
class Cifar(Dataset):
    def __init__(self, files):
        self.data = []
        self.targets = []
        for name in files:
            with open(name, "rb") as f:
                entry = pickle.load(f, encoding="latin1")
            self.data.append(entry["data"])
            self.targets.extend(entry["labels"])
        self.data = np.vstack(self.data).reshape(-1, 3, 32, 32)
        self.targets = np.asarray(self.targets)
    def __len__(self):
        return len(self.targets)
    def __getitem__(self, idx):
        return self.data[idx], self.targets[idx]
loader = DataLoader(Cifar(["data_batch_1"]), batch_size=64, num_workers=4)
""",
        # the same with labels converted on the way in (``astype`` gives an array)
        """
import pickle
import numpy as np
from torch.utils.data import Dataset, DataLoader
class RoomLabels(Dataset):
    def __init__(self, path, samples_per_room):
        with open(path, "rb") as f:
            label_all = pickle.load(f)
        self.labels = []
        room_idxs = []
        for index in range(len(label_all)):
            label = label_all[index] - 1
            self.labels.append(label.astype(np.uint8))
            room_idxs.extend([index] * samples_per_room)
        self.room_idxs = np.array(room_idxs)
    def __len__(self):
        return len(self.room_idxs)
    def __getitem__(self, idx):
        room = self.room_idxs[idx]
        return self.labels[room][:4096]
loader = DataLoader(RoomLabels("rooms.pkl", 100), batch_size=16, num_workers=4)
""",
        # a handful of whole-split tensors (one per hop), each indexed per sample: not a list per sample
        """
import numpy as np
import torch
from torch.utils.data import DataLoader

if __name__ == "__main__":
    class HopFeatures(torch.utils.data.Dataset):
        def __init__(self, paths):
            self.xs = []
            for path in paths:
                self.xs.append(torch.from_numpy(np.load(path)))

        def __len__(self):
            return self.xs[0].size(0)

        def __getitem__(self, idx):
            return [x[idx] for x in self.xs]

    loader = DataLoader(HopFeatures(["x_1.npy", "x_2.npy"]), batch_size=1024, num_workers=6)
""",
        # one entry per file, read through offsets: bounded by the file count, not the samples
        """
import bisect
from torch.utils.data import DataLoader, Dataset

class FolderDataset(Dataset):
    def __init__(self, paths):
        self.files = []
        for path in paths:
            self.files.append(FileDataset(path))
        self.offsets = [0]
        for f in self.files:
            self.offsets.append(self.offsets[-1] + len(f))

    def __len__(self):
        return self.offsets[-1]

    def __getitem__(self, item):
        index = bisect.bisect(self.offsets, item) - 1
        return self.files[index][item - self.offsets[index]]

def loader(paths):
    return DataLoader(FolderDataset(paths), num_workers=4)
""",
        # samples in a numpy array
        """
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

class TokenDataset(Dataset):
    def __init__(self, path):
        self.tokens = np.load(path, mmap_mode="r")
        self.offsets = np.load(path + ".idx")

    def __getitem__(self, i):
        start, end = self.offsets[i], self.offsets[i + 1]
        return torch.from_numpy(np.asarray(self.tokens[start:end], dtype=np.int64))

    def __len__(self):
        return len(self.offsets) - 1

loader = DataLoader(TokenDataset("train.bin"), batch_size=32, num_workers=8)
""",
        # a Python list, but no worker processes
        """
import json
import torch
from torch.utils.data import DataLoader, Dataset

class JsonDataset(Dataset):
    def __init__(self, path):
        with open(path) as f:
            self.records = json.load(f)

    def __getitem__(self, i):
        return torch.tensor(self.records[i]["ids"])

    def __len__(self):
        return len(self.records)

train_loader = DataLoader(JsonDataset("train.json"), batch_size=16, shuffle=True)
eval_loader = DataLoader(JsonDataset("dev.json"), batch_size=16, num_workers=0)
""",
        # small attributes: class names, transforms
        """
import os
import torch
from torch.utils.data import DataLoader, Dataset

class FolderDataset(Dataset):
    def __init__(self, root, transforms):
        self.classes = sorted(entry.name for entry in os.scandir(root) if entry.is_dir())
        self.class_to_idx = {name: i for i, name in enumerate(self.classes)}
        self.transforms = [t for t in transforms if t is not None]
        self.root = root

loader = DataLoader(FolderDataset("data", []), batch_size=32, num_workers=4)
""",
        # the workers read another dataset of the module
        """
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

class Captions(Dataset):
    def __init__(self, path):
        self.lines = open(path).readlines()

class Features(Dataset):
    def __init__(self, path):
        self.features = np.load(path)

captions = Captions("captions.txt")
features = Features("features.npy")
loader = DataLoader(features, batch_size=64, num_workers=4)
""",
    ]

    VALID += [
        # arrays passed into __init__; a loaded dict passed to a dataset read without workers
        """
import json
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

class ArrayDataset(Dataset):
    def __init__(self, features, labels):
        self.features = features
        self.labels = labels

    def __getitem__(self, i):
        return torch.from_numpy(self.features[i]), int(self.labels[i])

class LookupDataset(Dataset):
    def __init__(self, table):
        self.table = table

    def __getitem__(self, key):
        return self.table[key]

features = np.load("x.npy", mmap_mode="r")
labels = np.load("y.npy")
train = DataLoader(ArrayDataset(features, labels), batch_size=64, num_workers=8)
table = json.load(open("table.json"))
lookup = DataLoader(LookupDataset(table), batch_size=64)
""",
    ]

    INVALID = [
        # an annotated assignment is an assignment
        Invalid("""
from typing import List, Tuple
import torch
from torch.utils.data import DataLoader, Dataset
class SliceDataset(Dataset):
    def __init__(self, n_cases, depth):
        self.index: List[Tuple[int, int]] = [(case, z) for case in range(n_cases) for z in range(depth)]
    def __len__(self):
        return len(self.index)
    def __getitem__(self, i):
        case, z = self.index[i]
        return torch.zeros(4, 240, 240) + case + z
loader = DataLoader(SliceDataset(400, 155), batch_size=32, num_workers=8)
""", line=7),
        # a pandas DataFrame read per item with iloc
        Invalid("""
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset

class ImageCsvDataset(Dataset):
    def __init__(self, csv_path, transform):
        self.frame = pd.read_csv(csv_path)
        self.transform = transform

    def __getitem__(self, idx):
        row = self.frame.iloc[idx]
        return self.transform(load_image(row["path"])), int(row["label"])

    def __len__(self):
        return len(self.frame)

loader = DataLoader(ImageCsvDataset("train.csv", None), batch_size=32, num_workers=8)
""", line=8),
        # a big dict loaded by the caller and passed into __init__
        Invalid("""
import json
import torch
from torch.utils.data import DataLoader, Dataset

class CaptionDataset(Dataset):
    def __init__(self, captions, image_ids):
        self.captions = captions
        self.image_ids = image_ids

    def __getitem__(self, i):
        image_id = self.image_ids[i]
        return image_id, self.captions[image_id]

def main(args):
    captions = json.load(open(args.captions))
    ids = sorted(captions)
    dataset = CaptionDataset(captions, image_ids=ids)
    return DataLoader(dataset, batch_size=128, num_workers=args.workers)
""", line=8),
        Invalid("""
import json
import torch
from torch.utils.data import DataLoader, Dataset

class QADataset(Dataset):
    def __init__(self, path, tokenizer):
        with open(path) as f:
            self.examples = json.load(f)
        self.tokenizer = tokenizer

    def __getitem__(self, idx):
        example = self.examples[idx]
        return self.tokenizer(example["question"], example["context"], truncation=True)

    def __len__(self):
        return len(self.examples)

def main(args, tokenizer):
    dataset = QADataset(args.train_file, tokenizer)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers)
    return loader
""", line=9),
        # list comprehension over readlines, literal workers
        Invalid("""
import torch
from torch.utils.data import DataLoader, Dataset

class TextDataset(Dataset):
    def __init__(self, path, vocab):
        self.samples = [[vocab[w] for w in line.split()] for line in open(path)]

    def __getitem__(self, i):
        return torch.tensor(self.samples[i])

    def __len__(self):
        return len(self.samples)

loader = DataLoader(TextDataset("train.txt", {}), batch_size=64, num_workers=4)
""", line=7),
        # appending samples in a loop in __init__, dataset passed through a parameter
        Invalid("""
import csv
import torch
from torch.utils.data import DataLoader, Dataset

class CsvDataset(Dataset):
    def __init__(self, path):
        self.rows = []
        with open(path) as f:
            for row in csv.reader(f):
                self.rows.append((row[0], int(row[1])))

    def __getitem__(self, i):
        return self.rows[i]

def make_loader(dataset, workers):
    return DataLoader(dataset, batch_size=32, num_workers=workers, persistent_workers=True)
""", line=11),
    ]


class _Reads(cst.CSTVisitor):
    """Whether a method reads ``place`` at ``index`` (``place[index]``, ``place.iloc[index]``,
    ``place[index][...]``), or returns ``len(place)``."""

    def __init__(self, place: str, index: str | None, direct_only: bool = False) -> None:
        self.place = place
        self.from_index = {index} if index is not None else set()  # the index and names computed from it
        self.per_sample = False
        self.direct_only = direct_only  # not through a key another container maps the index to

    def visit_Assign(self, node: cst.Assign) -> None:
        # key = self.keys[index], i = index % n: still one sample's; not through a call
        # (file = bisect(self.offsets, index): many samples to one entry)
        if self._sample_key(node.value):
            for target in node.targets:
                # the names bound (``key, i = ...``); not the key of a slot written (``item[k] = ...``)
                bound = target.target
                names = [bound] if isinstance(bound, cst.Name) else [
                    element.value for element in getattr(bound, "elements", ()) if isinstance(element.value, cst.Name)]
                self.from_index |= {name.value for name in names} - {"self"}

    def _sample_key(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, (cst.Name, cst.Attribute)):
            return bool(names_in(value) & self.from_index)
        if isinstance(value, cst.BinaryOperation):
            return self._sample_key(value.left) or self._sample_key(value.right)
        if isinstance(value, cst.Subscript):
            return not self.direct_only and any(
                isinstance(element.slice, cst.Index) and self._sample_key(element.slice.value)
                for element in value.slice)
        return False

    def visit_Subscript(self, node: cst.Subscript) -> None:
        owner = node.value
        if isinstance(owner, cst.Attribute) and owner.attr.value in ("iloc", "loc", "at", "iat"):
            owner = owner.value
        if dotted_name(owner) == self.place and any(
                isinstance(element.slice, cst.Index) and self._sample_key(element.slice.value)
                for element in node.slice):
            self.per_sample = True

    def visit_Call(self, node: cst.Call) -> None:
        if dotted_name(node.func) == "len" and node.args and dotted_name(node.args[0].value) == self.place:
            self.per_sample = True


def _is_small(attribute: str) -> bool:
    """Attributes small by nature: class lists, transforms, configs, and lookup tables
    (``label_to_id``, ``word2idx``, ``vocab``), which map to samples rather than hold them."""
    name = attribute.lower().split(".", 1)[1]
    words = set(name.split("_"))
    return bool(_SMALL_WORDS & words or _LOOKUP_WORDS & words or "_to_" in name or re.search(r"[a-z]2[a-z]", name))
