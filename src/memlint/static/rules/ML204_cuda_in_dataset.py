"""ML204 cuda-in-dataset: a tensor is moved to CUDA inside ``Dataset.__getitem__`` /
``__iter__`` or a ``collate_fn``.

That code runs in the DataLoader's worker processes. Each worker that touches CUDA creates
its own CUDA context (hundreds of MiB of GPU memory per worker, all on GPU 0 unless told
otherwise), and with the default ``fork`` start method it fails outright ("Cannot
re-initialize CUDA in forked subprocess"). Batches belong on the GPU in the training loop:
``pin_memory=True`` in the DataLoader and ``batch.to(device, non_blocking=True)`` there.

Flagged: ``.cuda()``, ``.to("cuda"...)``, ``.to(torch.device("cuda"...))``,
``device="cuda"...`` keywords, inside ``__getitem__``, ``__getitems__``, ``__iter__`` or
``__next__`` of a Dataset class (a base named ``*Dataset``, also through a base class of
the same module), in a function whose name contains ``collate`` (or ``__call__`` of a
``*Collat*`` class), or in a function passed as ``collate_fn=`` in the same module.
Not flagged: a Dataset class whose every DataLoader built in the module runs in the main
process (no ``num_workers``, or 0): no worker starts a context; ``.to(device)`` with a variable (it may be the CPU), ``.to(dtype)``,
``.pin_memory()``, CUDA code in ``__init__`` or elsewhere in the class.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import MAIN_PROCESS_LOADERS, ClassInfo, FunctionScope, data_loader_call, dotted_name
from memlint.static.outline import only_called_by_name
from memlint.static.rule import Invalid, Rule

_WORKER_METHODS = frozenset({"__getitem__", "__getitems__", "__iter__", "__next__"})


@dataclass
class _Move:
    node: cst.Call
    what: str
    function: FunctionScope
    device_name: str | None = None  # a global device name, resolved at the end of the module


class CudaInDataset(Rule):
    code = "ML204"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._collate_names: set[str] = set()
        self._main_process_collates: set[str] = set()  # collate functions (or factories) of other loaders
        self._worker_inits: list[tuple[cst.BaseExpression, FunctionScope]] = []  # worker_init_fn= values
        self._pending: list[_Move] = []
        self._scheduled = False
        # dataset class -> for each DataLoader of it built in this module: does it start workers?
        self._loaders: dict[str, list[bool]] = {}
        self._reports: list[tuple[cst.Call, str, str, FunctionScope]] = []
        self._at_exit = False  # the module has been walked: every DataLoader is known

    def _note_data_loader(self, node: cst.Call) -> None:
        """``DataLoader(ds, ...)`` of a dataset class of this module: does it start workers
        (None: unknown, ``**kwargs`` may say)?"""
        loader = data_loader_call(node, self.facts)
        if loader is None:
            return
        dataset, workers = loader
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "collate_fn":
                value = arg.value.args[0].value if isinstance(arg.value, cst.Call) and arg.value.args else arg.value
                collate = dotted_name(value)
                if collate:  # collate_fn=collate_fn: the loader's workers (if any) run it
                    self._loaders.setdefault(f"{collate.rsplit('.', 1)[-1]}()", []).append(workers is not False)
        if isinstance(dataset, cst.Name):
            binding = self.facts.lookup(dataset.value)
            dataset = binding.node if binding is not None else dataset
        name = dotted_name(dataset.func) if isinstance(dataset, cst.Call) else None
        if name is not None:
            self._loaders.setdefault(name.rsplit(".", 1)[-1], []).append(workers is not False)

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide_pending)

    def visit_Call(self, node: cst.Call) -> None:
        self._note_collate_fn(node)
        self._note_data_loader(node)
        what = self._cuda_move(node)
        device_name = None
        if what is None:
            device_name = self._global_device_name(node)
            if device_name is None:
                return
            what = f".to({device_name})"  # decided at the end: is it a module-level CUDA device?
        function = self.facts.function
        place = self._worker_place(function)
        if place is not None and device_name is None:
            self._report(node, what, place, function)
            return
        # Maybe a function passed as collate_fn=, or a device defined further down.
        self._pending.append(_Move(node, what, function, device_name))
        self._schedule()

    def _decide_pending(self) -> None:
        self._at_exit = True
        module_bindings = self.facts.module_scope.bindings
        for move in self._pending:
            if move.device_name is not None:
                binding = module_bindings.get(move.device_name)
                if binding is None or not isinstance(binding.node, cst.BaseExpression) or not self._is_cuda_device(
                        binding.node, 1):
                    continue
            place = self._worker_place(move.function)
            if place is not None:
                self._report(move.node, move.what, place, move.function)
                continue
            function = move.function
            while isinstance(function, FunctionScope):
                if function.name in self._collate_names:
                    self._report(move.node, move.what, f"collate_fn {function.name}()", move.function)
                    break
                function = _enclosing_function(function)
        for value, where in self._worker_inits:
            self._decide_worker_init(value, where)

    def _decide_worker_init(self, value: cst.BaseExpression, where: FunctionScope) -> None:
        """A worker_init_fn (a function of this module) that initialises CUDA, itself or through
        the objects it builds (an ``__init__`` calling ``torch.cuda.set_device``)."""
        facts = self.facts
        name = dotted_name(value)
        if name is None:
            return
        scopes = facts.callee_scopes(name, where) if "." not in name or name.startswith("self.") else []
        if not scopes:
            return
        cuda = sorted(callee for callee in facts.calls_made(scopes[0]) if _initialises_cuda(callee))
        if not cuda:
            return
        self.report(
            value,
            f"worker_init_fn '{name}' calls {_shown_call(cuda[0])}: a CUDA context in every worker",
            help="keep CUDA out of worker_init_fn and the objects it builds; use the GPU in the main process",
            needs_grad=False,
        )

    def _global_device_name(self, node: cst.Call) -> str | None:
        """``x.to(device)`` / ``device=device`` with a name bound neither in the function nor yet at
        module level: maybe a module-level ``device = torch.device("cuda")`` further down."""
        func = node.func
        device = None
        if isinstance(func, cst.Attribute) and func.attr.value == "to":
            device = node.args[0].value if node.args and node.args[0].keyword is None else _keyword(node, "device")
        if device is None:
            device = _keyword(node, "device")
        if not isinstance(device, cst.Name):
            return None
        function = self.facts.function
        if device.value in function.bindings or device.value in self.facts.module_scope.bindings:
            return None
        return device.value

    def _report(self, node: cst.Call, what: str, place: str, function: FunctionScope) -> None:
        """Decided at the end: not when every DataLoader this module builds of the class (or with
        the collate function) runs in the main process (no ``num_workers``, or 0): no worker, no
        second CUDA context; nor in a
        collate function handed to another library's DataLoader (petastorm's collates here)."""
        if self._at_exit:
            self._decide_report(node, what, place, function)
            return
        self._reports.append((node, what, place, function))
        if len(self._reports) == 1:
            self.at_module_exit(self._decide_reports)

    def _decide_reports(self) -> None:
        for node, what, place, function in self._reports:
            self._decide_report(node, what, place, function)

    def _decide_report(self, node: cst.Call, what: str, place: str, function: FunctionScope) -> None:
        if self._in_main_process_collate(function):
            return
        if place.endswith("()") and self._only_called_directly(place[:-2]):
            return  # batch = collate_batch(batch) in the training loop: the main process runs it
        loaders = self._loaders.get(place if place.endswith("()") else place.split(".", 1)[0])
        if not loaders or any(loaders):
            self._report_now(node, what, place)

    def _report_now(self, node: cst.Call, what: str, place: str) -> None:
        self.report(
            node,
            f"{what} in {place} creates a CUDA context in every DataLoader worker",
            help="return CPU tensors; pass pin_memory=True to the DataLoader and move the batch with "
                 ".to(device, non_blocking=True) in the training loop",
            needs_grad=False,
        )

    # ----- where the code runs ----------------------------------------------------------------
    def _worker_place(self, function: FunctionScope) -> str | None:
        current: FunctionScope | None = function
        while current is not None:
            info = current.class_info
            if current.name in _WORKER_METHODS and info is not None and self._is_dataset(info):
                return f"{info.name}.{current.name}"
            if "collate" in current.name.lower():
                return f"{current.name}()"
            if current.name == "__call__" and info is not None and "collat" in info.name.lower():
                return f"{info.name}.__call__"
            current = _enclosing_function(current)
        return None

    def _is_dataset(self, info: ClassInfo, depth: int = 0) -> bool:
        if info.is_dataset:
            return True
        if depth > 5:
            return False
        for base in info.base_names:
            parent = self.facts.classes.get(base)
            if parent is not None and parent is not info and self._is_dataset(parent, depth + 1):
                return True
        return False

    def _only_called_directly(self, name: str) -> bool:
        """Is the top-level function ``name`` (a collate function by its name) only ever called,
        here, and named by no other module of the project: never handed to a DataLoader?"""
        facts = self.facts
        definition = facts.module_scope.bindings.get(name)
        if definition is None or not isinstance(definition.node, cst.FunctionDef) or name in self._collate_names:
            return False
        if not any(not site.by_attribute for site in facts.call_sites.get(name, ())) \
                or not only_called_by_name(self._checker.source, name, own=True):
            return False
        project = facts.project
        if project is None:
            return False
        others = project.modules_mentioning(name)
        here = os.path.realpath(self._checker.path)
        # (a sibling script's own collate_batch() is another function)
        return others is not None and all(os.path.realpath(other.path) == here or project.defines_its_own(other, name)
                                          for other in others)

    def _in_main_process_collate(self, function: FunctionScope) -> bool:
        current: FunctionScope | None = function
        while isinstance(current, FunctionScope):
            if current.name in self._main_process_collates:
                return True
            current = _enclosing_function(current)
        return False

    def _note_collate_fn(self, node: cst.Call) -> None:
        if (self.facts.qualified_name(node.func) or "") in MAIN_PROCESS_LOADERS:
            # petastorm's DataLoader: its collate_fn (or the factory that makes it) runs in this process
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "collate_fn":
                    value = arg.value.func if isinstance(arg.value, cst.Call) else arg.value
                    name = dotted_name(value)
                    if name:
                        self._main_process_collates.add(name.rsplit(".", 1)[-1])
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "worker_init_fn":
                self._worker_inits.append((arg.value, self.facts.function))
                self._schedule()
            if arg.keyword is None or arg.keyword.value != "collate_fn":
                continue
            value = arg.value
            if isinstance(value, cst.Call) and value.args:  # functools.partial(collate, ...)
                value = value.args[0].value
            name = dotted_name(value)
            if name:
                self._collate_names.add(name.rsplit(".", 1)[-1])

    # ----- what moves to CUDA ----------------------------------------------------------------
    def _cuda_move(self, node: cst.Call) -> str | None:
        func = node.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            qualified = self.facts.qualified_name(func) or ""
            if method == "cuda" and not qualified.startswith("torch.cuda"):
                return ".cuda()"
            if method == "to":
                device = node.args[0].value if node.args and node.args[0].keyword is None else _keyword(node, "device")
                if device is not None and self._is_cuda_device(device):
                    return f".to({device.value})" if isinstance(device, cst.Name) else ".to('cuda')"
        device = _keyword(node, "device")
        if device is not None and self._is_cuda_device(device):
            return f"device={device.value}" if isinstance(device, cst.Name) else "device='cuda'"
        return None

    def _is_cuda_device(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        if isinstance(node, cst.SimpleString):
            value = node.evaluated_value
            return isinstance(value, str) and value.startswith("cuda")
        if isinstance(node, cst.FormattedString):
            first = node.parts[0] if node.parts else None
            return isinstance(first, cst.FormattedStringText) and first.value.startswith("cuda")
        if isinstance(node, cst.Call) and self.facts.qualified_name(node.func) == "torch.device" and node.args:
            return self._is_cuda_device(node.args[0].value, depth)
        if isinstance(node, cst.IfExp):  # "cuda" if torch.cuda.is_available() else "cpu": CUDA on a GPU machine
            return self._is_cuda_device(node.body, depth) or self._is_cuda_device(node.orelse, depth)
        if isinstance(node, cst.Name) and depth < 3:
            # device = torch.device("cuda") in the function, or at module level, read in a worker
            local = self.facts.function.bindings.get(node.value)
            binding = local if local is not None else self.facts.module_scope.bindings.get(node.value)
            if binding is not None and isinstance(binding.node, cst.BaseExpression) and not (
                    binding.loop is not None and binding.node is getattr(binding.loop.node, "iter", None)):
                return self._is_cuda_device(binding.node, depth + 1)
        return False

    VALID = [
        # a collate function (from a factory) handed to another library's DataLoader, which
        # collates in the main process (petastorm)
        """
