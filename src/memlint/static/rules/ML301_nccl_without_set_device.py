"""ML301 nccl-without-set-device: an NCCL process group is started without telling each rank
which GPU is its own.

NCCL creates its communicator, and the CUDA context that goes with it, on the *current*
device, which is ``cuda:0`` in every process unless ``torch.cuda.set_device(local_rank)``
was called (or ``init_process_group(..., device_id=...)`` given). Every rank then opens a
context on GPU 0 (about 500 MiB each: with 8 ranks, GPU 0 loses 4 GiB), and collectives may hang.

Flagged: ``init_process_group`` with ``backend`` ``"nccl"`` (a literal, a conditional
expression that can give ``"nccl"``, or a value read from the environment: ``os.environ``,
``os.getenv``), with no ``device_id=`` and no ``torch.cuda.set_device(...)`` /
``with torch.cuda.device(...)`` / ``*.set_device(...)`` anywhere in the module — once, at the
group's start (not a group of one process, ``world_size=1``): a ``barrier()`` without ``device_ids`` is not reported on its own (it runs on the
device of earlier collectives, or guesses ``rank % device_count``). Calling ``set_device`` right after
``init_process_group`` is fine (NCCL creates its communicator lazily, at the first
collective), so the order is not checked. Pinning each process to one GPU through the
environment counts as setting the device: ``os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank)``
(any value but a literal list of several GPUs; also ``setdefault`` / ``update`` /
``os.putenv``) before the group starts — in another function, or earlier in the same one —
leaves each rank exactly one visible GPU, so ``cuda:0`` is its own. Not flagged: a backend held in a variable or a
parameter that is not read from the environment (frameworks pick it and set the device
elsewhere), ``gloo``, no backend at all, and a module that does no GPU work itself (no
collective, no DDP wrap, no ``.cuda()`` / ``.to(...)``): the code it hands over to may set the
device before the first collective; nor a module where nothing runs on the current device (itself,
or in the project code it calls: a summary effect)
(every tensor and module is moved to ``cuda:{rank}`` / ``.to(rank)``, no ``.cuda()``, no device
without an index — ``"cuda"``, ``torch.device("cuda")``; a device *type* such as
``autocast(device_type="cuda")`` is none —, no ``torch.cuda`` function of the current device, no object collective, no DataLoader with
``pin_memory=True``, whose pinning thread runs on the current device): NCCL makes its communicators at
the first collective, on the device of its tensors.
"""

from __future__ import annotations

import libcst as cst

from memlint.static.facts import ACCELERATE_STATES, DEVICE_CONTEXTS, INIT_PROCESS_GROUP, current_device_value, runs_on_current_device
from memlint.static.rule import Invalid, Rule
from memlint.static.summaries import SETS_DEVICE, USES_CURRENT_DEVICE

BARRIER = frozenset({"torch.distributed.barrier", "torch.distributed.distributed_c10d.barrier"})
SET_DEVICE_METHODS = frozenset({"set_device", "set_device_index"})
COLLECTIVES = frozenset({"barrier", "all_reduce", "all_gather", "all_gather_object", "all_gather_into_tensor",
                         "broadcast", "broadcast_object_list", "reduce", "reduce_scatter", "reduce_scatter_tensor",
                         "gather", "gather_object", "scatter", "all_to_all", "all_to_all_single", "send", "recv",
                         "monitored_barrier"})
_DTYPES = frozenset({"float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8", "int16",
                     "int32", "int64", "long", "short", "bool", "uint8", "complex64", "complex128", "float8_e4m3fn",
                     "float8_e5m2"})