from petastorm.pytorch import DataLoader

def collate_and_preprocess(preprocessor, use_gpu):
    def collate_fn(batch_list):
        batch = preprocessor(batch_list)
        if use_gpu:
            batch = batch.cuda()
        return batch
    return collate_fn

def make_loader(reader, preprocessor, use_gpu):
    return DataLoader(reader, batch_size=64, collate_fn=collate_and_preprocess(preprocessor, use_gpu))
""",
        # every DataLoader of the class runs in the main process (no num_workers): no worker,
        # no second CUDA context
        """
import torch
from torch.utils.data import DataLoader, Dataset
class TextSamplerDataset(Dataset):
    def __init__(self, data, seq_len):
        self.data, self.seq_len = data, seq_len
    def __getitem__(self, index):
        start = torch.randint(0, self.data.size(0) - self.seq_len - 1, (1,))
        return self.data[start: start + self.seq_len + 1].long().cuda()
    def __len__(self):
        return self.data.size(0) // self.seq_len
train_loader = DataLoader(TextSamplerDataset(data_train, 1024), batch_size=4, drop_last=True)
""",
        # CPU tensors from the dataset, moved in the training loop
        """
import torch
from torch.utils.data import DataLoader, Dataset

class ImageDataset(Dataset):
    def __init__(self, paths, labels, transform):
        self.paths = paths
        self.labels = labels
        self.transform = transform

    def __getitem__(self, index):
        image = self.transform(load_image(self.paths[index]))
        return image, torch.tensor(self.labels[index], dtype=torch.long)

    def __len__(self):
        return len(self.paths)

def train(model, dataset, optimizer, device):
    loader = DataLoader(dataset, batch_size=64, num_workers=8, pin_memory=True)
    for images, labels in loader:
        images = images.to(device, non_blocking=True)
        labels = labels.cuda(non_blocking=True)
        optimizer.zero_grad()
        model(images).sum().backward()
        optimizer.step()
""",
        # .to(dtype), .to(device) with a variable, pin_memory, CUDA in __init__ (main process)
        """
import torch
from torch.utils.data import Dataset

class FeatureDataset(Dataset):
    def __init__(self, features, device="cpu"):
        self.device = device
        self.mean = torch.zeros(16, device="cuda") if torch.cuda.is_available() else None
        self.features = features

    def __getitem__(self, i):
        x = torch.from_numpy(self.features[i]).to(torch.float32)
        return x.to(self.device).pin_memory()
""",
        # a collate_fn that pads on the CPU
        """
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

def pad_collate(batch):
    tokens = pad_sequence([item["ids"] for item in batch], batch_first=True)
    return {"ids": tokens, "labels": torch.tensor([item["label"] for item in batch])}

def make_loader(dataset):
    return DataLoader(dataset, batch_size=32, collate_fn=pad_collate, num_workers=4)
""",
        # a model (not a dataset) moving tensors in a method named __call__
        """