class NcclWithoutSetDevice(Rule):
    code = "ML301"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._sets_device = False
        self._gpu_work = False  # collectives, DDP, .cuda()/.to(...) in this module
        self._inits: list[tuple[cst.Call, object]] = []  # each with the function it is in
        # Functions that pin the process to one GPU through CUDA_VISIBLE_DEVICES, with the
        # init_process_group calls seen in each before the pin (those come too late for it).
        self._pins: dict[int, list[cst.Call]] = {}
        self._barriers: list[cst.Call] = []  # GPU work of the module (not reported on their own)
        self._scheduled = False
        # Something runs on the *current* device: ``.cuda()``, a bare ``"cuda"``, torch.cuda's
        # functions of the current device. Without it, every tensor names its rank's GPU and NCCL
        # follows the tensors (its communicators are made at the first collective, on their device).
        self._current_device_use = False

    def visit_Assign(self, node: cst.Assign) -> None:
        if current_device_value(node.value):  # device = "cuda" (if torch.cuda.is_available() else ...)
            self._current_device_use = True
        for target in node.targets:
            if isinstance(target.target, cst.Subscript) and self._is_environ(target.target.value) \
                    and _subscript_key(target.target) == VISIBLE_DEVICES and _one_device(node.value):
                self._pin()

    def _pin(self) -> None:
        function = self.facts.function
        earlier = [init for init, where in self._inits if where is function]
        self._pins.setdefault(id(function), []).extend(earlier)
        self._schedule()

    def _is_environ(self, node: cst.BaseExpression) -> bool:
        return self.facts.qualified_name(node) == "os.environ"

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if runs_on_current_device(node, self.facts):
            self._current_device_use = True
        if self._pins_by_call(node):
            self._pin()
            return
        if isinstance(func, cst.Attribute) and func.attr.value in SET_DEVICE_METHODS:
            self._sets_device = True
            return
        qualified = self.facts.qualified_name(func)
        last = (qualified or "").rsplit(".", 1)[-1]
        if (isinstance(func, cst.Attribute) and func.attr.value == "to" and node.args
                and not self._is_dtype(node.args[0].value)
                or isinstance(func, cst.Attribute) and func.attr.value == "cuda"
                or last == "DistributedDataParallel"
                or (qualified or "").startswith("torch.distributed.") and last in COLLECTIVES):
            self._gpu_work = True
        if qualified in DEVICE_CONTEXTS or qualified in ACCELERATE_STATES:
            self._sets_device = True  # accelerate's state sets each process's device as it is built
            return
        if qualified in INIT_PROCESS_GROUP:
            if _keyword(node, "device_id") is not None:
                self._sets_device = True
                return
            world_size = _keyword(node, "world_size")
            if isinstance(world_size, cst.Integer) and world_size.evaluated_value == 1:
                return  # a group of one process (FSDP's CPU offload on one GPU): no other rank
            positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
            backend = positional[0] if positional else _keyword(node, "backend")
            if backend is not None and self._may_be_nccl(backend):
                self._inits.append((node, self.facts.function))
                self._schedule()
        elif qualified in BARRIER:
            if _keyword(node, "device_ids") is None and not any(arg.star for arg in node.args):
                self._barriers.append(node)
                self._schedule()

    def _is_dtype(self, node: cst.BaseExpression) -> bool:
        """``torch.float32``, ``th.half``: ``.to(dtype)`` converts, it moves nothing to a GPU."""
        qualified = self.facts.qualified_name(node) or ""
        return qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in _DTYPES

    def _schedule(self) -> None:
        if not self._scheduled:
            self._scheduled = True
            self.at_module_exit(self._decide)

    def _pins_by_call(self, node: cst.Call) -> bool:
        """``os.environ.setdefault("CUDA_VISIBLE_DEVICES", v)``, ``os.environ.update(...)``,
        ``os.putenv("CUDA_VISIBLE_DEVICES", v)`` with one device per process."""
        func = node.func
        qualified = self.facts.qualified_name(func) or ""
        if qualified == "os.putenv" or isinstance(func, cst.Attribute) and func.attr.value == "setdefault" \
                and self._is_environ(func.value):
            values = [arg.value for arg in node.args if arg.keyword is None]
            return len(values) == 2 and _string(values[0]) == VISIBLE_DEVICES and _one_device(values[1])
        if isinstance(func, cst.Attribute) and func.attr.value == "update" and self._is_environ(func.value):
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == VISIBLE_DEVICES:
                    return _one_device(arg.value)
                if isinstance(arg.value, cst.Dict):
                    for element in arg.value.elements:
                        if isinstance(element, cst.DictElement) and _string(element.key) == VISIBLE_DEVICES:
                            return _one_device(element.value)
        return False

    def _decide(self) -> None:
        if self._sets_device or not self._gpu_work:
            return  # no GPU work here: whoever runs it (a framework, a later module) sets the device
        if not self._current_device_use and self.facts.effect_through_project(USES_CURRENT_DEVICE) is not True:
            # every device named (cuda:{rank}, .to(rank)), here and in the project code it calls
            # (a metric module's DataLoader(pin_memory=True) counts): nothing lands on GPU 0
            return
        if self.facts.effect_through_project(SETS_DEVICE) is not False:
            return  # a helper of another module sets it (or may: it could not be read)
        if self._pins:  # CUDA_VISIBLE_DEVICES pins each rank, unless set after the group started
            too_late = {id(node) for late in self._pins.values() for node in late}
            self._inits = [(node, where) for node, where in self._inits if id(node) in too_late]
        # a module of the project that calls the function starting the group may set the device
        self._inits = [(node, where) for node, where in self._inits
                       if self.facts.effect_in_callers(where, SETS_DEVICE) is False]
        if not self._inits:
            return  # no NCCL group, or every rank pinned to its GPU before the group started
        for node, _ in self._inits:
            self.report(
                node,
                "NCCL process group started without torch.cuda.set_device(): every rank opens a context on GPU 0",
                help="call torch.cuda.set_device(int(os.environ['LOCAL_RANK'])) first, or pass "
                     "device_id=torch.device('cuda', local_rank)",
                needs_grad=False,
            )

    def _may_be_nccl(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        if isinstance(node, cst.SimpleString):
            value = node.evaluated_value
            return isinstance(value, str) and "nccl" in value.lower()
        if isinstance(node, cst.ConcatenatedString):
            return "nccl" in cst.Module(body=()).code_for_node(node).lower()
        if isinstance(node, cst.IfExp):
            return self._may_be_nccl(node.body, depth) or self._may_be_nccl(node.orelse, depth)
        if isinstance(node, cst.BooleanOperation):
            return self._may_be_nccl(node.left, depth) or self._may_be_nccl(node.right, depth)
        if isinstance(node, cst.Subscript) or isinstance(node, cst.Call):
            inner = node.value if isinstance(node, cst.Subscript) else node.func
            qualified = self.facts.qualified_name(inner) or ""
            return qualified.startswith(("os.environ", "os.getenv"))
        if isinstance(node, cst.Name) and depth < 3:
            binding = self.facts.lookup(node.value)
            if binding is not None and isinstance(binding.node, cst.BaseExpression) and binding.node is not node:
                if isinstance(binding.node, cst.Param):
                    return False
                return self._may_be_nccl(binding.node, depth + 1)
        return False

    VALID = [
        # a group of one process, started so FSDP can offload to the CPU: no other rank
        """
import torch
from torch.distributed.fsdp import FullyShardedDataParallel

def enable_cpu_offloading(model):
    torch.distributed.init_process_group(backend="nccl", init_method="tcp://localhost:9999", world_size=1, rank=0)
    return FullyShardedDataParallel(model.cuda())
""",
        # each rank's device built with its index: NCCL follows the tensors' devices
        """
import torch
import torch.distributed as dist

def worker(rank, world_size, model):
    dist.init_process_group(backend="nccl", init_method="file:///tmp/init", rank=rank, world_size=world_size)
    device = torch.device("cuda", rank)
    model = model.to(device)
    x = torch.empty([1, 8], device=device)
    dist.all_reduce(model(x).sum())
""",
        # every device named by rank; "cuda" here is a device type for autocast, not a device
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def train(model, loader, optimizer):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(model.to(local_rank), device_ids=[local_rank])
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.mse_loss(model(x.to(local_rank)), y.to(local_rank))
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        # every device named by rank: NCCL makes its communicators on the tensors' devices, and a
        # barrier without device_ids uses the devices of earlier collectives (or rank % GPUs)
        """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model):
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    model = DDP(model.to(local_rank), device_ids=[local_rank])
    dist.barrier()
    return model
""",
        """
import torch.distributed as dist

def setup(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    if rank == 0:
        download_dataset()
    dist.barrier()
""",
        # the usual torchrun setup
        """
import os
import torch
import torch.distributed as dist

def setup():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    dist.barrier()
    return local_rank
""",
        # set_device right after init_process_group (NCCL initialises lazily), in another function
        """
import os
import torch
import torch.distributed as dist

def init_distributed(args):
    dist.init_process_group("nccl", init_method=args.dist_url, world_size=args.world_size, rank=args.rank)
    setup_device(args)

def setup_device(args):
    args.gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.gpu)
""",
        # device_id= binds the process group to the rank's GPU
        """
import os
import torch
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
dist.barrier()
""",
        # gloo on CPU; a backend chosen by the caller (a framework sets the device elsewhere)
        """
import torch.distributed as dist

def init_cpu(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    dist.barrier()

def init_connection(backend, rank, world_size):
    dist.init_process_group(backend, rank=rank, world_size=world_size)
""",
        # starts the group and hands over to a library that sets the device before any collective
        """
import torch
from transformers import TrainingArguments

def init_torch_dist_then_launch_deepspeed(deepspeed_config):
    backend = "ccl" if torch_device == "xpu" else "nccl"
    torch.distributed.init_process_group(backend=backend)
    return TrainingArguments(output_dir="./", deepspeed=deepspeed_config)
""",
        # each rank pinned to its GPU through the environment before the group starts
        """
import os
import torch
import torch.distributed as dist

def setup(rank, world_size, gpus_per_node):
    os.environ["CUDA_VISIBLE_DEVICES"] = str(rank % gpus_per_node)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    model = Net().cuda()
    dist.barrier()
""",
        """
import os
import torch
import torch.distributed as dist

def pin():
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", os.environ["LOCAL_RANK"])

def main():
    dist.init_process_group(backend="nccl")
    model = torch.nn.Linear(2, 2).cuda()
""",
        # with torch.cuda.device(...) around the work, barrier with device_ids
        """
import torch
import torch.distributed as dist

def worker(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    with torch.cuda.device(rank):
        run(rank)
    dist.barrier(device_ids=[rank])
""",
    ]

    INVALID = [
        # pinned after the group started in the same function: too late for NCCL's context
        Invalid("""
import os
import torch
import torch.distributed as dist

def setup(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)
    torch.nn.Linear(2, 2).cuda()
""", line=7),
        # a bare "cuda" device: the current device, GPU 0 in every rank
        Invalid("""
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model):
    dist.init_process_group(backend="nccl")
    device = torch.device("cuda")
    model = DDP(model.to(device))
    dist.barrier()
    return model
""", line=8),
        # every device named, but the loader pins memory from a thread on the current device
        Invalid("""
import os
import torch
from torch.distributed import init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

def ddp_setup():
    init_process_group(backend="nccl")

def build(model, dataset):
    local_rank = int(os.environ["LOCAL_RANK"])
    loader = DataLoader(dataset, batch_size=32, pin_memory=True)
    return DDP(model.to(local_rank), device_ids=[local_rank]), loader
""", line=9),
        # object collectives run on torch.cuda.current_device()
        Invalid("""
import os
import torch
from torch.distributed import init_process_group, all_gather_object, get_world_size

def ddp_setup():
    init_process_group(backend=os.environ.get("DIST_BACKEND", "nccl"))

def gather_results(results):
    gathered = [None] * get_world_size()
    all_gather_object(gathered, results)
    return gathered
""", line=7),
    ]


VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"


def _string(node: cst.BaseExpression) -> str | None:
    value = node.evaluated_value if isinstance(node, cst.SimpleString) else None
    return value if isinstance(value, str) else None


def _subscript_key(node: cst.Subscript) -> str | None:
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return _string(node.slice[0].slice.value)
    return None


def _one_device(value: cst.BaseExpression) -> bool:
    """Does a CUDA_VISIBLE_DEVICES value leave one GPU per process? Anything computed
    (``str(rank % gpus_per_node)``, ``os.environ["LOCAL_RANK"]``, an f-string) does; a literal
    list of several (``"0,1,2,3"``) does not."""
    literal = _string(value)
    return literal is None or "," not in literal


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None