import torch
class Predictor:
    def __call__(self, x):
        return self.model(x.cuda())
""",
    ]

    VALID += [
        # a module-level CPU device; a worker_init_fn that only seeds
        """
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

device = torch.device("cpu")

class Windows(Dataset):
    def __getitem__(self, i):
        return torch.arange(i, i + 8).to(device)

def seed_worker(worker_id):
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)

loader = DataLoader(Windows(), batch_size=4, num_workers=2, worker_init_fn=seed_worker)
""",
    ]

    INVALID = [
        # a module-level CUDA device used in __getitem__ (defined below the class)
        Invalid("""
import torch
from torch.utils.data import Dataset

class PairDataset(Dataset):
    def __init__(self, pairs):
        self.pairs = pairs

    def __getitem__(self, i):
        a, b = self.pairs[i]
        return torch.tensor(a).to(device), torch.tensor(b).to(device)

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
""", line=11),
        # a worker_init_fn building an object whose __init__ picks a GPU
        Invalid("""
import torch
from torch.utils.data import DataLoader

class Renderer:
    def __init__(self, gpu):
        torch.cuda.set_device(gpu)
        self.buffer = torch.zeros(1024, 1024).cuda()

def init_worker(worker_id):
    global renderer
    renderer = Renderer(worker_id % torch.cuda.device_count())

def make_loader(dataset):
    return DataLoader(dataset, batch_size=8, num_workers=4, worker_init_fn=init_worker)
""", line=15),
        Invalid("""
import torch
from torch.utils.data import DataLoader, Dataset

class TokenDataset(Dataset):
    def __init__(self, encodings, labels):
        self.encodings = encodings
        self.labels = labels

    def __getitem__(self, idx):
        item = {key: torch.tensor(val[idx]).cuda() for key, val in self.encodings.items()}
        item["labels"] = torch.tensor(self.labels[idx])
        return item

    def __len__(self):
        return len(self.labels)
""", line=11),
        # .to("cuda") in an IterableDataset's __iter__
        Invalid("""
import torch
from torch.utils.data import IterableDataset

class StreamDataset(IterableDataset):
    def __init__(self, files):
        self.files = files

    def __iter__(self):
        for path in self.files:
            for row in read_rows(path):
                yield torch.as_tensor(row).to("cuda:0")
""", line=12),
        # device="cuda" in a collate function passed as collate_fn
        Invalid("""
import torch
from torch.utils.data import DataLoader

def batchify(samples):
    lengths = torch.tensor([len(s) for s in samples], device="cuda")
    return samples, lengths

loader = DataLoader(dataset, batch_size=16, collate_fn=batchify, num_workers=2)
""", line=6),
        # a named collate function, torch.device("cuda")
        Invalid("""
import torch
def collate_fn(batch):
    xs = torch.stack([b[0] for b in batch])
    return xs.to(torch.device("cuda")), torch.stack([b[1] for b in batch])
""", line=5),
        # a subclass of a Dataset class of the same module
        Invalid("""
import torch
from torch.utils.data import Dataset

class BaseDataset(Dataset):
    def __len__(self):
        return 100

class AudioSet(BaseDataset):
    def __getitem__(self, i):
        return torch.randn(16000).cuda()
""", line=11),
    ]


# torch.cuda functions that only ask (they do not create a context), and the seeding functions,
# which PyTorch queues until CUDA is initialised (``torch.cuda.manual_seed_all`` in a worker's
# ``worker_init_fn`` creates no context there).
_CUDA_QUERIES = frozenset({"is_available", "device_count", "is_initialized", "get_device_name",
                           "get_device_capability", "get_arch_list", "manual_seed", "manual_seed_all",
                           "seed", "seed_all", "set_rng_state", "set_rng_state_all"})


def _initialises_cuda(callee: str) -> bool:
    """Does a call named ``callee`` (see FunctionScope.callees) create a CUDA context?"""
    last = callee.rsplit(".", 1)[-1]
    if callee.startswith("torch.cuda."):
        return last not in _CUDA_QUERIES
    return last == "cuda" and "." in callee


def _enclosing_function(function: FunctionScope) -> FunctionScope | None:
    scope = function.parent
    while scope is not None and not isinstance(scope, FunctionScope):
        scope = scope.parent
    if scope is None or scope.name == "<module>":
        return None
    return scope


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def _shown_call(callee: str) -> str:
    """A callee of ``facts.calls_made`` as the message shows it (``?.cuda``: a method of an
    object it cannot name)."""
    return f".{callee[2:]}()" if callee.startswith("?.") else f"{callee}()"
