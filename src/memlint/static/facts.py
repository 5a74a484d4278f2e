"""Scope facts the engine keeps while it walks a module, shared by every rule.

Rules ask questions here instead of walking the tree themselves:

- imports: what a dotted name means (``t.no_grad`` is ``torch.no_grad``), and whether the
  file uses PyTorch at all;
- scopes: the enclosing function and class, whether the function is a per-step method
  (``forward``, ``training_step``...), which names it backpropagates and returns;
- loops: the enclosing loops, and which names were bound earlier in the current iteration
  (a name that was not outlives the iteration);
- grad mode: one :class:`GradMode` per region, entered from decorators (``@torch.no_grad()``,
  ``@torch.inference_mode()``), Lightning's evaluation hooks, ``with`` items,
  ``set_grad_enabled`` statements, and (resolved at the end of the module) callers:
  functions only called from no-grad regions;
- graph-carrying values: whether an expression holds an autograd graph (:class:`GraphValue`),
  one call, one container or one key away: what a container built in view holds per key or
  position (``log["sample_size"]`` is not ``log["loss"]``), what was put into a list or dict
  (``losses.append(out[k])``), what a function or method of this module returns to its caller
  (:meth:`Facts.resolve`, with the caller's arguments for its parameters, wherever it is
  defined), whether a name holds a callable or a module rather than a tensor; and, for each
  function of this module, who calls it from which loops with what (:meth:`Facts.runs_per_step`,
  :meth:`Facts.carries_at_calls`);
- module modes: where ``m.eval()`` / ``m.train()`` / ``m.requires_grad_(False)`` were called.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Iterator, Sequence

import libcst as cst

from memlint.static.frameworks import PASS_THROUGH_METHODS, PLAIN, ClassKinds, external_kinds
from memlint.static.tensor_api import PARAMETERLESS_LAYERS, TENSOR_API
from memlint.static.triggers import TORCH_PACKAGES

LIGHTNING_PACKAGES = frozenset({"lightning", "pytorch_lightning"})

NO_GRAD_CONTEXTS = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                              "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                              "torch.autograd.grad_mode.set_grad_enabled"})
ENABLE_GRAD = frozenset({"torch.enable_grad", "torch.autograd.enable_grad"})

# Methods Lightning runs under no_grad itself.
LIGHTNING_NO_GRAD_METHODS = frozenset({"validation_step", "test_step", "predict_step"})
# Methods called once per training step or per forward pass: what they store on ``self``
# outlives the call.
PER_STEP_METHODS = frozenset({"forward", "training_step", "training_step_end", "train_step",
                              "validation_step", "test_step", "predict_step", "compute_loss",
                              "shared_step", "_shared_step", "step"})

# Methods whose result carries no autograd graph.
GRAPH_ENDING_METHODS = frozenset({
    "item", "tolist", "detach", "detach_", "numpy", "argmax", "argmin", "size", "dim", "numel",
    "eq", "ne", "lt", "le", "gt", "ge", "long", "int", "bool", "short", "byte", "char",
    "nonzero", "isnan", "isinf", "isfinite", "any", "all", "data_ptr", "element_size",
    "equal", "allclose", "sign", "round", "floor", "ceil", "trunc", "__len__", "count_nonzero",
    "keys", "get_device", "nelement", "stride", "storage_offset",
    "is_contiguous", "requires_grad_", "zero_", "register_hook", "norm_type",
    # integer or boolean results: no gradient flows through them
    "argsort", "argwhere", "multinomial", "bucketize", "isclose", "logical_and", "logical_or", "logical_not",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_not", "bitwise_xor", "count_nonzero", "unique",
    "unique_consecutive", "bincount", "histc", "is_nonzero", "new_zeros", "new_ones", "new_empty", "new_full",
    "new_tensor", "is_floating_point", "is_complex", "is_signed", "tolist", "data_ptr", "untyped_storage",
    # argparse: a namespace of command-line values
    "parse_args", "parse_known_args", "parse_intermixed_args",
})
# Tensor methods whose result keeps the receiver's graph (used to follow UNKNOWN values:
# ``loss.mean()`` is as graph-carrying as ``loss``; ``trainer.compute(b)`` tells nothing).
TENSOR_METHODS = frozenset({
    "mean", "sum", "prod", "view", "view_as", "reshape", "squeeze", "unsqueeze", "float", "double",
    "half", "bfloat16", "to", "cuda", "cpu", "clone", "contiguous", "abs", "pow", "sqrt", "exp", "log",
    "softmax", "log_softmax", "sigmoid", "tanh", "relu", "mul", "add", "sub", "div", "matmul", "mm",
    "bmm", "t", "transpose", "permute", "flatten", "norm", "max", "min", "expand", "expand_as",
    "repeat", "gather", "index_select", "masked_fill", "clamp", "split", "chunk", "narrow", "neg",
    "square", "std", "var", "logsumexp", "cumsum", "type_as", "get", "__getitem__", "squeeze_",
    "unsqueeze_", "mul_", "add_", "div_", "sub_", "masked_select", "diag", "trace", "roll", "flip",
})
# Tensor methods whose arguments are sizes, dims or permutations: no graph flows from them.
_SHAPE_ARGUMENT_METHODS = frozenset({"view", "reshape", "expand", "repeat", "permute", "transpose", "flatten",
                                     "unflatten", "unsqueeze", "squeeze", "narrow", "movedim", "tile"})
# Attributes whose value carries no autograd graph.
GRAPH_ENDING_ATTRIBUTES = frozenset({"data", "grad", "shape", "dtype", "device", "requires_grad",
                                     "ndim", "is_cuda", "grad_fn", "is_leaf", "layout"})
# Builtins and functions returning plain Python values or fresh leaf tensors.
GRAPH_ENDING_FUNCTIONS = frozenset({
    "float", "int", "bool", "str", "len", "round", "repr", "print", "isinstance", "type", "id",
    "range", "enumerate", "zip", "abs_py",
    "torch.argmax", "torch.argmin", "torch.tensor", "torch.zeros", "torch.ones", "torch.empty",
    "torch.full", "torch.arange", "torch.linspace", "torch.randn", "torch.rand", "torch.randint",
    "torch.randperm", "torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.rand_like",
    "torch.randn_like", "torch.full_like", "torch.eq", "torch.isnan", "torch.isinf", "torch.isfinite",
    "torch.equal", "torch.allclose", "torch.numel", "torch.is_tensor", "torch.no_grad",
    "torch.from_numpy", "torch.load", "torch.save", "torch.manual_seed", "torch.device",
    # Variable(x) (x with a graph or not) is a new leaf sharing x's storage: grad_fn None
    "torch.autograd.Variable", "torch.autograd.variable.Variable",
    "copy.deepcopy", "torch.Generator", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor",
    "torch.DoubleTensor", "torch.HalfTensor", "torch.BoolTensor", "torch.IntTensor", "torch.ByteTensor",
    "torch.argsort", "torch.argwhere", "torch.nonzero", "torch.multinomial", "torch.bucketize",
    "torch.searchsorted", "torch.isclose", "torch.logical_and", "torch.logical_or", "torch.logical_not",
    "torch.logical_xor", "torch.unique", "torch.unique_consecutive", "torch.bincount", "torch.count_nonzero",
    "torch.ne", "torch.lt", "torch.le", "torch.gt", "torch.ge", "torch.randint_like", "torch.bernoulli",
    "torch.poisson", "torch.eye", "torch.tril_indices", "torch.triu_indices", "torch.histc",
})
# torch.nn.functional members that compute a loss: their result carries a graph.
FUNCTIONAL_LOSS_WORDS = ("loss", "cross_entropy", "nll", "mse", "l1", "kl_div", "binary_cross_entropy",
                         "cosine_embedding", "hinge", "margin", "ctc", "poisson", "huber")

# Variable names that, by near-universal convention, hold a script's configuration (argparse,
# tyro, OmegaConf): numbers and strings, never a tensor with a graph.
CONFIG_NAMES = frozenset({"args", "opt", "opts", "cfg", "config", "conf", "hparams", "hp", "flags", "FLAGS",
                          "options"})

# ... kept on the object (``self.config["model"]["num_spks"]``)
_SELF_CONFIG_NAMES = frozenset(f"self.{name}" for name in CONFIG_NAMES)

# Variable names that, by near-universal convention in PyTorch code, hold an nn.Module.
MODULE_NAME_WORDS = frozenset({
    "model", "net", "network", "module", "encoder", "decoder", "backbone", "teacher", "student",
    "generator", "discriminator", "critic", "actor", "classifier", "criterion", "loss_fn",
    "loss_func", "lossfn", "loss_function", "netg", "netd", "unet", "vae", "policy",
    "head", "transformer", "rnn", "lstm", "gru", "mlp", "ddp_model",
})
MODULE_NAME_SUFFIXES = ("_model", "_net", "_network", "_encoder", "_decoder", "_criterion", "_loss_fn",
                        "_module", "_rnn", "_lstm", "_gru", "_head", "_backbone", "_teacher", "_student")
# Factories (qualified-name prefixes or suffixes) that return an nn.Module.
MODULE_FACTORY_SUFFIXES = (".from_pretrained", "timm.create_model", "torch.compile",
                           "torch.nn.parallel.DistributedDataParallel", "torch.nn.DataParallel")
# Classes loaded with from_pretrained that are not modules: tokenizers, configs, processors.
_NOT_MODULE_CLASS = re.compile(r"Tokenizer|Config|Processor|FeatureExtractor|Extractor|Vocab|Scheduler|Pipeline")
MODULE_BASE_SUFFIXES = ("Module", "LightningModule", "PreTrainedModel", "Sequential", "ModuleList",
                        "ModuleDict", "Loss", "_Loss", "_WeightedLoss")

# Functions that read or write a whole checkpoint file.
TORCH_LOAD = frozenset({"torch.load", "torch.serialization.load"})
TORCH_SAVE = frozenset({"torch.save", "torch.serialization.save"})
# Building one sets the process's CUDA device (accelerate's PartialState calls torch.cuda.set_device).
ACCELERATE_STATES = frozenset({"accelerate.Accelerator", "accelerate.PartialState", "accelerate.state.PartialState",
                               "accelerate.state.AcceleratorState", "accelerate.accelerator.Accelerator"})
CHECKPOINT_FILE_FUNCTIONS = TORCH_LOAD | TORCH_SAVE | {"safetensors.torch.load_file", "safetensors.torch.save_file"}
BACKWARD_METHODS = frozenset({"backward", "manual_backward"})
INIT_PROCESS_GROUP = frozenset({"torch.distributed.init_process_group",
                                "torch.distributed.distributed_c10d.init_process_group"})
# torch.distributed collectives on tensors (not the ``*_object`` ones, which pickle through the CPU).
TENSOR_COLLECTIVES = frozenset(f"torch.distributed.{name}" for name in (
    "all_gather", "all_gather_into_tensor", "broadcast", "all_reduce", "reduce", "gather", "scatter",
    "all_to_all", "all_to_all_single", "reduce_scatter", "reduce_scatter_tensor"))
# torch.cuda functions that act on the current device when called without one.
CURRENT_DEVICE_FUNCTIONS = frozenset({
    "torch.cuda.synchronize", "torch.cuda.empty_cache", "torch.cuda.current_device", "torch.cuda.memory_allocated",
    "torch.cuda.max_memory_allocated", "torch.cuda.memory_reserved", "torch.cuda.max_memory_reserved",
    "torch.cuda.reset_peak_memory_stats", "torch.cuda.mem_get_info", "torch.cuda.memory_stats",
    "torch.cuda.current_stream", "torch.cuda.Stream", "torch.cuda.Event"})
# Collectives of picklable objects: they stage the bytes on torch.cuda.current_device().
OBJECT_COLLECTIVES = frozenset({"all_gather_object", "gather_object", "broadcast_object_list",
                                "scatter_object_list", "send_object_list", "recv_object_list"})
# Contexts that make one GPU current (as torch.cuda.set_device does, for their body).
DEVICE_CONTEXTS = frozenset({"torch.cuda.device", "torch.cuda.device_of", "torch.accelerator.device_index"})
VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"


def current_device_value(value: cst.BaseExpression | None) -> bool:
    """``"cuda"`` (in either branch of a conditional) or ``torch.device("cuda")``: the current GPU
    (not ``torch.device("cuda", rank)``)."""
    if isinstance(value, cst.SimpleString):
        return value.evaluated_value == "cuda"
    if isinstance(value, cst.IfExp):
        return current_device_value(value.body) or current_device_value(value.orelse)
    if isinstance(value, cst.Call) and dotted_name(value.func) in ("torch.device", "device") and value.args:
        return value.args[0].keyword is None and len(value.args) == 1 and current_device_value(value.args[0].value)
    return False


def runs_on_current_device(node: cst.Call, facts: "Facts") -> bool:
    """Does the call put something on the *current* CUDA device: ``.cuda()``, a torch.cuda
    function of the current device, an object collective, a ``pin_memory=True`` loader (its
    pinning thread works on the current device), a device without an index (``torch.device(
    "cuda")``, ``.to("cuda")``, ``device="cuda"``, ``map_location="cuda"``)? Not a device *type*
    (``autocast(device_type="cuda")``), which picks no GPU."""
    func = node.func
    qualified = facts.qualified_name(func)
    if not node.args and (type(func) is _ATTRIBUTE and func.attr.value == "cuda" or qualified in CURRENT_DEVICE_FUNCTIONS):
        return True
    if (qualified or "").rsplit(".", 1)[-1] in OBJECT_COLLECTIVES:
        return True
    if qualified == "torch.device":
        return len(node.args) == 1 and node.args[0].keyword is None and current_device_value(node.args[0].value)
    for arg in node.args:
        if arg.keyword is None:
            if type(func) is _ATTRIBUTE and func.attr.value == "to" and current_device_value(arg.value):
                return True
            continue
        keyword = arg.keyword.value
        if keyword == "pin_memory" and type(arg.value) is _NAME and arg.value.value == "True":
            return True
        if keyword in ("device", "map_location") and current_device_value(arg.value):
            return True
    return False


def is_visible_devices_slot(target: cst.Subscript, facts: "Facts") -> bool:
    """``os.environ["CUDA_VISIBLE_DEVICES"]`` (assigned: the process sees the GPUs it names)."""
    return facts.qualified_name(target.value) == "os.environ" and subscript_key(target) == VISIBLE_DEVICES


# The DataLoader's num_workers is its 6th positional parameter.
_NUM_WORKERS_POSITION = 5


# DataLoaders of other libraries that are not torch's and start no worker processes: their
# collate_fn runs in the main process (petastorm reads with its own reader pool).
MAIN_PROCESS_LOADERS = frozenset({"petastorm.pytorch.DataLoader", "petastorm.pytorch.BatchedDataLoader",
                                  "petastorm.pytorch.InMemBatchedDataLoader"})


def data_loader_call(call: cst.Call, facts: "Facts") -> "tuple[cst.BaseExpression | None, bool | None] | None":
    """``DataLoader(dataset, ..., num_workers=n)``: (the dataset expression, whether it starts
    worker processes: True for a literal above 0 or any expression, a configurable count being
    there to be raised; False for none given, 0, ``None``, ``False``; None when ``*args`` /
    ``**kwargs`` may pass it). None for any other call, also a loader of another library that
    collates in the main process (see MAIN_PROCESS_LOADERS)."""
    qualified = facts.qualified_name(call.func)
    if qualified is None or qualified.rsplit(".", 1)[-1] != "DataLoader":
        return None
    if qualified in MAIN_PROCESS_LOADERS:
        return None  # not torch's: it starts no worker processes
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    workers = next((arg.value for arg in call.args if arg.keyword is not None
                    and arg.keyword.value == "num_workers"), None)
    if workers is None and len(positional) > _NUM_WORKERS_POSITION:
        workers = positional[_NUM_WORKERS_POSITION]
    dataset = positional[0] if positional else next(
        (arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "dataset"), None)
    if workers is None:
        return dataset, None if any(arg.star for arg in call.args) else False
    if isinstance(workers, cst.Integer):
        return dataset, int(workers.evaluated_value) > 0
    return dataset, not (isinstance(workers, cst.Name) and workers.value in ("None", "False"))


def one_visible_device(value: cst.BaseExpression) -> bool:
    """Is a CUDA_VISIBLE_DEVICES value one device per process: computed (``str(rank % 8)``, an
    f-string, ``os.environ["LOCAL_RANK"]``), not a literal (``"0,1,2,3"``, or ``"0"`` for all)?"""
    return not isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.Integer))


def names_one_device(value: cst.BaseExpression, scope: "FunctionScope | None", depth: int = 0) -> bool:
    """Is a CUDA_VISIBLE_DEVICES value one device written out: ``"0"``, ``1``, or a join of a list
    of one (``",".join(map(str, gpus))``, ``",".join(str(g) for g in gpus)`` with ``gpus = [1]``
    bound once in ``scope``)?"""
    if isinstance(value, cst.Integer):
        return True
    if isinstance(value, cst.SimpleString):
        text = value.evaluated_value
        return isinstance(text, str) and text.strip() != "" and "," not in text
    if depth < 3 and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value == "join" and len(value.args) == 1:
        joined = value.args[0].value
        if isinstance(joined, cst.Call) and dotted_name(joined.func) == "map" and len(joined.args) == 2:
            joined = joined.args[1].value
        elif isinstance(joined, cst.GeneratorExp) and joined.for_in.inner_for_in is None:
            joined = joined.for_in.iter
        return literal_length(joined, scope, depth + 1) == 1
    if depth < 3 and isinstance(value, cst.Call) and dotted_name(value.func) == "str" and len(value.args) == 1:
        return names_one_device(value.args[0].value, scope, depth + 1)
    return False


def literal_length(value: cst.BaseExpression, scope: "FunctionScope | None", depth: int = 0) -> int | None:
    """How many elements a list written out has: ``[0]``, ``(0, 1)``, ``[i for i in range(len(gpus))]``,
    ``list(range(1))``, or a name ``scope`` binds once to one of those; None when not known."""
    if depth > 4:
        return None
    if isinstance(value, (cst.List, cst.Tuple)):
        if any(isinstance(element, cst.StarredElement) for element in value.elements):
            return None
        return len(value.elements)
    if isinstance(value, cst.ListComp) and value.for_in.inner_for_in is None and not value.for_in.ifs:
        return literal_length(value.for_in.iter, scope, depth + 1)
    if isinstance(value, cst.Call) and len(value.args) == 1 and value.args[0].keyword is None:
        called = dotted_name(value.func)
        if called in ("list", "tuple"):
            return literal_length(value.args[0].value, scope, depth + 1)
        if called == "range":
            return literal_count(value.args[0].value, scope, depth + 1)
    if isinstance(value, cst.Name) and scope is not None:
        bound = scope.stored_values.get(value.value, ())
        if len(bound) == 1:
            return literal_length(bound[0], scope, depth + 1)
    return None


def literal_count(value: cst.BaseExpression, scope: "FunctionScope | None", depth: int = 0) -> int | None:
    """A count written out: ``1``, ``len(gpus)`` for a list of known length."""
    if isinstance(value, cst.Integer) and value.value.isdigit():
        return int(value.value)
    if isinstance(value, cst.Call) and dotted_name(value.func) == "len" and len(value.args) == 1:
        return literal_length(value.args[0].value, scope, depth + 1)
    return None


def pins_visible_devices(call: cst.Call, facts: "Facts") -> bool:
    """``os.environ.setdefault("CUDA_VISIBLE_DEVICES", v)``, ``os.environ.update(CUDA_VISIBLE_DEVICES=v)``,
    ``os.putenv("CUDA_VISIBLE_DEVICES", v)``."""
    func = call.func
    if type(func) is not _ATTRIBUTE or func.attr.value not in ("setdefault", "update", "putenv"):
        return False
    qualified = facts.qualified_name(func) or ""
    if qualified not in ("os.putenv", "os.environ.setdefault", "os.environ.update"):
        return False
    first = call.args[0] if call.args else None
    if first is None:
        return False
    if first.keyword is not None:
        return first.keyword.value == VISIBLE_DEVICES
    return type(first.value) is cst.SimpleString and first.value.evaluated_value == VISIBLE_DEVICES
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.grad", "torch.autograd.backward"})


def stops_memory_history(call: cst.Call, qualified: str) -> bool:
    """``torch.cuda.memory._record_memory_history(enabled=None)`` (or ``(None)``, legacy ``(False)``):
    CUDA memory-history recording stops."""
    if not (qualified.startswith("torch.") and qualified.endswith("._record_memory_history")):
        return False
    enabled = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "enabled"),
                   None)
    if enabled is None and call.args and call.args[0].keyword is None:
        enabled = call.args[0].value
    return isinstance(enabled, cst.Name) and enabled.value in ("None", "False")


# Words in a loop's iterable that say it walks over data or steps, not over parts of a value.

_DATA_TOKENS = frozenset({
    "loader", "loaders", "dataloader", "dataloaders", "dl", "dataset", "datasets", "data", "batches",
    "epoch", "epochs", "step", "steps", "iter", "iters", "iteration", "iterations", "tqdm", "train",
    "training", "val", "valid", "validation", "test", "eval", "evaluation", "stream", "samples",
    "episode", "episodes", "trainloader", "valloader", "testloader", "minibatches",
})


def _tokens(name: str) -> list[str]:
    """``self.train_dataloader`` -> self, train, dataloader; ``trainLoader`` -> train, loader."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return [t for t in re.split(r"[^A-Za-z]+", spaced.lower()) if t]


def iterates_data(iterable: cst.BaseExpression | None) -> bool:
    """Does a loop walk over data or steps (a loader, ``range(num_epochs)``), as opposed to
    the parts of one value (layers, heads, loss terms)? Matches whole words of the names."""
    if iterable is None:  # a while loop: runs until a condition, like a step loop
        return True
    return any(token in _DATA_TOKENS for name in names_in(iterable) for token in _tokens(name))


# Words of the names in a loop header that say it walks batches or steps: a word of a name
# (see _tokens) starting with one (``dataloader``, ``batches``, ``iteration``, ``samples``), or a
# compound ending with one after a word of data (``trainloader``, ``minibatch``, ``valdata``);
# not ``metadata`` nor ``substeps``.
_STEP_WORDS = ("loader", "batch", "data", "step", "iter", "sample", "tqdm", "stream", "episode")
_COMPOUND_HEADS = ("train", "val", "valid", "test", "eval", "mini", "micro", "my", "in", "out")


def _step_word(token: str) -> bool:
    for word in _STEP_WORDS:
        if token.startswith(word):
            return True
        head, found, _ = token.partition(word)
        if found and head in _COMPOUND_HEADS:
            return True
    return False


# Methods whose result is the parts of one value (a loop over them is not over steps).
_PARTS_METHODS = frozenset({"split", "chunk", "unbind", "tensor_split", "items", "keys", "values", "parameters",
                            "named_parameters", "modules", "named_modules", "children", "named_children"})


def walks_steps(header: Iterable[cst.BaseExpression]) -> bool:
    """Does a loop header (a for loop's iterable and target, a while loop's test) name
    batches or steps, and not epochs? ``for x, y in train_loader``, ``while step < max_steps``;
    not ``for chunk in batch.split(n)`` (the parts of one batch)."""
    header = list(header)
    if header and is_parts_of_a_value(header[0]):
        return False
    names = [name.lower() for part in header for name in names_in(part)]
    if any("epoch" in name for name in names):
        return False
    return any(_step_word(token) for part in header for name in names_in(part) for token in _tokens(name))


def is_parts_of_a_value(iterable: cst.BaseExpression) -> bool:
    """``batch.split(n)``, ``zip(x.chunk(k), y.chunk(k))``, ``enumerate(outputs.items())``;
    ``zip(batch["sid"], batch["cell"], batch["pos"] + offset)``: the fields of one value, walked
    row by row together."""
    if isinstance(iterable, cst.Call):
        func = iterable.func
        if isinstance(func, cst.Attribute):
            return func.attr.value in _PARTS_METHODS
        if isinstance(func, cst.Name) and func.value in ("zip", "enumerate", "reversed") and iterable.args:
            positional = [arg.value for arg in iterable.args if arg.keyword is None]
            if all(is_parts_of_a_value(value) for value in positional):
                return True
            roots = {_field_root(value) for value in positional}
            return func.value == "zip" and len(positional) > 1 and len(roots) == 1 and None not in roots
    return False


# An effect of a function's summary (see memlint.static.summaries), followed by a position after
# self/cls: the function sets ``requires_grad`` False on the parameters of that argument
# (``def deactivate_requires_grad(model): for p in model.parameters(): p.requires_grad = False``).
# Not followed through what the function calls (positions differ from call to call).
FREEZES_ARGUMENT = "freezes_argument:"
# ... a method that freezes every parameter of its own module (``def freeze_all(self): for p in
# self.parameters(): p.requires_grad = False``): ``net.freeze_all()`` freezes ``net``.
FREEZES_SELF = "freezes_self"
# ... a backward pass or torch.autograd.grad differentiates what that argument holds or what was
# computed from it (``def hvp(y, w, v): first = autograd.grad(y, w, create_graph=True) ...``): the
# caller's value is backpropagated, as if it called backward() on it itself.
BACKPROPAGATES_ARGUMENT = "backpropagates_argument:"
# ... ``torch.save`` writes what that argument holds (``def save_states(self, epoch, states, path):
# torch.save(states, path)``): whether the file holds device tensors is decided at each call, by
# what the caller hands it (``self.save_states(epoch, {k: v.cpu() ...}, ...)``).
SAVES_ARGUMENT = "saves_argument:"


def is_bounded_deque(value: cst.CSTNode | None) -> bool:
    """``deque(maxlen=k)`` / ``collections.deque(items, k)``: a container that drops its oldest
    entry when full, so what it keeps is bounded whatever is appended."""
    if not isinstance(value, cst.Call) or (dotted_name(value.func) or "").rsplit(".", 1)[-1] != "deque":
        return False
    return len(value.args) >= 2 or any(arg.keyword is not None and arg.keyword.value == "maxlen"
                                       for arg in value.args)


def bounded_container(name: str, function: "FunctionScope") -> bool:
    """Is the container ``name`` (a local of ``function`` or ``self.x`` of its class) only ever
    bound to a bounded deque?"""
    if name.startswith("self."):
        info = function.class_info
        binding = info.attributes.get(name) if info is not None else None
    else:
        binding = function.bindings.get(name)
    return binding is not None and is_bounded_deque(binding.node)


def _field_root(node: cst.BaseExpression) -> str | None:
    """``batch["pos"]`` / ``batch.pos`` (also ``batch["pos"] + offset``) -> ``batch``: the value
    whose field this is; None for anything else."""
    if isinstance(node, cst.BinaryOperation):
        return _field_root(node.left)
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1 and \
            isinstance(node.slice[0].slice, cst.Index) and constant_key(node.slice[0].slice.value) is not None:
        return node.value.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value not in ("self", "cls"):
        return node.value.value
    return None


def mentions_epoch(header: Iterable[cst.BaseExpression]) -> bool:
    return any("epoch" in name.lower() for part in header for name in names_in(part))


def holds_every_step(test: cst.BaseExpression, loop: "Loop | None") -> bool:
    """Does the body of ``if test:`` inside ``loop`` run on every step once it runs at all?

    Yes for a device-availability test (``torch.cuda.is_available()``, ``device.type ==
    "cuda"``) and for a flag that does not change in the loop (``if self.args.batch_eval_metrics:``).
    No for a test of something that changes per step (``step % k == 0``, ``i == 0``, a call),
    and for an opt-in about memory (``if args.empty_cache:``,
    ``if torch.cuda.memory_reserved() > limit:``), which is a deliberate, configured choice."""
    names = names_in(test)
    if not names:
        return False
    if any(word in name.lower() for name in names for word in ("empty", "cache", "mem", "gc", "collect")):
        return False
    device_words = ("cuda", "device", "gpu", "is_available")
    if all(name == "torch" or any(word in name.lower() for word in device_words) for name in names):
        return True
    if loop is None or _has_call(test) or _has_modulo(test):
        return False  # a modulo test is periodic by intent, whatever it tests
    changing = loop.bound_this_iteration | loop.target_names | loop.incremented
    if isinstance(loop.node, cst.While):
        changing = changing | set(names_in(loop.node.test))  # it changes, or the loop would never end
    return not any(name.split(".", 1)[0] in changing or name in changing for name in names)


def _has_modulo(node: cst.CSTNode) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.BinaryOperation) and isinstance(current.operator, cst.Modulo):
            return True
        if isinstance(current, (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation, cst.BinaryOperation)):
            stack.extend(expression_children(current))
    return False


def _has_call(node: cst.CSTNode) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            return True
        if isinstance(current, (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation, cst.BinaryOperation)):
            stack.extend(expression_children(current))
        elif isinstance(current, (cst.Attribute, cst.Subscript)):
            stack.append(current.value)
    return False


def is_test_file(path: str) -> bool:
    """A pytest file (``test_*.py``, ``*_test.py``, ``conftest.py``): code that exercises a feature
    for a moment, not a training run."""
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    return base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py"


# Name prefixes of functions that build or fetch a module (their name ends in "_model" but a
# call of them is not a forward pass).
_FACTORY_PREFIXES = ("build_", "create_", "make_", "get_", "load_", "init_", "setup_", "instantiate_",
                     "construct_", "prepare_", "wrap_", "new_")

# Narrower than the data words: ``range(num_steps)`` unrolling a model is not a pass over data.
_SEQUENCE_DATA_TOKENS = frozenset({"loader", "dataloader", "dataset", "data", "batches", "epoch", "epochs", "samples"})


def builds_a_sequence(loop: "Loop") -> bool:
    """A ``while`` loop, or ``for`` over ``range(...)`` of no loader/dataset, or over timesteps the
    function makes with ``torch.arange`` / ``torch.linspace`` (``steps = torch.arange(0, T, k).flip(0)``):
    time steps, episode steps, decoding or sampling steps (not a pass over data)."""
    if loop.kind == "while":
        return True
    node = loop.node
    if not isinstance(node, cst.For):
        return False
    iterable = node.iter
    if isinstance(iterable, cst.Name):
        binding = loop.scope.bindings.get(iterable.value) if isinstance(loop.scope, FunctionScope) else None
        bound = binding.node if binding is not None else None
        return isinstance(bound, cst.BaseExpression) and _made_by_a_counter(bound)
    if _made_by_a_counter(iterable) and not (isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "range"):
        return True
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range"):
        return False
    tokens = {token.lower() for name in names_in(node.iter) for token in name.replace(".", "_").split("_")}
    return not tokens & _SEQUENCE_DATA_TOKENS


_COUNTERS = frozenset({"torch.arange", "torch.linspace", "np.arange", "np.linspace", "numpy.arange", "numpy.linspace"})


def _made_by_a_counter(node: cst.BaseExpression) -> bool:
    """``torch.arange(...)`` / ``linspace``, also shifted, clamped or flipped
    (``(1 + torch.arange(0, T, k)).clamp(0, T - 1).flip(0)``), or ``reversed(range(n))``."""
    while True:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and dotted_name(node.func) not in _COUNTERS:
            node = node.func.value  # .clamp(...), .flip(0), .tolist(), .long()
        elif isinstance(node, cst.BinaryOperation):
            node = node.right if literal_value(node.left) is not NOT_A_LITERAL else node.left
        elif isinstance(node, cst.Call) and dotted_name(node.func) in ("reversed", "list") and node.args:
            node = node.args[0].value
        else:
            break
    return isinstance(node, cst.Call) and (dotted_name(node.func) in _COUNTERS or dotted_name(node.func) == "range")


def is_module_name(name: str) -> bool:
    lowered = name.lower()
    if lowered in MODULE_NAME_WORDS or lowered.endswith(MODULE_NAME_SUFFIXES):
        return True
    # net_g_ema, model_without_ddp: a module; model_cls, model_path, model_out: what names one
    return lowered.startswith(("model_", "net_")) and lowered.rsplit("_", 1)[-1] not in _NOT_AN_INSTANCE


# Last words of a name that say it is not a module object: a class, a path, a config, an output.
_NOT_AN_INSTANCE = frozenset({"cls", "class", "type", "fn", "func", "factory", "name", "names", "path", "paths",
                              "dir", "file", "cfg", "config", "args", "kwargs", "out", "output", "outputs",
                              "interf", "id", "idx", "list", "dict", "str", "url", "size", "dim", "input",
                              "inputs", "batch", "data", "pred", "preds", "loss", "state", "params"})


def names_a_module_object(name: str) -> bool:
    """A conventional name of a module object, not of what builds one: ``model``, ``encoder``;
    not a factory (``build_model``, ``get_model``) nor a class passed in (``Model``, ``NetClass``),
    whose calls construct a module rather than run one."""
    if not is_module_name(name) or name.lower().startswith(_FACTORY_PREFIXES):
        return False
    return not (name[:1].isupper() and not name.isupper())


class GradMode(enum.Enum):
    """Is autograd recording in a region? One fact, whatever set it.

    ``MAYBE_OFF`` is unknown, not off: each rule decides what it means. A waste rule (ML201)
    stays quiet, since grad may well be off; a leak rule reads values there as
    ``Graph.UNKNOWN`` (see :meth:`Facts.graph_value`), which other evidence can still settle
    (a backward pass through the value in the same function)."""

    ON = "on"
    OFF = "off"  # torch.no_grad(), inference_mode(), set_grad_enabled(False)
    MAYBE_OFF = "maybe off"  # set_grad_enabled(flag), ``nullcontext() if x else no_grad()``: either

    @property
    def may_be_off(self) -> bool:
        return self is not GradMode.ON


class Graph(enum.IntEnum):
    """Does a value carry an autograd graph? Ordered so ``max`` combines operands."""

    NONE = 0
    UNKNOWN = 1
    CARRIES = 2


Key = "str | int"  # a constant dict key or a tuple/list position


@dataclass(frozen=True)
class GraphValue:
    """What a value holds: its graph state, the variable names it was computed from, and,
    for a container built in view, what each part holds.

    ``UNKNOWN`` values become graph-carrying once the enclosing function is known to
    backpropagate one of ``names`` (see :meth:`FunctionScope.is_backpropagated`).

    ``parts``: per constant key or position, when every key of a dict/tuple/list is known
    (``{"loss": loss, "n": 3}``, ``(out, hidden)``, a function's returned dict): ``log["n"]``
    then reads its own part, not the whole. ``state`` is always the most graph any part holds.

    ``pending``: the result of a call of a function of this module that had not been walked
    yet when the call was (a method defined below its caller): resolved by
    :meth:`Facts.resolve` once its summary is known.
    """

    state: Graph
    names: frozenset[str] = frozenset()
    parts: "tuple[tuple[Key, GraphValue], ...] | None" = None
    pending: "frozenset[PendingCall]" = frozenset()
    # With ``pending``: the state of everything else in the value (what is left once the
    # pending calls turn out to return nothing with a graph).
    settled: Graph = Graph.NONE
    # The graph is carried on some paths only: another path gives a value without one (a
    # helper returning ``loss`` when ``loss == 0`` and ``loss.item()`` otherwise, or its argument
    # when no process group is up and fresh all-gathered buffers otherwise). A "may": a finding
    # at error severity needs the graph on every path (ML101 warns otherwise).
    partial: bool = False

    @property
    def carries_something(self) -> bool:
        """May it hold a graph (from a module, a parameter, a call not resolved yet)?"""
        return self.state is not Graph.NONE or bool(self.names) or bool(self.pending)

    @staticmethod
    def combine(values: Iterable["GraphValue"]) -> "GraphValue":
        """Values mixed into one (an operation over them): no parts survive. The graph is
        carried on some paths only when every value that may bring one brings it so."""
        state, settled, names, pending = Graph.NONE, Graph.NONE, frozenset(), frozenset()
        partial, certain = False, False
        for value in values:
            if value.state > state:
                state = value.state
            if value.names:
                names = names | value.names if names else value.names
            if value.pending:
                pending = pending | value.pending
                settled = max(settled, value.settled)
            elif value.state > settled:
                settled = value.state
            if value.partial:
                partial = True
            elif value.state is not Graph.NONE or value.pending:
                certain = True  # (names alone, in state NONE, say where a value came from)
        if state is Graph.NONE and not names:
            return NO_GRAPH
        partial = partial and not certain
        if state is Graph.CARRIES and not names and not pending and not partial:
            return CARRIES_VALUE
        return GraphValue(state, names, None, pending, settled, partial)

    def on_some_paths(self) -> "GraphValue":
        """This value as one of several alternatives, another of which holds no graph."""
        if self.partial or not self.carries_something:
            return self
        if self.parts is not None:
            return GraphValue(self.state, self.names, tuple((key, part.on_some_paths()) for key, part in self.parts),
                              self.pending, self.settled, True)
        return GraphValue(self.state, self.names, None, self.pending, self.settled, True)

    @staticmethod
    def container(parts: "Iterable[tuple[Key, GraphValue]]") -> "GraphValue":
        """A dict/tuple/list whose every key is known."""
        parts = tuple(parts)
        whole = GraphValue.combine(value for _, value in parts)
        return GraphValue(whole.state, whole.names, parts, whole.pending, whole.settled, whole.partial)

    @staticmethod
    def pending_call(call: "PendingCall") -> "GraphValue":
        return GraphValue(Graph.UNKNOWN, frozenset(), None, frozenset({call}), Graph.NONE)

    def part(self, key: "Key") -> "GraphValue | None":
        """What the part under ``key`` holds (a negative position counts from the end);
        None when the layout is unknown or has no such key."""
        if self.parts is None:
            if self.pending and self.settled is Graph.NONE:  # a, b = helper(x) with helper below
                return GraphValue(self.state, frozenset(), None,
                                  frozenset(dataclasses.replace(call, path=call.path + (key,)) for call in self.pending))
            return None
        if isinstance(key, int) and key < 0 and all(isinstance(k, int) for k, _ in self.parts):
            key += len(self.parts)
        for part_key, value in self.parts:
            if part_key == key:
                return value
        return None

    @property
    def element(self) -> "GraphValue":
        """Any one element (a loop over it, an unknown key): the whole, without its layout."""
        if self.parts is None:
            return self
        return GraphValue(self.state, self.names, None, self.pending, self.settled, self.partial)

    def join(self, other: "GraphValue") -> "GraphValue":
        """Either of two values (two ``return`` statements, two branches): parts are kept
        key by key when both have them (a plain value such as ``None`` keeps the other's). On
        some paths only when either is."""
        joined = self._join(other)
        if (self.partial or other.partial) and not joined.partial:
            return joined.on_some_paths()
        return joined

    def _join(self, other: "GraphValue") -> "GraphValue":
        if self.parts is not None and other.parts is not None:
            keys = [k for k, _ in self.parts] + [k for k, _ in other.parts if self.part(k) is None]
            joined = []
            for key in keys:
                mine, theirs = self.part(key), other.part(key)
                joined.append((key, mine.join(theirs) if mine is not None and theirs is not None else mine or theirs))
            return GraphValue.container(joined)
        if self.parts is not None and other.state is Graph.NONE:
            return self
        if other.parts is not None and self.state is Graph.NONE:
            return other
        for whole, plain in ((self, other), (other, self)):
            if whole.parts is not None and plain.parts is None and not whole.pending:
                # ``return loss, auc`` on one path, ``return loss`` on another: where the result is
                # unpacked, the plain value's elements are unknown, each part keeps its own state
                # (also where what the plain value holds waits on a call: its elements are unknown)
                unknown = GraphValue(Graph.UNKNOWN, plain.names)
                return GraphValue.container((key, part.join(unknown)) for key, part in whole.parts)
        return GraphValue.combine((self, other))

    def with_names(self, names: frozenset[str]) -> "GraphValue":
        return GraphValue(self.state, names, self.parts, self.pending, self.settled, self.partial)


NO_GRAPH = GraphValue(Graph.NONE)
UNKNOWN_VALUE = GraphValue(Graph.UNKNOWN)
CARRIES_VALUE = GraphValue(Graph.CARRIES)


@dataclass(frozen=True)
class Store:
    """A method keeps what one of its parameters carries in its object, from call to call:
    ``def update(self, val, n=1): self.sum += val * n`` stores ``val`` in ``self.sum``; so does
    ``self.meters[k].update(val)`` with a meter that does (``attribute`` is then ``self.meters``)."""

    parameter: str
    attribute: str
    appends: bool  # kept as given, one more each call (``append``), not summed into one tensor
    # Through a method of an object the method's object holds (``self.meters[k].update(v)``),
    # not by a statement of its own: that call is where the value enters the meter.
    forwarded: bool = False
    # What is kept carries the parameter's graph on some paths only (``self.sum += sync(val)``
    # with ``sync`` handing back fresh buffers when a process group is up): see GraphValue.partial.
    partial: bool = False
    # Functions of other modules the kept value passes through (``utils.sync_tensor``): it is
    # kept on some paths only if one of them returns its graph on some paths only, which their
    # summaries say when the store is read (see Facts.store_on_some_paths).
    partial_via: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Forward:
    """A call, in a method, of a method of ``self`` or of an object ``self`` holds
    (``self._update(stats)``, ``self.meters[k].update(value, n)``): per argument (position or
    keyword), the method's parameters whose graph reaches it. Resolved into stores when asked
    (:meth:`Facts.stores_of`), once every class of the module is known."""

    receiver: cst.BaseExpression
    method: str
    arguments: "tuple[tuple[str | int, frozenset[str]], ...]"
    holder: str  # the receiver's storage: "self", "self.meters"
    partial: frozenset[str] = frozenset()  # parameters whose graph reaches an argument on some paths only


@dataclass(frozen=True)
class PendingCall:
    """A call of a function of this module whose summary was not known at the call: the
    callee (``id`` of its ``def``) and what each parameter received."""

    # id() of the ``def`` of a function of this module, ``module:name`` of a function of
    # another module of the project (resolved through the project's summaries), or a method
    # called on a parameter (resolved through the classes the function's callers pass).
    callee: "int | str | ParameterMethod"
    arguments: "tuple[tuple[str, GraphValue], ...]"
    starred: bool = False  # f(*args): parameters not named by the call hold unknown values
    module_call: bool = False  # ``self.net(x)`` with ``net`` a module class of this file: its forward
    path: "tuple[Key, ...]" = ()  # the part of the result taken (``a, b = helper(x)``: b is (1,))
    eval_mode: bool = False  # the module is known to be in eval mode here (``self.training`` is False)


@dataclass(frozen=True)
class ParameterMethod:
    """The callee of ``model.predict(x)`` with ``model`` a parameter of the calling function:
    ``predict`` of the class of this module that every call of the function in view passes
    (:meth:`Facts.parameter_class`), known once the module has been walked. The call's
    positional arguments are named ``#0``, ``#1``... until the method's parameters are known."""

    function: int  # id() of the calling function's ``def``
    parameter: str
    method: str
    fallback: "GraphValue"  # what the call is taken to return when the class is not known


@dataclass(eq=False)
class ParameterCallee:
    """A loop body's ``model.predict(x)`` with ``model`` a parameter: what it runs is known
    at the end of the module, from the class the function's callers pass."""

    call: cst.Call
    function: "FunctionScope"


@dataclass
class FunctionCall:
    """A call of a function of this module resolved to its ``def`` (a method through ``self``
    or an instance, a function defined below): who calls it, inside which loops, with what."""

    caller: "FunctionScope"
    loops: "tuple[Loop, ...]"  # the caller's loops around the call, innermost first
    arguments: "dict[str, GraphValue]"  # parameter -> what the call passed
    starred: bool
    no_grad: bool  # the call is made with grad off
    # parameter -> the class of this module the call passes an instance of ("Meter"), or a
    # container of instances of ("[Meter]": ``{"loss": Meter(), ...}``)
    classes: "dict[str, str]" = field(default_factory=dict)
    training_sites_before: int = 0  # the caller's training sites walked before the call
    results: frozenset[str] = frozenset()  # the names the call's result is bound to (``rgb = render(...)``)
    call: "cst.Call | None" = None  # the call itself, for a plain function (not a method through ``self``)


class Pending(Exception):
    """Raised by :meth:`Facts.resolve` when a decision needs a function summary that the walk
    has not reached yet; the engine runs the deferred decision again at the end of the module."""


class Kind(enum.Enum):
    """What a name is bound to, as far as the engine can tell."""

    MODULE = "module"
    VALUE = "value"


@dataclass
class Binding:
    kind: Kind
    graph: GraphValue
    node: cst.CSTNode | None = None
    loop: "Loop | None" = None  # innermost loop the binding happened in
    # Called like a function (``clf(x)``): a callable, a module, not a tensor with a graph.
    called: bool = False


@dataclass
class ClassInfo:
    name: str
    node: cst.ClassDef
    base_names: tuple[str, ...]  # qualified names of the bases
    is_module: bool
    is_lightning: bool  # known to be a LightningModule (its bases say so, through the project)
    is_dataset: bool
    kinds: ClassKinds = PLAIN  # what its bases make it (see memlint.static.frameworks)
    attributes: dict[str, Binding] = field(default_factory=dict)  # "self.x" bindings
    incremented: set[str] = field(default_factory=set)  # "self.calls" in "self.calls += 1"
    methods: dict[str, "FunctionScope"] = field(default_factory=dict)  # filled as the body is walked


@dataclass
class Loop:
    node: cst.CSTNode
    kind: str  # "for" | "while"
    scope: "Scope"
    iterates_data: bool = False  # over a loader/dataset/steps, not over the parts of one value
    parameters_of: str | None = None  # "model" in "for p in model.parameters()"
    bound_this_iteration: set[str] = field(default_factory=set)
    # name -> the if/else arms (Facts.branch_path) of each assignment of it in the body
    bound_in_arms: dict[str, list[tuple[tuple[int, str], ...]]] = field(default_factory=dict)
    branch_depth: int = 0  # len(Facts.branch_path) at the loop: deeper in its body is conditional
    target_names: frozenset[str] = frozenset()
    has_backward: bool = False  # a backward pass or torch.autograd.grad
    # a backward pass that fills .grad (not only torch.autograd.grad, which a loop over the
    # heads or targets of one step also runs)
    has_backward_pass: bool = False
    has_optimizer_step: bool = False
    incremented: set[str] = field(default_factory=set)  # names/attrs changed by += inside
    # Step-loop facts (see walks_steps()): does the header name batches/steps, or epochs?
    walks_steps: bool = False
    mentions_epoch: bool = False
    # a loop nested in this one walks steps by name: this is an epoch loop
    contains_step_loop_by_name: bool = False
    # the loops nested in this one that backpropagate or step an optimizer (see note_training_inside)
    training_inside: "list[Loop]" = field(default_factory=list)
    # each iteration steps another optimizer, picked by the loop's target (``optimizers[i].step()``,
    # ``for opt in optimizers: opt.step()``): a loop over the models of one step, not over steps
    steps_each_model: bool = False
    over_parts: bool = False  # over the parts of one value: ``for chunk in batch.split(n)``
    # ``for i in range(...)`` (or ``for block in self.blocks``, the module's own submodules) in a
    # method of an nn.Module: counts within one forward computation
    # (stages, layers, heads) unless it draws data, backpropagates or steps an optimizer
    counts_in_module_method: bool = False
    # What the body does, for telling steps by behaviour (see runs_steps):
    # over a literal (``for i in [2]:``, ``range(3)``), or a body that ends with an unconditional
    # ``break``: a fixed few iterations (one)
    bounded: bool = False
    runs_model: bool = False  # a module is called in the body
    # a loop nested in the body (in the same function) calls a module in each of its iterations:
    # one iteration here is a whole pass of forward passes (a video's windows, an episode)
    repeats_model_inside: bool = False
    # torch.load / torch.save directly in the body: one file (a checkpoint shard) per iteration
    moves_files: bool = False
    draws: bool = False  # ``next(...)`` in the body: it pulls batches from an iterator
    moves_to_device: bool = False  # ``.cuda()`` / ``.to(...)`` of a value (not a module) in the body itself
    # Whether what the body calls (this module's functions, the project's) runs a module, a
    # backward pass or an optimizer step: True / False / None (unknown). Set by the engine.
    callees_work: "Callable[[], bool | None] | None" = None
    callees_train: "Callable[[], bool | None] | None" = None  # a backward pass or an optimizer step only
    callees_update: "Callable[[], bool | None] | None" = None  # an optimizer step only
    # ... or runs a module in a loop of its own (an inner pass per iteration of this loop)
    callees_repeat: "Callable[[], bool | None] | None" = None
    callees_steps: "Callable[[], bool | None] | None" = None  # ... or holds a step loop of its own
    # The body's ``try`` ends with ``return`` / ``break``: it goes round again only after an
    # exception (a retry with a smaller batch), not once per step.
    exits_on_success: bool = False
    # The loop is in a function that runs within one step (forward, or only called from one).
    within_a_step: "Callable[[], bool] | None" = None

    @property
    def is_training_loop(self) -> bool:
        return self.has_backward or self.has_optimizer_step

    @property
    def trains(self) -> bool:
        """Does it backpropagate or step an optimizer, in its body or through what it calls?
        (What it calls is complete at the end of the module.)"""
        return self.has_backward_pass or self.has_optimizer_step or bool(
            self.callees_train is not None and self.callees_train())

    def note_training_inside(self, outer: list["Loop"]) -> None:
        """This loop runs a backward pass or an optimizer step: the loops around it that do not
        walk batches or steps by name (``for m in ops``, ``for trial in range(k)``) repeat whole
        step loops, as an epoch loop does; not when this loop is over the parts of one value
        (micro-batches of the step the outer loop runs)."""
        if not self.over_parts:
            for loop in outer:
                if not loop.walks_steps:
                    loop.training_inside.append(self)

    @property
    def contains_step_loop(self) -> bool:
        """Does a loop nested in this one walk steps (by name, or by training in each of its
        iterations, unless each iteration trains another of a few models): this is an epoch loop."""
        return self.contains_step_loop_by_name or any(not inner.steps_each_model for inner in self.training_inside)

    @property
    def runs_every_step(self) -> bool:
        """Is one iteration one training/evaluation step (not an epoch, not a loop over the
        parts of a value)? Complete only once the loop has been walked (decide at function exit)."""
        if self.mentions_epoch or self.contains_step_loop or self.exits_on_success:
            return False
        if self.moves_files and not self.runs_model and not self.draws and not self.is_training_loop:
            return False  # for f in tqdm(shard_files): load, rewrite, save: files, not steps
        if not self.is_training_loop and self.callees_repeat is not None and self.callees_repeat() and not (
                self.callees_train is not None and self.callees_train()):
            return False  # each iteration runs a helper's own loop of forward passes: an episode
        if self.repeats_model_inside and not self.is_training_loop:
            return False  # ... or a loop of its own (for f in range(0, length, stride): model(...)): a video
        if self.callees_steps is not None and self.callees_steps():
            return False  # each iteration runs a helper's own step loop (train_one_epoch): an epoch
        # a header that names steps (``for iteration in range(repetitions)``) is a tie-breaker:
        # the loop must also do what a step does, in its body or in what it calls (whole runs
        # built and trained through methods nothing can read are not steps)
        return self.is_training_loop or (self.walks_steps and self._works_like_a_step())

    def _works_like_a_step(self) -> bool:
        """Does the loop do what a step does: iterate what its iterable names as data (a loader),
        run a model, draw a batch, move a batch of data to the device, or call what provably runs
        a model or trains? A step-like name of the target alone (``for iteration in
        range(repetitions)``) is no evidence."""
        if self.iterates_data or self.runs_model or self.draws or self.moves_to_device or self.runs_steps:
            return True
        return bool(self.callees_work is not None and self.callees_work())

    @property
    def runs_steps(self) -> bool:
        """Does an iteration stand for a step (data comes in, parameters are updated), as
        opposed to a loop over the layers, heads or targets of one step, over files or
        checkpoint shards, or a fixed few times? By what the loop does: it runs a backward pass
        or an optimizer step; or it draws from something that is not a literal and runs a
        module on it (in its body or in what it calls), outside a function that is itself part
        of one step. The names of the iterable (``loader``, ``batches``) only break the tie
        when what the body calls cannot be read. Complete once the function has been walked."""
        if self.has_backward_pass or self.has_optimizer_step:
            return not self.steps_each_model
        if self.bounded or (self.within_a_step is not None and self.within_a_step()):
            return False
        if self.over_parts:
            return False  # the rows or chunks of one value (a batch's items, a decoding step's turns)
        if self.draws:
            return True  # batch = next(it): whatever it counts, it pulls batches
        if self.callees_train is not None and self.callees_train():
            return True  # for step in range(n): learner.update(batch), which backpropagates and steps
        if not self.iterates_data or self.counts_in_module_method:
            return False
        if self.runs_model:
            return True
        works = self.callees_work() if self.callees_work is not None else None
        return works is not False


# Methods that move, retype, reshape or take apart a batch: what they return is the batch's data.
_DATA_METHODS = frozenset({"to", "cuda", "cpu", "pop", "get", "float", "long", "int", "half", "double", "bool",
                           "view", "reshape", "squeeze", "unsqueeze", "permute", "contiguous", "transpose",
                           "flatten", "items", "values", "keys", "numpy", "pin_memory", "t"})


def _part_of_data(node: cst.CSTNode, roots: set[str]) -> bool:
    """Is ``node`` a part of one of ``roots`` (loop targets: batches), moved, retyped or
    reshaped: ``batch["x"].to(device)``, ``data[0].cuda()``, ``{k: v.cuda() for k, v in batch.items()}``?"""
    node_type = type(node)
    if node_type is _NAME:
        return node.value in roots
    if node_type is _ATTRIBUTE or node_type is cst.Subscript:
        return _part_of_data(node.value, roots)
    if node_type is cst.Call:
        func = node.func
        return type(func) is _ATTRIBUTE and func.attr.value in _DATA_METHODS and _part_of_data(func.value, roots)
    if node_type in (cst.DictComp, cst.ListComp, cst.GeneratorExp):
        inner = set(roots)
        generator = node.for_in
        while generator is not None:
            if not _part_of_data(generator.iter, inner):
                return False
            inner |= names_in(generator.target)
            generator = generator.inner_for_in
        parts = (node.key, node.value) if node_type is cst.DictComp else (node.elt,)
        return all(_part_of_data(part, inner) for part in parts)
    return False


def in_other_arms(arms: Iterable[tuple[int, str]], other: Iterable[tuple[int, str]]) -> bool:
    """Are two places (each the if/else arms it is in: Facts.branch_path) in different arms of
    one ``if``, never both run in one pass?"""
    taken = dict(arms)
    return any(taken.get(node, arm) != arm for node, arm in other)


@dataclass(frozen=True)
class CallSite:
    """A call of a function of this module (by name), and the grad mode at the call."""

    mode: GradMode
    caller: "FunctionScope"
    inherited: bool  # the caller's entry mode holds at the call (see Facts.grad_mode_inherited)
    # ``self.name(...)`` / ``cls.name(...)``: the class of that ``self`` (only a method of a class
    # related to it can be the callee); None for any other receiver.
    self_class: str | None = None
    # ``model.eval()`` on a module: nn.Module's method (see MODULE_METHODS), not one of a class
    # that is no module
    module_receiver: bool = False
    # ``obj.name(...)`` on anything but a module the file imports: a method of some object, never
    # the plain function ``name`` of another module (``sampling.forward(...)`` may be; ``model.forward(...)`` not)
    by_attribute: bool = False


def method_owner(scope: "FunctionScope") -> str | None:
    """The class ``scope`` is a method of (defined directly in its body), or None."""
    return scope.class_info.name if scope.class_info is not None and isinstance(scope.parent, ClassScope) else None


def related_classes(callee: str, caller: str, ancestors: "Callable[[str], Iterable[str]]") -> bool:
    """Can ``self.m()`` in class ``caller`` run the method ``m`` of class ``callee``? Only when one
    derives from the other (or they are one class): ``self`` is an instance of the caller's
    class. ``ancestors`` lists a class's ancestors (names as the two are given)."""
    return callee == caller or callee in ancestors(caller) or caller in ancestors(callee)


@dataclass
class ModeChange:
    target: str  # dotted name, e.g. "model" or "self.teacher"
    mode: str  # "eval" | "train" | "frozen", or REBOUND: the name now holds another object
    node: cst.Call
    branch_path: tuple = ()  # the if-branches the change was made in
    loops: tuple[int, ...] = ()  # id()s of the function's loops around it, outermost first


REBOUND = "rebound"  # a ModeChange: the name was bound to another object (``net = Model()``)


class Scope:
    """A module, class or function scope."""

    kind = "module"

    def __init__(self, node: cst.CSTNode, parent: "Scope | None") -> None:
        self.node = node
        self.parent = parent
        self.bindings: dict[str, Binding] = {}
        self.deferred: list[Callable[[], None]] = []

    def lookup(self, name: str) -> Binding | None:
        """Python's rule: a class body's names are not visible from its methods."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bindings and (scope is self or scope.kind != "class"):
                return scope.bindings[name]
            scope = scope.parent
        return None


class FunctionScope(Scope):
    kind = "function"

    def __init__(self, node: cst.FunctionDef | cst.Lambda, parent: Scope, name: str,
                 class_info: ClassInfo | None, entry_grad_mode: "GradMode" = GradMode.ON) -> None:
        super().__init__(node, parent)
        self.name = name
        self.class_info = class_info  # set for methods
        # Grad mode when the body starts: from decorators or Lightning's eval hooks (callers
        # are applied at the end of the module).
        self.entry_grad_mode = entry_grad_mode
        self.entry_grad_mode_explicit = False  # set by a decorator or a framework hook, not by callers
        # Names appearing in what is backpropagated: x.backward(), backward(x), autograd.grad(x).
        self.backward_names: set[str] = set()
        self.returned_nodes: list[cst.BaseExpression] = []  # what each ``return`` hands back
        # a ``return`` hands back a value without a graph (``loss.item()``, ``0``; not ``None``):
        # a graph another return hands back is carried on some paths only
        self.graphless_return = False
        self._configuration_cache: tuple[int, set[str]] | None = None
        self._input_attributes: tuple[int, frozenset[str]] | None = None  # see _attributes_of_inputs
        self._input_data: tuple[tuple[int, int], frozenset[str]] | None = None  # see _data_of_inputs
        # Used as a decorator, the grad mode this function gives what it decorates: ``@f`` /
        # ``@f(...)`` (see Facts.decorated_grad_mode); set when the walk leaves it.
        self.decorator_grad_mode: "GradMode | None" = None
        self.factory_grad_mode: "GradMode | None" = None
        # An ``__enter__`` that enters a grad-mode context (``self.no_grad_context.__enter__()``,
        # ``torch.set_grad_enabled(False)``): the mode a ``with`` of its class puts its block in
        # (MAYBE_OFF when it does so only on some paths). None: it sets none.
        self.enter_grad_mode: "GradMode | None" = None
        self.branch_depth = 0  # the if-branches around the ``def`` (Facts.branch_path) when it was walked
        # What the backpropagated values were computed from when each backward ran (a snapshot:
        # ``loss_g.backward(); loss_g = loss_g.item()`` still backpropagated what loss_g was).
        self.backpropagated_from: set[str] = set()
        self.backward_nodes: set[int] = set()  # id() of expressions inside a backward receiver
        self.returned_names: set[str] = set()
        self.derived_from: dict[str, set[str]] = {}  # name -> names its values were computed from
        self.mode_changes: list[ModeChange] = []
        self.requires_grad_inputs = False  # x.requires_grad_() / requires_grad=True / autograd.grad seen
        self.volatile_names: set[str] = set()  # bound to Variable(..., volatile=True) (see is_volatile_variable)
        self.moved_to_cpu: set[str] = set()  # ``model.cpu()`` alone on a line so far (not moved back since)
        self.frozen_here: set[str] = set()  # ``for p in model.parameters(): p.requires_grad = False`` here
        self.moved_off_cpu: set[str] = set()  # ``model.cuda()`` / ``model.to(device)`` alone on a line so far
        self.has_backward = False
        # Names converted with .numpy() without a detach on the way (mu.cpu().numpy()): numpy()
        # raises on a tensor that requires grad, so a program that runs holds none in them there.
        self.numpy_converted: set[str] = set()
        self.has_optimizer_step = False
        # Each backward pass ("backward") and optimizer step ("step") in walk order, with the
        # loops around it (their id()s): what a statement reaches is what comes after it, or
        # anything in a loop around it.
        self.training_sites: list[tuple[str, tuple[int, ...]]] = []
        self.incremented: set[str] = set()  # names changed with += in this function
        self.inputs: set[str] = set()  # parameters and loop targets: data coming in
        # loop targets walking a list this function built (``for g in grads`` after filling
        # ``grads``): its elements, which may carry what was put in (see is_backpropagated)
        self.element_targets: set[str] = set()
        # names given to range() (``for _ in range(grad_accum_every)``): integers, which never
        # carry a graph, whatever they divide on the way into a backward pass
        self.counts: set[str] = set()
        # Names bound here only ever to values without a graph (computed under no_grad,
        # constants, fresh tensors): nothing derived through them carries a graph from before.
        self.bound_without_graph: set[str] = set()
        # (the module's scope) names the module binds once, to a configuration value (see
        # is_configuration_value), anywhere in its top-level code: set before the walk
        self.configuration_names: set[str] = set()
        self.bound_with_graph: set[str] = set()  # ... and names bound at least once to one that may
        self.return_graph = Graph.NONE  # the most graph any ``return`` here hands back
        self.is_generator = False
        # The grad mode at each ``yield``, when the function set it itself (None: the caller's);
        # see Facts.context_grad_mode.
        self.yield_grad_modes: set["GradMode | None"] = set()
        # What this body calls: qualified (or dotted) callee names, ``?.method`` when the
        # receiver is not a plain name (``self.handles[0].remove()``). See Facts.calls_made.
        self.callees: set[str] = set()
        self.parameters: tuple[str, ...] = ()  # after self/cls, in order (keyword-only last)
        # What each ``return`` hands back: as computed here, and in terms of the parameters
        # (see Facts.summary_form).
        self.returns: list[tuple[GraphValue, GraphValue]] = []
        # per return, in order: "train" / "eval" when it is under ``if self.training:`` (or its
        # else branch, or ``if not self.training:``), None otherwise
        self.return_modes: list[str | None] = []
        # per return, in order: n for a tuple literal of n elements, ONE_VALUE for a value that is
        # one tensor or number (a torch call, arithmetic, a literal number, a bare ``return``), None
        # for anything else (see engine._joined_returns)
        self.return_shapes: list[int | str | None] = []
        # "Places" (names, constant-key slots such as ``totals['loss']``) read whole by what is
        # backpropagated, and the values assigned or stored into each place: ``history[-1]``
        # reads one element of ``history``, ``sum(history)`` all of it (see places_in).
        self.backward_places: set[str] = set()
        # Constant-key slots given a value without a graph (``out["loss"] = out["loss"].detach()``).
        self.graph_free_slots: set[str] = set()
        self.stored_values: dict[str, list[cst.BaseExpression]] = {}
        # What other modules may ask of this function (see memlint.static.summaries): the
        # effects of its own statements, and what it calls (``module:name`` when known here,
        # else the qualified name as imported).
        self.effects: set[str] = set()
        self.call_keys: set[str] = set()
        # What a method keeps of its parameters in its object (see Store, Forward, Facts.stores_of).
        self.self_stores: list[Store] = []
        self.forwards: list[Forward] = []

    @property
    def is_per_step_method(self) -> bool:
        return self.class_info is not None and self.name in PER_STEP_METHODS

    @property
    def steps_once_per_call(self) -> bool:
        """A method that steps an optimizer outside any loop of its own (``optimize_parameters``:
        backward passes, then ``self.optimizer_G.step()``): each call is one training step,
        whatever its name. (Complete once the method is walked.)"""
        return self.class_info is not None and any(kind == "step" and not loops for kind, loops in self.training_sites)

    def trains_after(self, sites_before: int, loops: "list[Loop]") -> bool:
        """Does a backward pass or an optimizer step of this function run after a statement
        seen when ``sites_before`` training sites had been walked, inside ``loops`` (the loops
        of this function around it, outermost first): one later in the body, or one in the
        outermost of those loops, which goes round to it again?"""
        if len(self.training_sites) > sites_before:
            return True
        return bool(loops) and any(id(loops[0].node) in around for _, around in self.training_sites)

    def steps_after_backward_in(self, loop: "Loop") -> bool:
        """Does this function step the optimizer after ``loop``'s backward passes, outside it, in
        the same iteration of the loops around it (see :meth:`Facts.is_micro_batch_loop`)?"""
        key = id(loop.node)
        inside = [index for index, (_, around) in enumerate(self.training_sites) if key in around]
        if not inside:
            return False
        first = self.training_sites[inside[0]][1]
        enclosing = first[:first.index(key)]  # the loops around this one
        # an optimizer step after it, in the same iteration of the loops around it
        return any(kind == "step" and around == enclosing and index > inside[-1]
                   for index, (kind, around) in enumerate(self.training_sites))

    def is_backpropagated(self, names: Iterable[str], besides: Iterable[str] = (),
                          through_attributes: bool = False, through_elements: bool = False) -> bool:
        """Do any of ``names`` flow into something this function backpropagates (other than
        through the names in ``besides``)? ``through_attributes``: a method or part of an
        attribute counts as the attribute (``self.score.sum().backward()`` backpropagates
        ``self.score``). ``through_elements``: through the targets of loops over lists this
        function built (``for g in grads: penalty += g.pow(2).sum()`` reads what ``grads`` holds)."""
        # Not into the function's inputs (parameters, loop targets): a batch that a loss
        # was computed from carries no graph itself.
        # Nor through a name only ever bound without a graph (a target computed under no_grad),
        # nor through a configuration namespace: ``loss = pg_loss - args.ent_coef * entropy``
        # does not make ``global_step += args.num_envs`` graph-carrying.
        # Nor through a module object (``model = accelerator.prepare(model)``): its outputs
        # carry graphs, the variable does not.
        # Nor through a value computed only from configuration (``TEMP_MIN = args.temp_min``,
        # ``temp = max(temp * math.exp(-rate * step), TEMP_MIN)``): a number the model is given.
        modules = {name for name, binding in self.bindings.items() if binding.kind is Kind.MODULE}
        constants = self.bound_without_graph - self.bound_with_graph
        skip = self.inputs | constants | CONFIG_NAMES | _SELF_CONFIG_NAMES | modules | self._configuration_values(constants) \
            | self.counts
        skip |= self._attributes_of_inputs()  # args.lr, __C.GRAD_ACCU_STEPS, batch.labels: not the loss's graph
        skip |= self._global_configuration()  # batch_size = args.batch_size at the top of the script
        skip |= self._data_of_inputs()  # labels = batch.pop("labels"): the batch's own tensor, moved or not
        if through_elements:
            skip -= self.element_targets
        sources = set(self.backward_names) - self._backpropagated_only_in_cleared_slots()
        if through_attributes:
            sources |= {name.rpartition(".")[0] for name in self.backward_names if name.count(".") >= 2}
        return self.derives_from(sources, names, skip=skip | set(besides))

    def _global_configuration(self) -> set[str]:
        """Module-level names this function reads without binding them that the module computes
        only from configuration (``batch_size, epochs = args.batch_size, args.epochs`` under
        ``if __name__ == "__main__":``) or binds only without a graph: numbers a loss may be
        scaled by, never a graph."""
        module = self.parent
        while module is not None and module.parent is not None:
            module = module.parent
        if not isinstance(module, FunctionScope) or module is self or module.name != "<module>":
            return set()
        constants = module.bound_without_graph - module.bound_with_graph
        found = constants | module._configuration_values(constants) | module.configuration_names
        return {name for name in found if name not in self.bindings}

    def _attributes_of_inputs(self) -> frozenset[str]:
        """The dotted names this function reads off its inputs or a configuration namespace
        (``args.lr``, ``__C.GRAD_ACCU_STEPS``, ``batch.labels``) and never assigns: what a loss was
        scaled by or computed from, not a graph (``self.x`` is the object's state: not among them)."""
        key = len(self.derived_from)
        if self._input_attributes is not None and self._input_attributes[0] == key:
            return self._input_attributes[1]
        roots = (self.inputs | CONFIG_NAMES) - {"self", "cls"}
        found = frozenset(
            name for sources in self.derived_from.values() for name in sources
            if "." in name and name.split(".", 1)[0] in roots and name not in self.derived_from)
        self._input_attributes = (key, found)
        return found

    def _data_of_inputs(self) -> frozenset[str]:
        """Names this function binds only to parts of its loop targets (the batches it draws),
        moved or reshaped (``batch = {k: v.to(device) for k, v in batch.items()}``, ``labels =
        batch.pop("labels")``, ``x = data[0].cuda()``): data, as the batch is. A loss computed from
        them says nothing of a graph in them."""
        key = (len(self.derived_from), len(self.stored_values))
        if self._input_data is not None and self._input_data[0] == key:
            return self._input_data[1]
        roots = set(self.inputs) - set(self.parameters) - {"self", "cls"}
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, values in self.stored_values.items():
                if name in found or name in roots or "." in name or "[" in name or not values:
                    continue
                if all(_part_of_data(value, roots | found) for value in values):
                    found.add(name)
                    changed = True
        result = frozenset(found)
        self._input_data = (key, result)
        return result

    def _configuration_values(self, constants: set[str]) -> set[str]:
        """Names computed only from configuration values (``args.lr``, ``cfg.x``), constants and
        other such names (and themselves: an annealed temperature), never from a tensor. Not what
        a module computes (``out = D(x)``: a module object is bound without a graph, its output
        carries one)."""
        key = len(self.derived_from)
        if self._configuration_cache is not None and self._configuration_cache[0] == key:
            return self._configuration_cache[1]
        modules = {name for name, binding in self.bindings.items() if binding.kind is Kind.MODULE}
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, sources in self.derived_from.items():
                if name in found or not sources or (modules and not modules.isdisjoint(sources)):
                    continue
                if all(source == name or source in found or source in constants
                       or source.split(".", 1)[0] in CONFIG_NAMES for source in sources):
                    found.add(name)
                    changed = True
        self._configuration_cache = (key, found)
        return found

    def note_backpropagated(self, names: set[str]) -> None:
        """A backward pass runs on ``names`` now: remember what they were computed from."""
        self.backpropagated_from.update(visit(names, lambda name: self.derived_from.get(name, ())))

    def _backpropagated_only_in_cleared_slots(self) -> set[str]:
        """Containers backpropagated only through constant-key slots that this function then
        gives graph-free values: ``out["loss"].backward(); out["loss"] = out["loss"].detach()``
        is no evidence that ``out`` still holds a graph (its other entries are unknown)."""
        cleared = set()
        for name in self.backward_names:
            slots = {place for place in self.backward_places if place.startswith(name + "[")}
            if slots and name not in self.backward_places and slots <= self.graph_free_slots:
                cleared.add(name)
        return cleared

    def reads_beside_backpropagated_slots(self, expressions: Iterable[cst.BaseExpression]) -> bool:
        """Do ``expressions`` meet what this function backpropagates only in containers it
        backpropagates slot by slot (``out["loss"].backward()``), read here through other
        constant keys (``out["boxes"]``)? Then the backward pass is no evidence that what they
        read carries a graph: what a container's other slots hold is not known."""
        reads = set().union(*(places_in(expression) for expression in expressions))
        for place in list(reads):
            binding = self.bindings.get(place) if "[" not in place and "." not in place else None
            if binding is not None and type(binding.node) is cst.Subscript and subscript_key(binding.node) is not None:
                # log_metrics = output["tb_log"]: the name reads that slot
                reads.discard(place)
                reads |= places_in(binding.node)
        by_container: dict[str, set[str]] = {}
        for place in reads:
            if "[" in place:
                by_container.setdefault(place.split("[", 1)[0], set()).add(place)
            elif self.is_backpropagated({place}):
                return False  # read whole: evidence enough
        related = {container: places for container, places in by_container.items()
                   if self.is_backpropagated({container})}
        if not related:
            return False
        for container, places in related.items():
            slots = self.backpropagated_slots(container)
            if slots is None or places & slots:
                return False
        return True

    def backpropagated_slots(self, container: str) -> set[str] | None:
        """The constant-key slots through which ``container`` is backpropagated
        (``out['loss']`` of ``out["loss"].backward()``, or of ``loss = out["loss"];
        loss.backward()``); None when it is backpropagated whole or through anything else."""
        if container in self.backward_places:
            return None
        slots = {place for place in self.backward_places if place.startswith(container + "[")}
        # Follow what the backpropagated names were computed from; a name bound only to slots of
        # the container (``output = out["y"]``, then ``loss = ce(output, t)``) reaches it through
        # those slots. Reaching the container itself any other way: backpropagated whole.
        stack = [name for name in self.backward_names if name != container]
        seen: set[str] = set()
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name == container:
                return None
            # (a rescaling of the name by itself, ``loss = loss / self.accumulate``, keeps its slot)
            values = [value for value in self.stored_values.get(name, ()) if not _rescales(value, name)]
            if not values:
                stack.extend(self.derived_from.get(name, ()))
            for value in values:  # each value the name was bound to (``out["y"]`` or ``outputs[t]``)
                alias = place_of(value)
                if alias is not None and alias.startswith(container + "["):
                    slots.add(alias)
                else:
                    stack.extend(names_in(value))
        return slots or None

    def backpropagates_whole(self, place: str) -> bool:
        """Is all of ``place`` (``losses``, ``self.history``, ``totals['loss']``) backpropagated
        here: ``sum(losses).backward()``, ``total = torch.stack(losses).sum(); total.backward()``?
        Backpropagating one element (``history[-1].backward()``) is not."""
        def stored_in(current: str) -> Iterator[str]:
            if current not in self.inputs:
                for value in self.stored_values.get(current, ()):
                    yield from places_in(value)

        return reaches(self.backward_places, stored_in, lambda current: current == place)

    def derives_from(self, sources: Iterable[str], targets: Iterable[str], skip: Iterable[str] = ()) -> bool:
        """Are any of ``targets`` among ``sources`` or what they were computed from (following
        ``derived_from`` in this function, never through the names in ``skip``)?"""
        targets, skip = set(targets), set(skip)
        if not targets:
            return False
        # losses[0] is reached when losses is (sum(losses).backward()), not the other way round
        targets |= {name.split("[", 1)[0] for name in targets if name.endswith("]") and "[" in name}
        return reaches(sources, lambda name: (n for n in self.derived_from.get(name, ()) if n not in skip),
                       targets.__contains__)


def is_stub(function: cst.FunctionDef) -> bool:
    """A method left for subclasses: decorated ``@abstractmethod``, or a body of only a docstring,
    ``pass``, ``...`` or ``raise NotImplementedError``."""
    if any((dotted_name(decorator.decorator) or "").rsplit(".", 1)[-1] == "abstractmethod"
           for decorator in function.decorators):
        return True
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else function.body.body
    for statement in body:
        smalls = statement.body if isinstance(statement, cst.SimpleStatementLine) else (
            [statement] if isinstance(statement, cst.BaseSmallStatement) else None)
        if smalls is None:
            return False
        for small in smalls:
            if isinstance(small, cst.Pass):
                continue
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString,
                                                                         cst.Ellipsis)):
                continue
            if isinstance(small, cst.Raise) and "NotImplementedError" in (dotted_name(
                    small.exc.func if isinstance(small.exc, cst.Call) else small.exc) or "" if small.exc else ""):
                continue
            return False
    return True


_TO_NUMBER_METHODS = frozenset({"item", "tolist", "detach", "numpy"})


def _reads_itself_only_converted(value: cst.BaseExpression, name: str) -> bool:
    """Does ``value`` read ``name`` at least once, and each time only through a conversion to
    a number or a detached tensor (``name.item() / n``, ``float(name) * k``)?"""
    found = False

    def walk(node: cst.CSTNode) -> bool:
        nonlocal found
        if type(node) is cst.Call:
            func = node.func
            if (type(func) is _ATTRIBUTE and func.attr.value in _TO_NUMBER_METHODS) or (
                    type(func) is _NAME and func.value in ("float", "int")):
                found |= name in names_in(node)
                return True
        if type(node) is _NAME and node.value == name:
            return False
        return all(walk(child) for child in node.children)

    return walk(value) and found


def _rescales(value: cst.BaseExpression, name: str) -> bool:
    """``name / k``, ``name * self.weight``: the name itself times a number (a literal or an
    attribute of ``self``), nothing else read."""
    if type(value) is not cst.BinaryOperation or not isinstance(
            value.operator, (cst.Divide, cst.Multiply, cst.FloorDivide)):
        return False
    sides = (value.left, value.right)
    if not any(type(side) is _NAME and side.value == name for side in sides):
        return False
    other = value.right if type(value.left) is _NAME and value.left.value == name else value.left
    return isinstance(other, (cst.Integer, cst.Float)) or (
        (dotted_name(other) or "").startswith("self.") and "[" not in (dotted_name(other) or ""))


def visit(starts: Iterable[str], step: Callable[[str], Iterable[str]], limit: int = 5_000) -> Iterator[str]:
    """Every name reached from ``starts`` by ``step`` (what a name was computed from, stored
    from, passed to...), each once, depth first: the one walk over a function's value-flow
    edges that facts and rules ask questions of (:func:`reaches`)."""
    seen: set[str] = set()
    frontier = list(starts)
    while frontier and len(seen) < limit:
        name = frontier.pop()
        if name in seen:
            continue
        seen.add(name)
        yield name
        frontier.extend(step(name))


def reaches(starts: Iterable[str], step: Callable[[str], Iterable[str]], goal: Callable[[str], bool]) -> bool:
    """Does a walk from ``starts`` along ``step`` reach a name ``goal`` accepts?"""
    return any(goal(name) for name in visit(starts, step))


class ClassScope(Scope):
    kind = "class"

    def __init__(self, node: cst.ClassDef, parent: Scope, info: ClassInfo) -> None:
        super().__init__(node, parent)
        self.info = info


class Imports:
    """Import aliases of one module: local name -> qualified name."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.star_modules: list[str] = []  # ``from utils import *``: the modules, in order
        self.uses_torch = False
        self.uses_lightning = False
        self.uses_distributed = False

    def add(self, local: str, qualified: str) -> None:
        self.aliases[local] = qualified
        if local.startswith("*"):
            self.star_modules.append(qualified)
        root = qualified.split(".", 1)[0]
        if root in TORCH_PACKAGES:
            self.uses_torch = True
        if root in LIGHTNING_PACKAGES:
            self.uses_lightning = True
        # torch.nn.parallel alone is DataParallel too: one process, not a distributed program
        if qualified.startswith(("torch.distributed", "torch.nn.parallel.distributed")) or qualified.endswith(
            ("DistributedDataParallel", "FullyShardedDataParallel")
        ):
            self.uses_distributed = True

    def qualified_name(self, node: cst.BaseExpression) -> str | None:
        """``F.cross_entropy`` -> ``torch.nn.functional.cross_entropy``; None if not dotted."""
        dotted = dotted_name(node)
        return None if dotted is None else self.qualify(dotted)

    def qualify(self, dotted: str) -> str:
        """A dotted name as written (a callee name of a function's summary) as imported:
        ``F.softmax`` -> ``torch.nn.functional.softmax``."""
        head, _, rest = dotted.partition(".")
        if head in self.aliases:
            base = self.aliases[head]
            return f"{base}.{rest}" if rest else base
        return dotted


# libcst's node classes are ABCs, so ``isinstance`` on them is slow; these helpers run for
# nearly every expression and test exact types instead (Name and Attribute have no subclasses).
_NAME, _ATTRIBUTE = cst.Name, cst.Attribute


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``self.model.encoder`` for a Name/Attribute chain, else None."""
    node_type = type(node)
    if node_type is _NAME:
        return node.value
    parts: list[str] = []
    while node_type is _ATTRIBUTE:
        parts.append(node.attr.value)
        node = node.value
        node_type = type(node)
    if node_type is _NAME:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


_CONCATENATIONS = frozenset(f"torch.{name}" for name in (
    "cat", "concat", "concatenate", "vstack", "hstack", "dstack", "row_stack", "column_stack"))


def concatenated_onto(value: cst.BaseExpression, accumulator: str, facts: "Facts") -> list[cst.BaseExpression] | None:
    """The other tensors of ``torch.cat([accumulator, ...])`` (``concat``, ``vstack``...);
    None if ``value`` is not such a concatenation."""
    if not isinstance(value, cst.Call) or not value.args:
        return None
    if facts.qualified_name(value.func) not in _CONCATENATIONS:
        return None
    sequence = value.args[0].value
    if value.args[0].keyword is not None or not isinstance(sequence, (cst.List, cst.Tuple)):
        return None
    elements = [element.value for element in sequence.elements]
    if not any(dotted_name(element) == accumulator for element in elements):
        return None
    return [element for element in elements if dotted_name(element) != accumulator]


def operands(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of a chain of binary operations (``a + b * c``: a, b, c)."""
    if type(node) is cst.BinaryOperation:
        return operands(node.left) + operands(node.right)
    return [node]


VARIABLE_CONSTRUCTORS = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})


def is_volatile_variable(call: cst.Call, qualified: str | None) -> bool:
    """``Variable(x, volatile=True)`` (or ``volatile=not train``): PyTorch before 0.4 records no
    graph for anything computed from it, 0.4 ignores the flag. Which one the code runs on is
    unknown, so the calls it feeds run with grad maybe off (see :meth:`Facts.fed_volatile`)."""
    return qualified in VARIABLE_CONSTRUCTORS and any(
        arg.keyword is not None and arg.keyword.value == "volatile"
        and not (isinstance(arg.value, cst.Name) and arg.value.value == "False") for arg in call.args)


def is_reference(node: cst.CSTNode) -> bool:
    """A value read as it is (``val``, ``out.logits``, ``stats["loss"]``), nothing computed."""
    while type(node) is _ATTRIBUTE or type(node) is cst.Subscript:
        node = node.value
    return type(node) is _NAME


def root_name(node: cst.BaseExpression) -> str | None:
    """The variable at the root of ``a.b[c].d`` (``a``), or None."""
    while True:
        if isinstance(node, cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        else:
            break
    return node.value if isinstance(node, cst.Name) else None


def storage_name(node: cst.BaseExpression) -> str | None:
    """Name of the place an expression refers to: ``losses``, ``self.outputs``,
    ``history`` for ``history["loss"]`` and ``history.setdefault("loss", [])``; None for
    anything else."""
    while True:
        if isinstance(node, cst.Subscript):
            node = node.value
        elif (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
              and node.func.attr.value in ("setdefault", "get") and node.args):
            node = node.func.value
        else:
            return dotted_name(node)


# Methods and builtins that hand out the elements of the collection they are given.
_ELEMENT_METHODS = frozenset({"pop", "popleft", "popitem", "values", "items", "get"})
_ELEMENT_FUNCTIONS = frozenset({"list", "tuple", "reversed", "enumerate", "sorted", "iter", "zip"})


def collection_name(node: cst.BaseExpression) -> str | None:
    """The collection an element (or a loop's elements) is taken from: ``handles`` for
    ``handles[0]``, ``handles.pop()``, ``list(handles)``; ``self.runs`` for
    ``self.runs.items()``, ``enumerate(self.runs)``; None when it is not a named collection."""
    for _ in range(4):
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in _ELEMENT_METHODS:
            node = node.func.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) \
                and node.func.value in _ELEMENT_FUNCTIONS and node.args:
            node = node.args[0].value
        else:
            break
    return dotted_name(node)


_NO_KEY = object()


def constant_key(node: cst.BaseExpression) -> "Key | None":
    """The key of ``d["loss"]`` / ``t[0]`` / ``t[-1]``: a string or an int literal; None otherwise."""
    node_type = type(node)
    if node_type is cst.SimpleString:
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if node_type is cst.Integer:
        return int(node.evaluated_value)
    if node_type is cst.UnaryOperation and isinstance(node.operator, cst.Minus) and type(node.expression) is cst.Integer:
        return -int(node.expression.evaluated_value)
    return None


# Calls that build a container in view: what is put in it is seen.
_CONTAINER_CONSTRUCTORS = frozenset({"dict", "list", "OrderedDict", "collections.OrderedDict", "defaultdict",
                                     "collections.defaultdict"})


def element_name(container: str, position: "int | str") -> str:
    """The name value-flow gives one element of a local sequence (``losses[0]``): backpropagating
    it says nothing of ``losses[1]``; backpropagating ``losses`` says it of every element."""
    return f"{container}[{position}]"


def subscript_key(node: cst.Subscript) -> "Key | None":
    """The constant key of a one-index subscript (``d["loss"]``), else None."""
    if len(node.slice) != 1:
        return None
    index = node.slice[0].slice
    return constant_key(index.value) if type(index) is cst.Index else None


def subscript_key_name(node: cst.Subscript) -> str | None:
    """The name a one-index subscript is indexed by (``optimizers[i]``: ``i``), else None."""
    if len(node.slice) != 1:
        return None
    index = node.slice[0].slice
    return index.value.value if type(index) is cst.Index and type(index.value) is cst.Name else None


_ELEMENT_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp)


def methods_of_class(node: cst.ClassDef) -> dict[str, cst.FunctionDef]:
    """The methods a class body defines, by name (the last definition of a name wins)."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return {item.name.value: item for item in body if isinstance(item, cst.FunctionDef)}


def place_of(node: cst.BaseExpression) -> str | None:
    """The place an expression names, as a string: ``losses``, ``self.history``, a slot of a
    constant key ``totals['loss']`` (also ``totals.get("loss", 0)``, ``h.setdefault("loss", [])``);
    None for anything else (``history[-1]`` is one element, not a place of its own)."""
    dotted = dotted_name(node)
    if dotted is not None:
        return dotted
    if type(node) is cst.Subscript:
        key = subscript_key(node)
        owner = place_of(node.value) if key is not None and isinstance(key, str) else None
        return f"{owner}[{key!r}]" if owner is not None else None
    if (type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in ("get", "setdefault")
            and node.args and node.args[0].keyword is None):
        key = constant_key(node.args[0].value)
        owner = place_of(node.func.value) if isinstance(key, str) else None
        return f"{owner}[{key!r}]" if owner is not None else None
    return None


def places_in(node: cst.CSTNode) -> set[str]:
    """The places an expression reads whole: ``losses`` in ``torch.stack(losses).mean()``,
    ``totals['loss']`` in ``totals["loss"] / n``; nothing of ``history`` in ``history[-1]``
    or ``losses[i]`` (one element of it)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        current_type = type(current)
        if current_type is _NAME or current_type is _ATTRIBUTE or current_type is cst.Subscript or (
            current_type is cst.Call and type(current.func) is _ATTRIBUTE
            and current.func.attr.value in ("get", "setdefault")
        ):
            place = place_of(current)
            if place is not None:
                found.add(place)
                if "." in place and "[" not in place:
                    found.add(place.split(".", 1)[0])
                continue
            if current_type is cst.Subscript:
                if place_of(current.value) is None:
                    stack.append(current.value)  # torch.stack(h)[-1]: an element of a computed value
                elif subscript_key(current) is None and all(
                        type(element.slice) is cst.Index for element in current.slice):
                    stack.append(current.value)  # losses[i]: any of them (a loop over all), not one
                continue
        if current_type in _NO_NAMES:
            continue
        stack.extend(expression_children(current))
    return found


_NO_NAMES = frozenset({cst.Lambda, cst.SimpleString, cst.Integer, cst.Float})


def names_in(node: cst.CSTNode) -> set[str]:
    """Every variable name and ``self.attr`` read in an expression (a small walk)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        current_type = type(current)
        if current_type is _NAME:
            found.add(current.value)
        elif current_type is _ATTRIBUTE:
            dotted = dotted_name(current)
            if dotted is not None:
                found.add(dotted)
                found.add(dotted.split(".", 1)[0])
                continue
            stack.append(current.value)
        elif current_type in _NO_NAMES:
            continue
        else:
            stack.extend(expression_children(current))
    return found


_SKIPPED_FIELDS = frozenset({
    "leading_lines", "lines_after_decorators", "header", "footer", "indent", "lpar", "rpar",
    "comma", "semicolon", "equal", "colon", "dot", "lbracket", "rbracket", "lbrace", "rbrace",
    "star", "trailing_whitespace", "operator", "asynchronous", "annotation", "returns",
    "whitespace_after_star", "whitespace_after_arg", "whitespace_before_args", "whitespace_after_func",
    "type_parameters", "encoding", "default_indent", "default_newline", "has_trailing_newline",
    "whitespace_after_value", "attr", "arrow", "whitespace_before", "whitespace_after",
})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(node_type: type) -> tuple[str, ...]:
    """The fields of a node type that hold code (not whitespace or punctuation)."""
    fields = _CHILD_FIELDS.get(node_type)
    if fields is None:
        fields = tuple(
            f.name for f in dataclasses.fields(node_type)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
        _CHILD_FIELDS[node_type] = fields
    return fields


# What a field value is, by its exact type (the walk's hot path: an ``isinstance`` against
# the ``CSTNode`` ABC costs several dict look-ups): 1 a node, 2 a tuple or list, 0 neither.
VALUE_KIND: dict[type, int] = {tuple: 2, list: 2, str: 0, type(None): 0, bool: 0}


def value_kind(value_type: type) -> int:
    """1 for a node type, 2 for tuple/list (exactly), 0 otherwise; cached in VALUE_KIND."""
    kind = VALUE_KIND.get(value_type)
    if kind is None:
        kind = 1 if issubclass(value_type, cst.CSTNode) else 2 if value_type in (tuple, list) else 0
        VALUE_KIND[value_type] = kind
    return kind


def block_statements(block: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    """An indented block's statements; a one-line suite (``if x: return y``) as itself."""
    return block.body if isinstance(block, cst.IndentedBlock) else (block,)


def nested_blocks(statement: cst.BaseStatement) -> list[Sequence[cst.BaseStatement]]:
    """The statement lists nested in a compound statement (bodies, else, except, finally)."""
    blocks = []
    for name in ("body", "orelse", "finalbody"):
        part = getattr(statement, name, None)
        if isinstance(part, cst.BaseSuite):
            blocks.append(block_statements(part))
        elif isinstance(part, (cst.Else, cst.Finally)):
            blocks.append(block_statements(part.body))
        elif isinstance(part, cst.If):  # elif: its body and its own else
            blocks.extend(nested_blocks(part))
    for handler in getattr(statement, "handlers", ()):
        blocks.append(block_statements(handler.body))
    for case in getattr(statement, "cases", ()):
        blocks.append(block_statements(case.body))
    return blocks


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and every node below it (statements and expressions; whitespace left out)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(expression_children(current))


def expression_children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    kinds = VALUE_KIND
    for name in child_fields(type(node)):
        value = getattr(node, name)
        kind = kinds.get(type(value))
        if kind is None:
            kind = value_kind(type(value))
        if kind == 1:
            yield value
        elif kind == 2:
            for item in value:
                item_kind = kinds.get(type(item))
                if item_kind == 1 or (item_kind is None and value_kind(type(item)) == 1):
                    yield item


class Facts:
    """The live state of the walk: scopes, loops, grad mode. Rules read it; the engine writes it."""

    def __init__(self, project=None, module_name: str = "", is_package: bool = False) -> None:
        # The project the module belongs to (memlint.static.project.Project), to resolve what
        # other modules define; None when the file is not on disk (a snippet).
        self.project = project
        self.module_name = module_name  # dotted (``pkg.sub.mod``); "" when unknown
        self.is_package = is_package
        self.imports = Imports()
        # Module-level code (scripts) is treated as one function body named "<module>".
        self.module_scope = FunctionScope(cst.Module(body=()), None, "<module>", None)
        self.scope: Scope = self.module_scope
        self.loops: list[Loop] = []
        # The grad mode of each nested region of the current function, innermost last; the
        # first is the function's entry mode. Read it through ``grad_mode`` / ``in_no_grad``.
        self.grad_modes: list[GradMode] = [GradMode.ON]
        # For each of those regions: did the code set the mode itself (a decorator, a grad-mode
        # ``with`` item, a ``set_grad_enabled`` statement), rather than keep the one around it?
        self.grad_mode_explicit: list[bool] = [False]
        self.classes: dict[str, ClassInfo] = {}
        # id() of the functions (def, not generators) walked so far whose every return value
        # is free of graph: ``accuracy(out, y)`` computed under no_grad or with .item().
        self.plain_functions: set[int] = set()
        # Names of the module's functions known to be plain before the walk reaches them.
        self.plain_names: set[str] = set()
        # function name -> its call sites in this module (see CallSite)
        self.call_sites: dict[str, list[CallSite]] = {}
        # calls into other modules with grad on and literal arguments (see ModuleSummary.literal_calls)
        self.literal_calls: dict[str, list[tuple[tuple["int | str", object], ...]]] = {}
        # file name -> does every ``torch.save`` of this module to a path ending in it write no
        # device tensor (see ModuleSummary.saved_files)
        self.saved_files: dict[str, bool] = {}
        self.frozen_modules: set[str] = set()  # names with requires_grad_(False) anywhere
        # Calls handing a module to a function (freeze(self.backbone)): see frozen_by_helpers
        self.modules_handed: list[tuple[cst.Call, "FunctionScope"]] = []
        # Methods called on a module (``self.ref_model.freeze_all()``): see frozen_by_their_methods
        self.module_methods_called: list[tuple[cst.Call, "FunctionScope"]] = []
        self._freezes_its_module: dict[int, bool] = {}  # id() of such a call -> see _method_freezes_its_module
        self._frozen_by_helpers: set[tuple[int, str]] | None = None
        # (class, attribute, reading function) -> does another method store a backpropagated value there
        self._stored_graphs: dict[tuple[int, str, int], bool] = {}
        # names bound to a grad-mode context (``ctx = torch.no_grad``), and its mode
        self.grad_mode_names: dict[str, GradMode] = {}
        self.branch_path: list[tuple[int, str]] = []  # the if-branches being walked
        self.module_node: cst.Module | None = None  # the module walked (set by the engine)
        self._constructors: dict[int, FunctionScope] = {}  # id(class info) -> its __init__'s scope, once walked
        self._fixed_names: set[str] | None = None
        self.if_nodes: dict[int, cst.If] = {}  # id() -> the ifs walked (branch_path names them by id)
        self.function_scopes: dict[int, FunctionScope] = {}  # id(def node) -> its scope
        # id(def node) -> what the method returns when ``self.training`` is False, for methods
        # whose returns depend on it (see FunctionSummary.eval_returns)
        self.eval_summaries: dict[int, GraphValue] = {}
        self.loop_of_node: dict[int, Loop] = {}  # id(for/while node) -> its Loop, once the walk enters it
        # What this module's functions return, in terms of their parameters (Facts.summary_form),
        # by id() of their ``def``; filled as the walk leaves each function.
        self.summaries: dict[int, GraphValue] = {}
        self.walking: set[int] = set()  # id() of the functions being walked (recursion)
        # Read before the walk, so that calls above a definition find it: top-level functions
        # (defined once) and classes with their methods and bases (as written, last part).
        self.module_functions: dict[str, cst.FunctionDef] = {}
        # Module-level dicts of this module's functions, called through a key (``_metric_dict[name](opts)``):
        # a literal ``{"fid": fid50k, ...}``, or filled by a decorator (``@register_metric``).
        self.registries: dict[str, list[cst.FunctionDef]] = {}
        self.class_nodes: dict[str, cst.ClassDef] = {}
        self.class_methods: dict[str, dict[str, cst.FunctionDef]] = {}
        self._project_defs: dict[str, bool] = {}  # name -> does the project define a function of that name
        self._star_sources: dict[str, str | None] = {}  # name -> the star-imported module defining it
        self._defined_methods: set[str] | None = None  # every method name a class of the module defines
        self.class_bases: dict[str, tuple[str, ...]] = {}
        self.deciding = False  # running a decision at a function's exit: resolve() may raise Pending
        self.module_done = False  # every function has been walked: every summary is known
        self._resolving: set["int | str"] = set()
        # Exporting this module's summary: calls into other modules stay pending (by name).
        self.exporting = False
        self.calls_into: dict[int, list[FunctionCall]] = {}  # id() of a def -> its calls in this module
        # id() of each top-level function and method -> its name in summaries ("f", "Class.m")
        self.definition_keys: dict[int, str] = {}
        self._definitions_by_key: dict[str, int] | None = None
        self._callees: dict[int, object] = {}  # id() of a call -> its callees (see callees())
        self._stores: dict[int, dict[str, Store]] = {}  # id() of a def -> what it stores (see stores_of())
        self._presume_passing = False  # see _unknown_result()

    # ----- questions rules ask -------------------------------------------------------------
    @property
    def function(self) -> FunctionScope:
        """The innermost enclosing function (lambdas included; the module at top level)."""
        scope: Scope | None = self.scope
        while scope is not None:
            if isinstance(scope, FunctionScope):
                return scope
            scope = scope.parent
        return self.module_scope

    @property
    def class_info(self) -> ClassInfo | None:
        function = self.function
        return function.class_info if function else None

    @property
    def loop(self) -> Loop | None:
        """The innermost loop of the current function (loops outside it do not count)."""
        if self.loops and self.loops[-1].scope is self.scope:
            return self.loops[-1]
        return None

    def loops_in_function(self) -> list[Loop]:
        return [loop for loop in self.loops if loop.scope is self.scope]

    @property
    def grad_mode(self) -> GradMode:
        """The grad mode here, whatever set it: a decorator, a ``with``, a ``set_grad_enabled``
        statement, Lightning's eval hooks, an enclosing region. (Functions only *called* under
        no-grad are known at the end of the module: the engine then drops their grad-dependent
        findings.)"""
        return self.grad_modes[-1]

    @property
    def in_no_grad(self) -> bool:
        """May grad be off here? ``MAYBE_OFF`` counts: the question a waste rule asks
        (precision first). A leak rule reads :meth:`graph_value`, or :attr:`grad_off`."""
        return self.grad_modes[-1].may_be_off

    @property
    def grad_off(self) -> bool:
        """Is grad certainly off here (no_grad, inference_mode, set_grad_enabled(False))?"""
        return self.grad_modes[-1] is GradMode.OFF

    @property
    def grad_mode_inherited(self) -> bool:
        """Is the mode here the callers' one, nothing in the function (a decorator, a grad-mode
        ``with``, a ``set_grad_enabled`` statement) having set it? Then a function only called
        under no-grad runs this code under no-grad too. (A ``with`` that keeps the mode, such
        as autocast, sets nothing.)"""
        return not any(self.grad_mode_explicit)

    def outlives_iteration(self, target: cst.BaseExpression) -> bool:
        """Does the place ``target`` names survive the current loop iteration? A name or an
        attribute (``self.x``, and subscripts of them) does unless it was (re)bound earlier in
        this iteration of the innermost loop (``self.loss = self._make_empty_loss()`` at its top)."""
        name = storage_name(target)
        if name is None:
            return False
        loop = self.loop
        if loop is None:
            return False
        return name not in loop.bound_this_iteration

    def outlived_loops(self, target: cst.BaseExpression) -> list[Loop]:
        """The loops of this function, innermost first, whose iteration the place ``target``
        names survives: those it was not (re)bound in, earlier in the iteration."""
        name = storage_name(target)
        if name is None:
            return []
        return [loop for loop in reversed(self.loops_in_function()) if name not in loop.bound_this_iteration]

    def project_stores(self, class_qualified: str, method: str, arguments: Iterable["str | int"]) -> dict:
        """What ``method`` of a class of another module of the project keeps of a call's
        arguments (by position or keyword): argument -> :class:`Store`, from its summary."""
        project = self.project
        owner = project.method_owner(class_qualified, method) if project is not None else None
        summary = project.function_summary(owner) if owner is not None else None
        definition = project.definition(class_qualified) if summary is not None else None
        outline = definition.class_outline.methods.get(method) if definition is not None else None
        if outline is None or not summary.stores:
            return {}
        stores = {entry[0]: Store(entry[0].lstrip("*"), entry[1], entry[2], partial=entry[3],
                                  partial_via=frozenset(entry[4]))
                  for entry in summary.stores}
        positional, named = outline.parameters(bound=True)
        found = {}
        for where in arguments:
            if isinstance(where, int):
                parameter = positional[where] if where < len(positional) else next(
                    (p for p in stores if p.startswith("*") and not p.startswith("**")), None)
            else:
                parameter = where if where in named else next((p for p in stores if p.startswith("**")), None)
            if parameter in stores:
                found[where] = stores[parameter]
        return found

    def bound_value(self, node: cst.BaseExpression) -> cst.CSTNode | None:
        """What a local name, or ``self.x`` of the current class (bound in any of its methods),
        was last bound to: ``torch.optim.Adam(...)`` for ``optD``, ``nn.LSTM(...)`` for ``self.rnn``."""
        name = dotted_name(node)
        if name is None:
            return None
        if name.startswith("self."):
            info = self.class_info
            binding = info.attributes.get(name) if info is not None else None
        elif "." not in name:
            binding = self.lookup(name)
        else:
            return None
        return binding.node if binding is not None else None

    def held_by_object(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """What a local name stands for when it was last bound to something the object holds
        (``meter = self.meter``: ``self.meter``); ``node`` itself otherwise."""
        if type(node) is _NAME:
            binding = self.lookup(node.value)
            bound = binding.node if binding is not None else None
            if bound is not None and (type(bound) is _ATTRIBUTE or type(bound) is cst.Subscript) \
                    and (storage_name(bound) or "").startswith("self."):
                return bound
        return node

    def outlives_call(self, target: cst.BaseExpression) -> bool:
        """Does the place survive the current function call (``self.x``, a global)?"""
        name = storage_name(target)
        if name is None:
            return False
        root = name.split(".", 1)[0]
        function = self.function
        if function is self.module_scope:
            return False
        if root in ("self", "cls"):
            return "." in name
        binding = function.bindings.get(root)
        if binding is not None:
            # stat = self.statistics[category]: an alias of what the object holds
            return (storage_name(binding.node) or "").startswith("self.") if isinstance(
                binding.node, (cst.Subscript, cst.Attribute)) else False
        return self.module_scope.lookup(root) is not None

    def mode_of(self, target: str) -> ModeChange | None:
        """The last mode change of ``target`` seen so far in this function (or module level)."""
        function = self.function
        changes = function.mode_changes
        here = tuple(self.branch_path)
        for change in reversed(changes):
            if change.target == target:
                if here[: len(change.branch_path)] != change.branch_path:
                    return None  # changed in a branch that may not have run: unknown mode
                return change if change.mode != REBOUND else None
        if target.startswith("self.") and function.class_info is not None and function.name != "__init__":
            return self.constructor_mode(target, function)
        return self._module_level_mode(target) if function is not self.module_scope else None

    def constructor_mode(self, target: str, function: "FunctionScope") -> ModeChange | None:
        """``self.model = model.eval()`` (or ``self.model.eval()``) in the ``__init__`` of the
        class of ``function``, unconditionally: the mode ``self.model`` has in the class's other
        methods, unless one of them (or other code) changes it — known at the end of the module,
        see :meth:`mode_changed_outside`."""
        info = function.class_info
        init = self._constructors.get(id(info))
        if init is None:
            init = next((scope for scope in self.function_scopes.values()
                         if scope.name == "__init__" and scope.class_info is info), None)
            if init is None:
                return None
            self._constructors[id(info)] = init
        for change in reversed(init.mode_changes):
            if change.target == target:
                return change if len(change.branch_path) <= init.branch_depth and change.mode != REBOUND else None
        return None

    def mode_changed_outside(self, target: str, change: ModeChange) -> bool:
        """Is ``target`` put in another mode (or rebound) anywhere but the function whose change
        ``change`` is? (Complete at the end of the module.)"""
        return any(other.target == target and other is not change and change not in scope.mode_changes
                   for scope in self.function_scopes.values() for other in scope.mode_changes)

    def _module_level_mode(self, target: str) -> ModeChange | None:
        """``model = Net(); model.eval()`` at module level, read in a function that uses the
        global ``model``: the last unconditional change made at module level. Whether another
        function changes it too is known only at the end (see :meth:`mode_changed_in_functions`)."""
        root = target.split(".", 1)[0]
        binding = self.lookup(root)
        if binding is None or self.module_scope.bindings.get(root) is not binding:
            return None  # a local (or a parameter) of that name
        for change in reversed(self.module_scope.mode_changes):
            if change.target == target:
                return change if not change.branch_path and change.mode != REBOUND else None
        return None

    def mode_changed_in_functions(self, target: str) -> bool:
        """Does any function of the module change the mode of the global ``target``? (Complete
        at the end of the module.)"""
        return any(change.target == target and scope is not self.module_scope
                   for scope in self.function_scopes.values() for change in scope.mode_changes)

    def qualified_name(self, node: cst.BaseExpression) -> str | None:
        qualified = self.imports.qualified_name(node)
        if qualified is None or not self.imports.star_modules:
            return qualified
        head, _, rest = qualified.partition(".")
        if head in self.imports.aliases:
            return qualified
        source = self._star_sources.get(head, "")
        if source == "":
            source = self._star_sources[head] = self._star_source(head)
        return f"{source}.{qualified}" if source is not None else qualified

    def _star_source(self, name: str) -> "str | None":
        """The star-imported module of the project that defines ``name`` (a function, a class,
        or a re-export of one), when this module does not bind it itself."""
        if self.project is None or name in self.module_functions or name in self.class_nodes \
                or name in self.module_scope.bindings:
            return None
        for module in self.imports.star_modules:
            if self.project.definition(f"{module}.{name}") is not None:
                return module
        return None

    def is_module_expr(self, node: cst.BaseExpression) -> bool:
        """Is ``node`` (a callee) an nn.Module, a loss object or the module itself (``self``)?"""
        if isinstance(node, cst.Call):  # model.to(device)(x), DDP(model)(x)
            return self.is_module_constructor(node)
        name = dotted_name(node)
        if name is None:
            return False
        if name == "self":
            info = self.class_info
            return bool(info and info.is_module)
        binding = self.lookup(name)
        if binding is not None:
            return binding.kind is Kind.MODULE
        if name.split(".", 1)[0] in self.imports.aliases:
            return False  # torch.Generator, np.random: imported names are not module variables
        if name in self.module_functions or name in self.class_nodes:
            return False  # test_model(net, loader): a function of this file, whatever its name
        if "." not in name and self.imports.star_modules and self.project_definition(
                self.qualified_name(node)) is not None:
            return False  # save_model(args, model) from ``from src.utils import *``: a function or class
        if name.startswith("self.") and name.count(".") == 1:
            info = self.class_info
            if info is not None and self.methods_of(info.name, name[5:]):
                return False  # self.eval_model(...): a method
        last = name.rsplit(".", 1)[-1]
        if last in ("forward", "module"):
            owner = name.rsplit(".", 1)[0]
            return owner != name and self.is_module_expr(_name_expr(owner))
        if "." in name and self.class_nodes:
            owner_class = self.instance_class_name(_name_expr(name.rsplit(".", 1)[0]))
            if owner_class is not None and self.methods_of(owner_class, last):
                return False  # self.learner.update_model(x): a method of a class of this file
        # build_model / get_model / load_model are factories: calling one returns a module
        if not names_a_module_object(last):
            return False
        if "." in name and last.lower() not in MODULE_NAME_WORDS and self._names_a_def(last):
            return False  # board.select_teacher(model): a function the project defines, not a module
        if "." in name and self._owner_is_plain(name.rsplit(".", 1)[0]):
            return False  # accelerator.unwrap_model(model): a method of an object that is no module
        return True

    def _owner_is_plain(self, owner: str) -> bool:
        """Was ``owner`` built by a class known not to be a module (and to have no unknown base):
        ``accelerator = Accelerator()``, a Lightning ``Trainer``, a plain class of the project?"""
        qualified = self.constructed_by(_name_expr(owner))
        if qualified is None:
            return False
        if qualified in self.classes:
            kinds = self.classes[qualified].kinds
        else:
            definition = self.project_definition(qualified)
            if definition is not None:
                if definition.kind != "class":
                    return False
                kinds = self.project.class_kinds(definition.qualified)
            elif qualified.split(".", 1)[0] in self.imports.aliases or "." in qualified:
                kinds = external_kinds(qualified)
            else:
                return False
        return not (kinds.module or kinds.lightning or kinds.unknown_base)

    @property
    def defined_methods(self) -> set[str]:
        """Every method name a class of this module defines (known before the walk)."""
        if self._defined_methods is None:
            self._defined_methods = {method for methods in self.class_methods.values() for method in methods}
        return self._defined_methods

    def _names_a_def(self, name: str) -> bool:
        """Does this module define a method or function ``name``, or another module of the
        project a ``def name``? Read from the project's text (cached per name)."""
        if name in self.defined_methods or name in self.module_functions:
            return True
        known = self._project_defs.get(name)
        if known is None:
            found = self.project.modules_mentioning(f"def {name}") if self.project is not None else None
            known = self._project_defs[name] = bool(found)
        return known

    def holds_a_tensor_made_here(self, node: cst.BaseExpression) -> bool:
        """Is ``node`` a name of this function bound to a tensor it allocated (``torch.zeros(...)``,
        ``torch.empty_like(x)``, ``x.new_zeros(...)``) or a numpy array (``np.zeros(n)``): writes into
        it overwrite its slots."""
        binding = self.lookup(node.value) if type(node) is _NAME else None
        value = binding.node if binding is not None else None
        for _ in range(3):
            value = without_self_returning_calls(value)  # torch.zeros(...).float().to(device)
            if type(value) is cst.BinaryOperation and type(value.right) in (cst.Integer, cst.Float, cst.UnaryOperation):
                value = value.left  # torch.ones(n, dtype=torch.long) * -1: a new tensor all the same
            elif type(value) is _NAME and value.value == node.value and binding is not None:
                value = self._stored_before(node.value, binding.node)  # labels = labels.cuda(gpu)
            else:
                break
        if type(value) is not cst.Call:
            return False
        qualified = self.qualified_name(value.func) or ""
        if type(value.func) is _ATTRIBUTE and value.func.attr.value in _ALLOCATING_METHODS:
            return True
        return qualified in _ALLOCATING_FUNCTIONS

    def is_module_output(self, node: cst.BaseExpression) -> bool:
        """Is ``node`` (a name, or a part of one) bound to what a module call returned
        (``actions, new_memories = self.actor(obs, memories)``: ``new_memories``)?"""
        while type(node) is cst.Subscript:
            node = node.value
        binding = self.lookup(node.value) if type(node) is _NAME else None
        value = binding.node if binding is not None else None
        return type(value) is cst.Call and self.is_module_expr(value.func) and not self.is_module_constructor(value)

    def outputs_unknown_after_first(self, call: cst.Call) -> bool:
        """Is ``call`` a module call whose outputs after the first are unknown: a loss module
        (``criterion(model, sample)`` returns the loss first), or any module whose ``forward``
        memlint cannot read? (torch.nn's own modules return tensors throughout.)"""
        if not self.is_module_expr(call.func) or self.is_module_constructor(call):
            return False
        if self.is_loss_module_call(call):
            return True
        dotted = dotted_name(call.func)
        binding = self.lookup(dotted) if dotted is not None else None
        built = binding.node if binding is not None else None
        built = without_self_returning_calls(built)
        if type(built) is cst.Call:
            qualified = self.qualified_name(built.func) or ""
            if qualified.startswith("torch.nn.") and not qualified.startswith("torch.nn.parallel"):
                return False  # nn.LSTM, nn.GRU, nn.MultiheadAttention: tensors throughout
        return True

    def _frozen_where_called(self, module: cst.BaseExpression) -> bool:
        """Was this module frozen (``requires_grad_(False)``) where the name means the same
        object: an attribute (``self.model``) or a global anywhere in the module, a local in
        this function or one it is nested in (``get_reward`` inside the function that froze
        ``reward_model``)? Not a same-named local of another function."""
        name = dotted_name(module)
        if name is None or name not in self.frozen_modules:
            return False
        if "." in name or (self.module_scope.lookup(name) is not None and name not in self.function.bindings):
            return True
        scope = self.function
        while isinstance(scope, FunctionScope):
            if any(change.target == name and change.mode == "frozen" for change in scope.mode_changes):
                return True
            scope = scope.parent
        return False

    def _later_output(self, node: cst.Subscript) -> GraphValue | None:
        """``loss_tuple[1:]`` / ``losses[2]`` of a name bound to a call of a loss module whose
        forward memlint cannot read (the loss first, then logging values): unknown, decided by
        their own use, not by the first output's backward pass."""
        if type(node.value) is not _NAME or len(node.slice) != 1:
            return None
        index = node.slice[0].slice
        if type(index) is cst.Index:
            position = constant_key(index.value)
        elif type(index) is cst.Slice and index.lower is not None:
            position = constant_key(index.lower)
        else:
            return None
        if type(position) is not int or position < 1:
            return None
        binding = self.lookup(node.value.value)
        bound = binding.node if binding is not None else None
        if type(bound) is not cst.Call or not self.is_loss_module_call(bound):
            return None
        return GraphValue(Graph.UNKNOWN, frozenset({element_name(node.value.value, position)}))

    def is_loss_module_call(self, call: cst.Call) -> bool:
        """A loss module called (``criterion(model, sample)``, ``loss_fn(out, y)`` with
        ``loss_fn = nn.CrossEntropyLoss()``), not one of this file: its first output is the
        loss; what else it returns (a sample size, a logging dict) is unknown."""
        if not self.is_module_expr(call.func):
            return False
        if type(call.func) is cst.Call:  # CrossEntropyLoss(ignore_index=-1)(logits, labels)
            built = (self.qualified_name(call.func.func) or "").rsplit(".", 1)[-1]
            return built.endswith(("Loss", "Criterion")) and built not in self.class_nodes
        name = dotted_name(call.func)
        if name is None:
            return False
        binding = self.lookup(name)
        node = getattr(binding, "node", None)
        if isinstance(node, cst.Call):
            built = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
            if built in self.class_nodes or self.project_instance_class(call.func) is not None:
                return False  # its forward is in view (in this module or another of the project)
            if built.endswith(("Loss", "Criterion")):
                return True
        last = name.rsplit(".", 1)[-1].lower()
        return last in _LOSS_MODULE_NAMES or last.endswith(("_criterion", "_loss_fn", "_loss_func", "criterion"))

    def is_parameterless_torch_module(self, module: cst.BaseExpression) -> bool:
        """Is ``module`` an instance of a torch.nn class that owns no parameter (a loss, an
        activation, a pooling: ``criterion = nn.MSELoss()``, ``nn.ReLU()(x)``), built where it is
        called or bound once in view?"""
        if type(module) is cst.Call:
            built = module
        else:
            name = dotted_name(module)
            binding = self.lookup(name) if name is not None else None
            built = getattr(binding, "node", None)
        return type(built) is cst.Call and self.qualified_name(built.func) in PARAMETERLESS_LAYERS

    def is_module_constructor(self, call: cst.Call) -> bool:
        """Does this call build (or wrap) an nn.Module?"""
        qualified = self.qualified_name(call.func)
        if qualified is None:
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("to", "cuda", "cpu", "train", "eval", "half", "float", "double", "bfloat16"):
                return self.is_module_expr(call.func.value)
            return False
        last = qualified.rsplit(".", 1)[-1]
        if qualified.startswith("torch.nn.") and last[:1].isupper() and not qualified.startswith("torch.nn.functional"):
            return last not in ("Parameter", "ParameterList", "ParameterDict")
        if qualified in self.classes:
            return self.classes[qualified].is_module
        definition = self.project_definition(qualified)
        if definition is not None:
            return definition.kind == "class" and self.project.class_kinds(definition.qualified).module
        if qualified.endswith(MODULE_FACTORY_SUFFIXES):
            # AutoTokenizer.from_pretrained, AutoConfig..., a processor: loaded the same way, not modules
            return not (qualified.endswith(".from_pretrained") and _NOT_MODULE_CLASS.search(qualified.rsplit(".", 2)[-2]))
        if qualified.startswith("torchvision.models.") or qualified.startswith("timm.models."):
            return True
        if last in ("DistributedDataParallel", "DataParallel", "FullyShardedDataParallel", "DDP", "FSDP"):
            return True
        if isinstance(call.func, cst.Attribute) and last in ("to", "cuda", "cpu", "half", "float", "double", "bfloat16"):
            return self.is_module_expr(call.func.value)
        return False

    # ----- what the module's own functions and classes do ----------------------------------
    def find_method(self, info: ClassInfo, name: str, depth: int = 0) -> FunctionScope | None:
        """The method ``name`` of a class of this module, from the class or its bases here."""
        method = info.methods.get(name)
        if method is not None or depth > 5:
            return method
        for base in info.base_names:
            parent = self.classes.get(base.rsplit(".", 1)[-1])
            if parent is not None and parent is not info:
                method = self.find_method(parent, name, depth + 1)
                if method is not None:
                    return method
        return None

    def instance_class(self, node: cst.CSTNode | None, scope: Scope | None = None) -> ClassInfo | None:
        """The class of this module that ``node`` builds: ``X(...)``, ``X(...).to(device)``,
        or a name bound to one (looked up in ``scope``, the current scope by default)."""
        for _ in range(3):
            if isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda", "cpu", "eval", "train"):
                    node = func.value
                    continue
                name = dotted_name(func)
                return self.classes.get(name.rsplit(".", 1)[-1]) if name else None
            if isinstance(node, cst.Name):
                binding = (scope or self.scope).lookup(node.value)
                node = binding.node if binding is not None else None
                continue
            return None
        return None

    def callee_scopes(self, callee: str, function: FunctionScope) -> list[FunctionScope]:
        """The functions of this module that a call named ``callee`` in ``function`` runs."""
        parts = callee.split(".")
        info = function.class_info
        if parts[0] == "self" and info is not None:
            if len(parts) == 2:
                method = self.find_method(info, parts[1])
                return [method] if method is not None else []
            if len(parts) == 3:  # self.helper.release(): the class self.helper was built from
                binding = info.attributes.get(f"self.{parts[1]}")
                held = self.instance_class(binding.node, function) if binding is not None else None
                method = self.find_method(held, parts[2]) if held is not None else None
                return [method] if method is not None else []
            return []
        if len(parts) == 2 and parts[0] in function.bindings:  # cam.release(), cam = GradCAM(...)
            held = self.instance_class(cst.Name(parts[0]), function)
            method = self.find_method(held, parts[1]) if held is not None else None
            return [method] if method is not None else []
        if len(parts) == 1:
            cls = self.classes.get(callee)
            if cls is not None:
                init = self.find_method(cls, "__init__")
                return [init] if init is not None else []
            # a function nested in this one or in an enclosing one (a recursive helper defined
            # where it is used), else one of the module
            binding = function.lookup(callee) or self.module_scope.bindings.get(callee)
            scope = self.function_scopes.get(id(binding.node)) if binding is not None else None
            return [scope] if scope is not None else []
        return []

    def calls_made(self, function: FunctionScope, depth: int = 3) -> set[str]:
        """What ``function`` calls, directly or through this module's own code (up to
        ``depth`` calls deep): ``self.m()`` (its class's method, bases of this module included),
        ``X(...)`` of a class of this module (its ``__init__``), ``self.attr.m()`` where
        ``self.attr`` holds such an object, and module-level functions. Names as in
        :attr:`FunctionScope.callees`; complete once the module has been walked."""
        seen: set[int] = set()
        found: set[str] = set()
        stack = [(function, depth)]
        while stack:
            current, left = stack.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            found |= current.callees
            if left:
                for callee in current.callees:
                    stack.extend((scope, left - 1) for scope in self.callee_scopes(callee, current))
        return found

    def lookup(self, name: str) -> Binding | None:
        if name.startswith("self.") or name.startswith("cls."):
            info = self.class_info
            if info is None:
                return None
            found = info.attributes.get(name)
            if found is None and info.name in self.class_bases:
                for base in self.local_ancestors(info.name):  # set in a base class of this file
                    base_info = self.classes.get(base)
                    if base_info is not None and name in base_info.attributes:
                        return base_info.attributes[name]
            return found
        if "." in name:
            return None
        return self.scope.lookup(name)

    def fed_volatile(self, call: cst.Call) -> bool:
        """Is an argument of ``call`` a volatile ``Variable``, built in the call or computed in
        this function from a name bound to one (``data = Variable(data, volatile=True)``, then
        ``model(data)``, ``decoder(encoder(data))``)? Legacy code's no-grad: see
        :func:`is_volatile_variable`."""
        for arg in call.args:
            if any(isinstance(node, cst.Call) and is_volatile_variable(node, self.qualified_name(node.func))
                   for node in descendants(arg.value)):
                return True
        function = self.function
        return function is not None and bool(function.volatile_names) and function.derives_from(
            {name for arg in call.args for name in names_in(arg.value)}, function.volatile_names)

    def graph_value(self, node: cst.BaseExpression) -> GraphValue:
        """Does ``node`` carry an autograd graph here? (See :class:`Graph`.) Nothing does with
        grad off; with grad maybe off (``set_grad_enabled(flag)``) a value that would carry one
        is UNKNOWN, settled later by what the function backpropagates."""
        return self.in_grad_mode(self._graph(node), node)

    def in_grad_mode(self, value: GraphValue, node: cst.CSTNode) -> GraphValue:
        """``value`` (computed from ``node``) as the grad mode here leaves it: nothing with grad
        off; with grad maybe off, what would carry a graph is UNKNOWN (part by part)."""
        mode = self.grad_modes[-1]
        if mode is not GradMode.ON and is_reference(node):
            return value  # a tensor read as it is keeps the graph it was made with
        if mode is GradMode.OFF:
            return NO_GRAPH
        if mode is GradMode.MAYBE_OFF and value.state is Graph.CARRIES:
            if value.parts is not None:
                return GraphValue.container((key, self.in_grad_mode(part, node)) for key, part in value.parts)
            return GraphValue(Graph.UNKNOWN, value.names | names_in(node), None, value.pending, Graph.UNKNOWN)
        return value

    def is_graph_carrying(self, value: GraphValue, function: "FunctionScope | None" = None) -> bool:
        """Decide an UNKNOWN value with what the function backpropagates (call at scope exit;
        ``function``: the function the value was computed in, when deciding at module exit).
        A value holding the result of a function of this module is resolved with that
        function's summary first (see :meth:`resolve`)."""
        value = self.resolve(value)
        if value.state is Graph.CARRIES:
            return True
        if value.state is Graph.UNKNOWN:
            function = function or self.function
            # Names that turned out to hold a callable or a module (clf(x), net.parameters())
            # carry no graph themselves, whatever flows from them into a backward pass.
            names = {name for name in value.names if not _holds_callable(function.lookup(name))
                     and name not in ("self", "cls") and not self._names_a_method(name, function)
                     and name not in function.counts}
            if function and function.is_backpropagated(names):
                return True
            return self.stored_backpropagated(names, function)
        return False

    def graph_presumed(self, value: GraphValue, function: "FunctionScope | None" = None) -> bool:
        """Is ``value`` graph-carrying (see :meth:`is_graph_carrying`) only because what it was
        computed from flows into a backward pass: unknown, none of its names backpropagated
        itself nor computed from what is? That link is presumed, not shown (an index, a batch or
        a label reaches a loss as well as an output does): a finding built on it is a warning."""
        value = self.resolve(value)
        if value.state is not Graph.UNKNOWN or not value.names:
            return False
        function = function or self.function
        if function is None:
            return False
        names = {name for name in value.names if name not in ("self", "cls")}
        backpropagated = set(function.backward_names)
        if names & backpropagated or any(name.split("[", 1)[0] in backpropagated for name in names):
            return False  # backward() on it: it carries a graph
        if function.derives_from(names, backpropagated):
            return False  # computed from what is backpropagated (total += 2 * loss)
        return not self.stored_backpropagated(names, function)

    def stored_backpropagated(self, names: set[str], function: "FunctionScope | None") -> bool:
        """Does one of ``names`` (``self.batch_loss``) name an attribute that a method of the
        class sets to a value that very method backpropagates (``self.batch_loss = loss`` after
        ``loss.backward()``)? The attribute then holds a graph-carrying tensor wherever it is read."""
        info = function.class_info if function is not None else None
        if info is None:
            return False
        for name in names:
            if not name.startswith("self.") or name.count(".") != 1:
                continue
            key = (id(info), name, id(function))
            found = self._stored_graphs.get(key)
            if found is None:
                found = self._stored_graphs[key] = any(
                    method.is_backpropagated(sources)
                    for method in info.methods.values() if method is not function
                    for stored in method.stored_values.get(name, ())
                    if (sources := self.graph_names_in(stored) - {"self", "cls"}))
            if found:
                return True
        return False

    def _names_a_method(self, name: str, function: "FunctionScope | None") -> bool:
        """``self.forward_step``: a method of the function's class, called, not data. (What two
        results of one call were computed from is shared; the method is not what carries a graph.)"""
        if function is None or function.class_info is None or not name.startswith("self.") or name.count(".") != 1:
            return False
        return name[5:] in self.class_methods.get(function.class_info.name, {})

    def graph_names_in(self, node: cst.CSTNode) -> set[str]:
        """The names (as :func:`names_in` gives them) a value's graph can come from: not the
        arguments of functions returning plain values or fresh tensors (``torch.zeros(shape)``,
        ``len(x)``), receivers of graph-ending methods (``x.size(0)``, ``x.item()``), graph-ending
        attributes (``x.shape``), subscript indices, comparisons."""
        found: set[str] = set()
        stack = [node]
        while stack:
            current = stack.pop()
            current_type = type(current)
            if current_type is _NAME:
                found.add(current.value)
            elif current_type is _ATTRIBUTE:
                if current.attr.value in GRAPH_ENDING_ATTRIBUTES:
                    continue
                dotted = dotted_name(current)
                if dotted is not None:
                    found.add(dotted)
                    found.add(dotted.split(".", 1)[0])
                else:
                    stack.append(current.value)
            elif current_type is cst.Call:
                func = current.func
                if type(func) is _ATTRIBUTE and func.attr.value in GRAPH_ENDING_METHODS:
                    continue
                qualified = self.qualified_name(func)
                if type(func) is _ATTRIBUTE and func.attr.value in _SHAPE_ARGUMENT_METHODS:
                    if qualified is not None and qualified.startswith("torch.") and qualified.count(".") == 1:
                        # torch.squeeze(x, 0): the tensor is the first argument, the rest are dims
                        stack.extend(arg.value for arg in current.args[:1] if arg.keyword is None)
                    else:
                        stack.append(func.value)  # out.view(c.n, -1): sizes and dims carry no graph
                    continue
                if qualified == "torch.autograd.grad" and not _creates_graph(current):
                    continue  # gradients without create_graph: plain tensors
                if qualified is not None and qualified not in _PASSING_ELEMENTS and (
                        qualified in GRAPH_ENDING_FUNCTIONS or qualified.startswith(
                            ("math.", "numpy.", "np.", "time.", "os.", "json.", "random.", "logging."))):
                    continue
                stack.append(func)
                passed_on = self._arguments_passed_on(current)
                stack.extend(passed_on if passed_on is not None else (arg.value for arg in current.args))
            elif current_type is cst.Subscript:
                key = subscript_key(current)
                if type(key) is int and type(current.value) is _NAME:
                    found.add(element_name(current.value.value, key))
                else:
                    stack.append(current.value)
            elif current_type in _NO_NAMES or current_type is cst.Comparison:
                continue
            elif current_type is cst.BinaryOperation and type(current.operator) in _SCALING_OPERATORS:
                stack.extend(self._graph_factors(current))
            else:
                stack.extend(expression_children(current))
        return found

    def _graph_factors(self, product: cst.BinaryOperation) -> list[cst.BaseExpression]:
        """The factors of ``a * b`` (or ``a / b``) a graph can come from. Beside a factor that
        provably carries a graph, the other is a coefficient (``-log_prob * (reward - baseline)``,
        ``loss / n``): that it reaches a backward pass is no evidence that it carries a graph."""
        left = self.graph_value(product.left).state is Graph.CARRIES
        right = self.graph_value(product.right).state is Graph.CARRIES
        if left and not right:
            return [product.left]
        if right and not left:
            return [product.right]
        return [product.left, product.right]

    def _arguments_passed_on(self, call: cst.Call) -> "list[cst.BaseExpression] | None":
        """The arguments of a call of this module's functions that their summaries say the result
        may carry a graph from (``loader.next_batch(args.batch_size)``: none, when the method
        returns slices of its own tokens); None when that is not known (not this module's, not
        summarised yet, starred arguments)."""
        if not self.summaries or any(arg.star for arg in call.args):
            return None
        callees = self.callees(call)
        if callees is None:
            return None
        carried: set[str] = set()
        for callee in callees[0]:
            summary = self.summaries.get(id(callee))
            if summary is None:
                return None
            if summary.pending:
                names = _all_names_with_pending(summary)
                if names is None or OPAQUE in names:
                    return None  # what the calls not resolved yet make of it is not known
            else:
                names = _all_names(summary)
            carried |= names  # (OPAQUE: unknown for a reason other than the arguments)
        positional = _parameters(callees[0][0], callees[1])[0] if len(callees[0]) == 1 else None
        if positional is None:
            return None
        kept, index = [], 0
        for arg in call.args:
            if arg.keyword is not None:
                name = arg.keyword.value
            elif index < len(positional):
                name, index = positional[index], index + 1
            else:
                return None
            if name in carried:
                kept.append(arg.value)
        return kept

    def parameters_carried(self, value: cst.BaseExpression) -> tuple[frozenset[str], bool, frozenset[str]]:
        """The parameters of the current function whose graph ``value`` may carry here, as its
        summary form says (``val * n``: val and n; ``val.item() * n``: n; ``v`` of
        ``for k, v in stats.items()``: stats; ``v.detach()``: none); whether on some paths only
        (see GraphValue.partial); and the functions of other modules the value passes through
        (see Store.partial_via)."""
        function = self.function
        if not function.parameters:
            return frozenset(), False, frozenset()
        self._presume_passing = True
        try:
            graph = self.graph_value(value)
        finally:
            self._presume_passing = False
        if graph.state is not Graph.UNKNOWN:
            return frozenset(), False, frozenset()
        form = self.summary_form(graph, function)
        via = frozenset(call.callee for call in form.pending if isinstance(call.callee, str))
        return frozenset(form.names - {OPAQUE}), form.partial, via

    def store_on_some_paths(self, store: Store) -> bool:
        """Does ``store`` keep its parameter's graph on some paths only: by its own statement, or
        through a function of another module whose summary returns its graph so?"""
        if store.partial:
            return True
        project = self.project
        if project is None or self.exporting:
            return False
        for callee in store.partial_via:
            function = project.function_summary(callee)
            if function is not None and function.returns.partial:
                return True
        return False

    def stores_of(self, function: FunctionScope) -> dict[str, Store]:
        """What a method of this module keeps of its parameters in its object, parameter ->
        :class:`Store`: its own statements (``self.sum += val * n``, ``self.history.append(v)``)
        and the methods it calls on ``self`` or on objects ``self`` holds that do
        (``self.meters[k].update(v)`` with a meter class of this module). Complete once the
        module has been walked."""
        return self._stores_of(function, frozenset())

    def _stores_of(self, function: FunctionScope, seen: frozenset[int]) -> dict[str, Store]:
        key = id(function.node)
        cached = self._stores.get(key)
        if cached is not None:
            return cached
        found: dict[str, Store] = {}
        for store in function.self_stores:
            found.setdefault(store.parameter, store)
        if key not in seen and len(seen) < 6:
            for forward in function.forwards:
                for callee in self._forward_callees(forward, function):
                    inner = self._stores_of(callee, seen | {key})
                    for where, parameters in forward.arguments:
                        name = parameter_for(callee, where)
                        store = inner.get(name) if name is not None else None
                        if store is None:
                            continue
                        for parameter in parameters:
                            found.setdefault(parameter, Store(
                                parameter, store.attribute if forward.holder == "self" else forward.holder,
                                store.appends, forwarded=store.forwarded or forward.holder != "self",
                                partial=store.partial or parameter in forward.partial,
                                partial_via=store.partial_via))
        if not seen:
            self._stores[key] = found
        return found

    def _forward_callees(self, forward: Forward, function: FunctionScope) -> list[FunctionScope]:
        class_name = self.held_class(forward.receiver, function)
        if class_name is None:
            return []
        scopes = (self.function_scopes.get(id(node)) for node in self.methods_of(class_name, forward.method))
        return [scope for scope in scopes if scope is not None]

    def held_class(self, receiver: cst.BaseExpression, function: FunctionScope) -> str | None:
        """The class of this module of an object ``self`` is or holds: ``self`` itself,
        ``self.meter`` bound to ``Meter()``, an element of ``self.meters`` (a
        ``defaultdict(Meter)``, or a container the methods fill with one class's objects:
        ``self.stats[k] = OrderedDict({n: Meter() for n in names})``)."""
        info = function.class_info
        if info is None:
            return None
        name = storage_name(receiver)
        if name == "self":
            return info.name if info.name in self.class_nodes else None
        if name is None or not name.startswith("self."):
            return None
        if type(receiver) is cst.Call:  # self.meters.setdefault(k, Meter())
            return self.instance_class_name(receiver)
        binding = info.attributes.get(name)
        node = binding.node if binding is not None else None
        if type(receiver) is not cst.Subscript:
            return self._constructed_class(node)
        classes = {self._element_class(node)} if node is not None else set()
        for method in info.methods.values():
            classes |= {self._element_class(value) or self._constructed_class(value)
                        for value in method.stored_values.get(name, ())}
        classes.discard(None)
        return classes.pop() if len(classes) == 1 else None

    # ----- what calls of this module's functions return ---------------------------------------
    def resolve(self, value: GraphValue) -> GraphValue:
        """``value`` with the results of calls of this module's functions filled in from their
        summaries. Raises :class:`Pending` while deciding at a function's exit if a summary
        is not known yet (the engine then decides again at the end of the module)."""
        if not value.pending:
            return value
        if value.parts is not None:
            return GraphValue.container((key, self.resolve(part)) for key, part in value.parts).with_names(value.names)
        calls = [self._resolve_call(call) for call in value.pending]
        if value.settled is Graph.NONE and not value.names:
            # nothing but what the calls return (``return _batch_loss(...)`` in each branch):
            # their results as alternatives, keeping a tuple's parts for the caller's unpacking
            resolved = calls[0]
            for other in calls[1:]:
                resolved = resolved.join(other)
        else:
            resolved = GraphValue.combine([GraphValue(value.settled, value.names), *calls])
        return resolved.on_some_paths() if value.partial else resolved

    def _resolve_call(self, call: "PendingCall") -> GraphValue:
        if isinstance(call.callee, str):
            return self._resolve_project_call(call)
        if isinstance(call.callee, ParameterMethod):
            return self._resolve_parameter_method(call)
        summary = self.summaries.get(call.callee)
        if summary is None or call.callee in self._resolving:
            if summary is None and self.deciding and not self.module_done:
                raise Pending
            return UNKNOWN_VALUE  # a recursive call, or a function never walked (a lambda)
        if call.eval_mode:
            summary = self.eval_summaries.get(call.callee, summary)
        return self._call_returns(call, summary)

    def _resolve_parameter_method(self, call: "PendingCall") -> GraphValue:
        """``model.predict(x)`` on a parameter: the summary of ``predict`` of the one class
        of this module the function's callers in view pass (the call's fallback otherwise). The
        callers are all known only at the end of the module."""
        target = call.callee
        if not self.module_done:
            if self.deciding:
                raise Pending
            return target.fallback
        scope = self.function_scopes.get(target.function)
        class_name = self.parameter_class(scope, target.parameter) if scope is not None else None
        methods = self.methods_of(class_name, target.method) if class_name is not None else []
        if len(methods) != 1 or call.callee in self._resolving:
            return target.fallback
        positional, _ = _parameters(methods[0], bound=True)
        arguments = {}
        for key, value in call.arguments:
            if key.startswith("#"):
                index = int(key[1:])
                if index < len(positional):
                    arguments[positional[index]] = value
            else:
                arguments[key] = value
        self._resolving.add(call.callee)
        try:
            return self._resolve_call(PendingCall(id(methods[0]), tuple(sorted(arguments.items())), call.starred,
                                                  path=call.path))
        finally:
            self._resolving.discard(call.callee)

    def _parameter_method_call(self, call: cst.Call, fallback: GraphValue) -> "GraphValue | None":
        """``model.predict(x)`` where ``model`` is a parameter of the function (not rebound) and
        a class of this module defines ``predict``: a pending call, resolved through the class
        the callers pass (see :meth:`_resolve_parameter_method`)."""
        if not self.on_a_parameter(call):
            return None
        function = self.function
        receiver, method = call.func.value.value, call.func.attr.value
        arguments: dict[str, GraphValue] = {}
        index = 0
        for arg in call.args:
            if arg.star:
                continue
            if arg.keyword is not None:
                arguments[arg.keyword.value] = self._graph(arg.value)
            else:
                arguments[f"#{index}"] = self._graph(arg.value)
                index += 1
        return GraphValue.pending_call(PendingCall(
            ParameterMethod(id(function.node), receiver, method, fallback), tuple(sorted(arguments.items())),
            any(arg.star for arg in call.args)))

    def _resolve_project_call(self, call: "PendingCall") -> GraphValue:
        """A call of a function of another module of the project: its summary's return value,
        with the call's arguments put in (unknown when the project cannot tell)."""
        if self.exporting:
            return GraphValue.pending_call(call)
        function = self.project.function_summary(call.callee) if self.project is not None else None
        if function is None or call.callee in self._resolving:
            return UNKNOWN_VALUE
        returns = function.eval_returns if call.eval_mode and function.eval_returns is not None else function.returns
        return self._call_returns(call, returns)

    def _call_returns(self, call: "PendingCall", returns: GraphValue) -> GraphValue:
        """What ``call`` gets back from a function whose summary says it returns ``returns``
        (in terms of its parameters): the call's arguments put in, a module's output floored to
        a graph, the part the call's result was unpacked into."""
        self._resolving.add(call.callee)
        try:
            result = self.resolve(_instantiate(returns, dict(call.arguments), call.starred))
        finally:
            self._resolving.discard(call.callee)
        if call.module_call:
            result = _floored(result)
        for key in call.path:
            part = result.part(key)
            result = part if part is not None else result.element
        return result

    def effect_through_project(self, effect: str) -> bool | None:
        """Does this module's code call, into another module of the project, a function that
        does ``effect`` (see :mod:`memlint.static.summaries`), or one that calls such a
        function? True; False when every such call was read; None when one could not be."""
        if self.project is None:
            return False
        own = f"{self.module_name}:"
        unknown = False
        for scope in (self.module_scope, *self.function_scopes.values()):
            for key in scope.call_keys:
                if key.startswith(own):
                    continue  # this module's own functions: walked here
                found = self.project.has_effect(key, effect)
                if found:
                    return True
                unknown |= found is None
        return None if unknown else False

    def effect_in_callers(self, function: "FunctionScope", effect: str) -> bool | None:
        """Do the other modules of the project that may call ``function`` (they import this
        module and name the function) do ``effect`` anywhere? True, False, or None (unknown)."""
        if self.project is None or not self.module_name or function is self.module_scope:
            return False
        leaf = self.module_name.rsplit(".", 1)[-1]
        importers = self.project.modules_mentioning(leaf)
        if importers is None:
            return None
        # a constructor is called by its class's name (``Trainer(params)``)
        called_as = function.class_info.name if function.name == "__init__" and function.class_info is not None \
            else function.name
        unknown = False
        for module in importers:
            if module.name == self.module_name:
                continue
            callers = self.project.modules_mentioning_in(module, called_as)
            if not callers:
                continue
            summary = self.project.summary(module)
            if summary is None:
                unknown = True
                continue
            for key, other in summary.functions.items():
                if effect in other.effects:
                    return True
                for inner in other.calls:
                    found = self.project.has_effect(inner, effect)
                    if found:
                        return True
                    unknown |= found is None
        return None if unknown else False

    def decorated_grad_mode(self, decorator: cst.BaseExpression) -> "GradMode | None":
        """The grad mode a decorator of this module or of the project gives: ``@f`` for a
        decorator ``f`` that returns its argument wrapped by a grad-mode context (``return
        torch.no_grad()(fn)``), ``@f(...)`` for a factory of one (yolov5's
        ``smart_inference_mode()``). Set by the engine when it leaves ``f``."""
        called = type(decorator) is cst.Call
        func = decorator.func if called else decorator
        if type(func) is _NAME and func.value in self.module_functions:
            scope = self.function_scopes.get(id(self.module_functions[func.value]))
            if scope is None:
                return None
            return scope.factory_grad_mode if called else scope.decorator_grad_mode
        definition = self.project_definition(self.qualified_name(func))
        if definition is None or definition.kind == "class":
            return None
        summary = self.project.function_summary(definition.key)
        if summary is None:
            return None
        return summary.factory_grad_mode if called else summary.decorator_grad_mode

    def context_grad_mode(self, call: cst.Call) -> "GradMode | None":
        """The grad mode ``with call:`` puts its block in when ``call`` runs a context manager
        of this module (walked already) or of another module of the project: a generator whose
        every ``yield`` sits in one grad mode it set (``with torch.inference_mode(): yield``).
        None when it sets none or cannot be told."""
        func = call.func
        if type(func) is _NAME and func.value in self.module_functions:
            scope = self.function_scopes.get(id(self.module_functions[func.value]))
            return agreed_grad_mode(scope.yield_grad_modes) if scope is not None else None
        if type(func) is _NAME and func.value in self.class_nodes:  # a context manager class of this module
            enter = self.methods_of(func.value, "__enter__")
            scope = self.function_scopes.get(id(enter[0])) if len(enter) == 1 else None
            return scope.enter_grad_mode if scope is not None else None
        definition = self.project_definition(self.qualified_name(func))
        if definition is None:
            return None
        key = definition.key if definition.kind != "class" else self.project.method_owner(definition.qualified,
                                                                                            "__enter__")
        summary = self.project.function_summary(key) if key is not None else None
        return summary.context_grad_mode if summary is not None else None

    def callees_repeat(self, callees: list[object]) -> bool | None:
        """Does any of ``callees`` run a module in a loop of its own (see :meth:`callees_work`)?"""
        return self.callees_work(callees, _REPEATING)

    def callees_steps(self, callees: list[object]) -> bool | None:
        """Does any of ``callees`` hold a loop that runs steps (``train_one_epoch``)? Asked once
        the module has been walked (a loop's steps are known then)."""
        if any(isinstance(callee, int) and (scope := self.function_scopes.get(callee)) is not None
               and self.holds_step_loop(scope) for callee in callees):
            return True
        return self.callees_work([callee for callee in callees if not isinstance(callee, int)], _STEPPING)

    def holds_step_loop(self, scope: "FunctionScope") -> bool:
        """Does a loop of ``scope`` itself run steps (see :attr:`Loop.runs_steps`), not over the
        parts of one batch (micro-batches of one step)?"""
        return any(loop.scope is scope and whole_steps(loop) for loop in self.loop_of_node.values())

    def callees_update(self, callees: list[object]) -> bool | None:
        """Does any of ``callees`` step an optimizer (see :meth:`callees_work`)?"""
        return self.callees_work(callees, _UPDATING)

    def is_micro_batch_loop(self, loop: "Loop", function: "FunctionScope") -> bool:
        """Is ``loop`` the loop over the parts of one step (gradient accumulation): it
        backpropagates, steps no optimizer (nor does anything it calls that can be read), is a
        ``for`` loop if it pulls batches itself (``for i in range(accumulate): x = next(loader)``),
        and the update follows it once: in its function, after it, in the same
        iteration of the loops around it; or, in a function that steps no optimizer, after each
        call of the function, in its callers' loops. However many parts, what the loop keeps in a
        local lives for one step."""
        if not loop.has_backward_pass or loop.has_optimizer_step:
            return False
        if loop.draws and type(loop.node) is not cst.For:
            return False  # while True: batch = next(it): as many parts as the data has
        if loop.callees_update is not None and loop.callees_update():
            return False  # (an update that cannot be read is not one: the step after it is seen)
        if function.steps_after_backward_in(loop):
            return True
        return not function.has_optimizer_step and self._updated_after_each_call(function)

    def _updated_after_each_call(self, function: "FunctionScope") -> bool:
        """Does every call of ``function`` in view come right before an optimizer step of its
        caller, in the same iteration of the caller's loops (``y_hats = self.iterate(x, y);
        self.optimizer.step()``)? Known at the end of the module."""
        if not self.module_done:
            if self.deciding:
                raise Pending
            return False
        sites = self.calls_into.get(id(function.node))
        if not sites:
            return False
        for site in sites:
            enclosing = tuple(id(loop.node) for loop in reversed(site.loops))
            if not site.loops or not any(
                    kind == "step" and around == enclosing and index >= site.training_sites_before
                    for index, (kind, around) in enumerate(site.caller.training_sites)):
                return False
        return True

    def callees_train(self, callees: list[object]) -> bool | None:
        """Does any of ``callees`` run a backward pass or an optimizer step (see :meth:`callees_work`)?"""
        return self.callees_work(callees, _TRAINING)

    def callees_work(self, callees: list[object], work: frozenset[str] | None = None,
                     _seen: set[int] | None = None) -> bool | None:
        """Does any of ``callees`` (``id()`` of a ``def`` of this module, or a qualified name
        as imported) run a module, a backward pass or an optimizer step, itself or through what
        it calls? True, False, or None when one could not be read (defined further down and
        not walked yet, or a module of the project that cannot be summarised)."""
        work = _WORK if work is None else work
        seen = set() if _seen is None else _seen
        unknown = False
        for callee in callees:
            if isinstance(callee, ParameterCallee):
                if not self.module_done:
                    if self.deciding:
                        raise Pending
                    unknown = True
                    continue
                found = self.callees_work([id(d) for d in self.parameter_method_callees(callee.call, callee.function)],
                                          work)
                if found:
                    return True
                continue  # no class known: runs nothing this module can show
            if isinstance(callee, int):
                scope = self.function_scopes.get(callee)
                if scope is None:
                    unknown = True
                elif scope.effects & work or ("backward" in work and scope.has_backward) or (
                        "optimizer_step" in work and scope.has_optimizer_step):
                    return True
                elif callee not in seen:
                    seen.add(callee)
                    for key in scope.call_keys:
                        own = self._own_definition(key)
                        found = self.callees_work([own], work, seen) if own is not None else self._project_work(key, work)
                        if found:
                            return True
                        unknown |= found is None
                continue
            found = self._project_work(callee, work)
            if found:
                return True
            unknown |= found is None
        return None if unknown else False

    def _own_definition(self, key: str) -> int | None:
        """``id()`` of the ``def`` of this module a call key names (``train:correct_num``), once walked."""
        if not key.startswith(f"{self.module_name}:"):
            return None
        if self._definitions_by_key is None or len(self._definitions_by_key) != len(self.definition_keys):
            self._definitions_by_key = {value: key_id for key_id, value in self.definition_keys.items()}
        found = self._definitions_by_key.get(key[len(self.module_name) + 1:])
        return found if found in self.function_scopes else None

    def _project_work(self, callee: str, work: frozenset[str]) -> bool | None:
        if self.project is None or callee.startswith(f"{self.module_name}:"):
            return None if self.project is not None else False
        if ":" not in callee and self.project_definition(callee) is None:
            return False  # outside the project: a library call (torch.load, os.listdir, tqdm)
        found = None
        for effect in work:
            result = self.project.has_effect(callee, effect)
            if result:
                return True
            found = result if found is None else (found or result)
        return found

    def within_a_step(self, function: "FunctionScope", _seen: frozenset[int] = frozenset()) -> bool:
        """Does ``function`` run as part of one step: a per-step method (``forward``,
        ``training_step``), or a function of this module only ever called from such methods
        (``memory_update`` called by ``forward``, also from a loop there: a loop of one step walks
        the parts of that step)? Its loops walk the parts of one step."""
        if function.is_per_step_method:
            return True
        if id(function.node) in _seen or len(_seen) > 6:
            return False
        sites = self.calls_into.get(id(function.node))
        if not sites:
            return False
        seen = _seen | {id(function.node)}
        return all(site.caller is not self.module_scope and self.within_a_step(site.caller, seen)
                   for site in sites)

    def project_definition(self, qualified: str | None):
        """What ``qualified`` (a name as imported here) is in the project: a
        :class:`~memlint.static.project.Definition`, or None (not the project's, or unknown)."""
        if self.project is None or not qualified or "." not in qualified:
            return None
        if qualified.split(".", 1)[0] in TORCH_PACKAGES:
            return None
        return self.project.definition(qualified)

    def _project_call(self, call: cst.Call, qualified: str | None) -> GraphValue | None:
        """A call of a class or function another module of the project defines, or of a method
        of an instance of such a class (``model.compute_loss(...)`` with ``model = LANDER(...)``)."""
        func = call.func
        if type(func) is _ATTRIBUTE:
            owner = self.project_instance_class(func.value)
            if owner is not None:
                key = self.project.method_owner(owner, func.attr.value)
                return self._pending_project_call(call, key, bound=True) if key is not None else None
        definition = self.project_definition(qualified)
        if definition is None:
            return None
        if definition.kind == "class":
            return NO_GRAPH  # a constructor: an object (a module, a meter, a dataset), not a graph
        return self._pending_project_call(call, definition.key, bound=False)

    def _pending_project_call(self, call: cst.Call, key: str, bound: bool, module_call: bool = False,
                              eval_mode: bool = False) -> GraphValue | None:
        function = self.project.function_outline(key)
        if function is None:
            return None
        arguments = _bind_arguments(call, function.parameters(bound=bound)[0], self._graph)
        starred = any(arg.star for arg in call.args)
        return GraphValue.pending_call(PendingCall(key, tuple(sorted(arguments.items())), starred, module_call,
                                                   eval_mode=eval_mode))

    def constructed_by(self, node: cst.BaseExpression) -> str | None:
        """The qualified name of what built the object ``node`` holds: a name or ``self.x`` bound
        to ``X(...)`` (``.to(device)``, ``.cuda()``, ``.eval()`` on the way), or an element of one
        bound to ``defaultdict(X)``, or ``X(...)`` itself (``TopKAccuracy(k=2)(preds, labels)``):
        ``accelerate.Accelerator`` for ``accelerator = Accelerator(...)``."""
        element = type(node) is cst.Subscript
        if type(node) is cst.Call:
            value = without_self_returning_calls(node)
        else:
            dotted = dotted_name(node.value if element else node)
            binding = self.lookup(dotted) if dotted is not None else None
            value = without_self_returning_calls(binding.node if binding is not None else None)
        for _ in range(3):  # dp_model = DataParallel(model): what it runs is model's class
            if type(value) is not cst.Call or not self.wraps_a_module(value):
                break
            inner = value.args[0].value
            if type(inner) is cst.Call:
                value = without_self_returning_calls(inner)
                continue
            dotted = dotted_name(inner)
            if dotted is None:
                return None
            if dotted == dotted_name(node):  # model = DataParallel(model): what model held before
                value = self._value_before(dotted, value)
                continue
            inner_binding = self.lookup(dotted)
            value = without_self_returning_calls(inner_binding.node) if inner_binding is not None else None
        if type(value) is not cst.Call:
            return None
        if element:
            if (dotted_name(value.func) or "").rsplit(".", 1)[-1] != "defaultdict" or not value.args:
                return None
            return self.qualified_name(value.args[0].value)
        qualified = self.qualified_name(value.func)
        return self.class_of_constructor(qualified) or qualified

    def _stores_before(self, name: str, value: cst.CSTNode | None, unwrapped: bool = False) -> list:
        """What this function stored in ``name`` before it stored ``value``, in order (empty when
        ``value`` is not among its stores). ``unwrapped``: compare what a chain of self-returning
        calls was made on (``model = DataParallel(model).cuda()``)."""
        stored = self.function.stored_values.get(name, []) if self.function is not None else []
        for place, each in enumerate(stored):
            if (without_self_returning_calls(each) if unwrapped else each) is value:
                return stored[:place]
        return []

    def _stored_before(self, name: str, value: cst.CSTNode | None) -> cst.BaseExpression | None:
        """What this function stored in ``name`` just before it stored ``value`` (None if nothing)."""
        earlier = self._stores_before(name, value)
        return earlier[-1] if earlier else None

    def _value_before(self, name: str, rebinding: cst.BaseExpression) -> cst.BaseExpression | None:
        """What ``name`` held before ``name = rebinding`` (``model = DataParallel(model)``): the one
        construction every earlier store of the function agrees on (``model = Net(...)`` on every
        path); None where they differ or none is seen."""
        earlier = [without_self_returning_calls(value)
                   for value in self._stores_before(name, rebinding, unwrapped=True)]
        if not earlier or any(type(value) is not cst.Call for value in earlier):
            return None
        constructions = {self.qualified_name(value.func) for value in earlier}
        return earlier[-1] if len(constructions) == 1 and None not in constructions else None

    def class_of_constructor(self, qualified: "str | None") -> "str | None":
        """``Model.from_pretrained(...)``: a classmethod of a class of the project builds an
        instance of that class (the class's qualified name), as far as the outline says."""
        if qualified is None or self.project is None or "." not in qualified:
            return None
        owner, _, method = qualified.rpartition(".")
        definition = self.project_definition(owner)
        if definition is None or definition.kind != "class":
            return None
        for ancestor in (definition.qualified, *self.project.ancestors(definition.qualified)):
            found = self.project.definition(ancestor)  # the method may be inherited (BertPreTrainedModel's)
            outline = found.outline.classes.get(found.name) if found is not None and found.kind == "class" else None
            function = outline.methods.get(method) if outline is not None else None
            if function is not None:
                classmethod_ = any(d.rsplit(".", 1)[-1] == "classmethod" for d in function.decorators)
                return definition.qualified if classmethod_ else None
        return None

    def project_instance_class(self, node: cst.BaseExpression) -> str | None:
        """The qualified name of the class of another module of the project that ``node`` is an
        instance of: ``self`` in a class deriving from one, or what :meth:`constructed_by` names."""
        if self.project is None:
            return None
        if type(node) is _NAME and node.value == "self":
            info = self.class_info
            if info is None or not self.module_name:
                return None
            return f"{self.module_name}.{info.name}" if any(
                self.project_definition(base) is not None for base in info.base_names) else None
        definition = self.project_definition(self.constructed_by(node))
        return definition.qualified if definition is not None and definition.kind == "class" else None

    def guarding_tests(self) -> tuple[cst.BaseExpression, ...]:
        """The tests of the ``if`` statements whose body is being walked (not their ``else``)."""
        return tuple(self.if_nodes[key].test for key, arm in self.branch_path if arm == "body" and key in self.if_nodes)

    def is_fixed_test(self, test: cst.BaseExpression, function: "FunctionScope") -> bool:
        """Does ``test`` give the same answer wherever ``function`` evaluates it: it reads only
        literals and module-level names bound exactly once and never rebound (no ``global`` of
        them anywhere, not bound by ``function``): ``if UPDATE == 'Approach0':`` with
        ``UPDATE = ...`` at the top of the module."""
        if self._fixed_names is None:
            module = self.module_node
            self._fixed_names = set() if module is None else bound_once_to(module, lambda value: True)
        names = self._names_in_test(test)
        return names is not None and all(name in self._fixed_names and name not in function.bindings for name in names)

    @staticmethod
    def _names_in_test(test: cst.BaseExpression) -> set[str] | None:
        """The names a comparison of names and literals reads; None for anything else (a call,
        an attribute, a subscript: their value may change between two evaluations)."""
        if isinstance(test, cst.Name):
            return {test.value} if test.value not in ("True", "False", "None") else set()
        if isinstance(test, (cst.SimpleString, cst.Integer, cst.Float)):
            return set()
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return Facts._names_in_test(test.expression)
        if isinstance(test, cst.BooleanOperation):
            left, right = Facts._names_in_test(test.left), Facts._names_in_test(test.right)
            return None if left is None or right is None else left | right
        if isinstance(test, cst.Comparison):
            found = Facts._names_in_test(test.left)
            for target in test.comparisons:
                other = Facts._names_in_test(target.comparator)
                if found is None or other is None:
                    return None
                found |= other
            return found
        return None

    def summary_form(self, value: GraphValue, function: "FunctionScope") -> GraphValue:
        """A returned value in terms of the function's parameters, for its callers: ``names``
        become the parameters the value may carry a graph from, plus ``OPAQUE`` when it is
        unknown for another reason (``trainer.compute(batch)``). On some paths only when the
        value is."""
        form = self._summary_form(value, function)
        return form.on_some_paths() if value.partial else form

    def _summary_form(self, value: GraphValue, function: "FunctionScope") -> GraphValue:
        if value.parts is not None:
            return GraphValue.container((key, self.summary_form(part, function)) for key, part in value.parts)
        if value.state is not Graph.UNKNOWN:
            return GraphValue(value.state, partial=value.partial)
        parameters = function.parameters
        deps: set[str] = set()
        opaque = not value.names and value.settled is not Graph.NONE
        pending = value.pending
        stack, seen = list(value.names), set()
        while stack:
            name = stack.pop()
            if name in seen or name in ("self", "cls"):
                continue
            seen.add(name)
            binding = self.lookup(name)
            if name in parameters and (binding is None or isinstance(binding.node, cst.Param)):
                deps.add(name)  # (a parameter rebound, as by x = x.detach(), is what it was bound to)
                continue
            if binding is None:
                opaque = True
                continue
            if binding.kind is Kind.MODULE or binding.called or binding.graph.state is Graph.NONE:
                continue
            graph = binding.graph
            if graph.state is Graph.CARRIES:
                return CARRIES_VALUE.on_some_paths() if graph.partial else CARRIES_VALUE
            if graph.pending:
                pending = pending | graph.pending
            from_argument = name in parameters and name in graph.names
            if from_argument:
                deps.add(name)  # x = x[mask].unsqueeze(0): still computed from the argument
            inner = graph.names - {name}
            if not inner and not from_argument and (graph.settled is not Graph.NONE or not graph.pending):
                opaque = True
            stack.extend(inner)
        if opaque:
            deps.add(OPAQUE)
        if not deps and not pending:
            return NO_GRAPH
        return GraphValue(Graph.UNKNOWN, frozenset(deps), None, pending, Graph.UNKNOWN if deps else Graph.NONE)

    def frozen_by_helpers(self) -> set[tuple[int, str]]:
        """(id of the function, name) of the modules a call hands to a function that freezes its
        argument (``deactivate_requires_grad(self.backbone)``, defined in this module or another
        of the project: its summary's FREEZES_ARGUMENT). Complete at the end of the module."""
        if self._frozen_by_helpers is None or not self.module_done:
            frozen: set[tuple[int, str]] = set()
            for call, function in self.modules_handed:
                for name in self._arguments_frozen_by(call):
                    frozen.add((id(function), name))
            if not self.module_done:
                return frozen
            self._frozen_by_helpers = frozen
        return self._frozen_by_helpers

    def frozen_by_their_methods(self, wanted: Callable[[int, str], bool]) -> set[tuple[int, str]]:
        """(id of the function, name) of the modules frozen by a method of their own called there
        (``self.ref_model.freeze_all()``), asked only for the (function, name) pairs ``wanted``
        accepts: telling it may read other modules' summaries. Complete at the end of the module."""
        frozen: set[tuple[int, str]] = set()
        for call, function in self.module_methods_called:
            receiver = dotted_name(call.func.value)
            if receiver is None or not wanted(id(function), receiver):
                continue
            if id(call) not in self._freezes_its_module:
                self._freezes_its_module[id(call)] = self._method_freezes_its_module(call)
            if self._freezes_its_module[id(call)]:
                frozen.add((id(function), receiver))
        return frozen

    def _method_freezes_its_module(self, call: cst.Call) -> bool:
        """``net.freeze_all()``: does the method freeze every parameter of its own module? The
        methods it may run are this module's (when its class is known here) or, when not, every
        method of that name the project defines, each of which must (see FREEZES_SELF)."""
        found = self.callees(call)
        if found is not None:
            scopes = [self.function_scopes.get(id(definition)) for definition in found[0]]
            return bool(scopes) and all(scope is not None and FREEZES_SELF in scope.effects for scope in scopes)
        method = call.func.attr.value
        here = [scope for scope in self.function_scopes.values()
                if scope.name == method and scope.class_info is not None]
        if any(FREEZES_SELF not in scope.effects for scope in here):
            return False
        elsewhere = self.project.methods_named(method, FREEZES_SELF, self.module_name) \
            if self.project is not None and self.module_name else (0, True)
        if elsewhere is None:
            return False  # a module that defines it cannot be read
        count, all_freeze = elsewhere
        return all_freeze and count + len(here) > 0

    def _arguments_frozen_by(self, call: cst.Call) -> list[str]:
        return [name for name in (dotted_name(value) for value in self.arguments_with_effect(call, FREEZES_ARGUMENT))
                if name is not None]

    def arguments_with_effect(self, call: cst.Call, prefix: str) -> list[cst.BaseExpression]:
        """The positional arguments of ``call`` whose position the callee's summary (this module's,
        or the project's) names with the effect ``prefix`` (FREEZES_ARGUMENT, BACKPROPAGATES_ARGUMENT)."""
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        effects: set[str] = set()
        found = self.callees(call)
        if found is not None:
            for definition in found[0]:
                scope = self.function_scopes.get(id(definition))
                if scope is not None:
                    effects |= scope.effects
        else:
            definition = self.project_definition(self.qualified_name(call.func))
            if definition is not None and definition.kind != "class" and self.project is not None:
                summary = self.project.function_summary(definition.key)
                if summary is not None:
                    effects |= summary.effects
        return [positional[index] for index in (int(effect[len(prefix):]) for effect in effects
                                                if effect.startswith(prefix))
                if index < len(positional)]

    def callees(self, call: cst.Call) -> "tuple[list[cst.FunctionDef], bool] | None":
        """The functions of this module a call runs (a method and its overrides in this
        module), and whether their first parameter is bound (``self``); None if it runs none."""
        key = id(call)  # the module's nodes live as long as the walk: ids are not reused
        if key in self._callees:
            return self._callees[key]
        found = self._find_callees(call)
        if found is None and not self.module_done and self.on_a_parameter(call):
            return None  # model.predict(x), model a parameter: its callers, all known at the end, may tell
        self._callees[key] = found
        return found

    def on_a_parameter(self, call: cst.Call, function: "FunctionScope | None" = None) -> bool:
        """``model.predict(x)`` with ``model`` a parameter of the function (not rebound) and a
        method of that name defined by a class of this module."""
        func = call.func
        if type(func) is not _ATTRIBUTE or type(func.value) is not _NAME or func.value.value in ("self", "cls"):
            return False
        function = function or self.function
        if func.value.value not in function.parameters:
            return False
        if func.attr.value not in self.defined_methods:
            return False
        binding = function.bindings.get(func.value.value)
        return binding is not None and isinstance(binding.node, cst.Param)

    def parameter_method_callees(self, call: cst.Call, function: "FunctionScope") -> "list[cst.FunctionDef]":
        """The method ``model.predict(x)`` runs when ``model`` is a parameter every caller in
        view passes an instance of one class of this module (see :meth:`parameter_class`)."""
        if not self.on_a_parameter(call, function):
            return []
        class_name = self.parameter_class(function, call.func.value.value)
        return self.methods_of(class_name, call.func.attr.value) if class_name is not None else []

    def _find_callees(self, call: cst.Call) -> "tuple[list[cst.FunctionDef], bool] | None":
        func = call.func
        if type(func) is _NAME:
            binding = self.lookup(func.value)
            if binding is not None:
                node = binding.node
                return ([node], False) if type(node) is cst.FunctionDef else None
            node = self.module_functions.get(func.value)
            return ([node], False) if node is not None else None
        if type(func) is cst.Subscript and type(func.value) is _NAME and func.value.value in self.registries \
                and self.lookup(func.value.value) in (None, self.module_scope.bindings.get(func.value.value)):
            return list(self.registries[func.value.value]), False  # _metric_dict[metric](opts): any of them
        if type(func) is _ATTRIBUTE and self.class_nodes:
            class_name = self.instance_class_name(func.value)
            if class_name is None and self.module_done and self.on_a_parameter(call):
                class_name = self.parameter_class(self.function, func.value.value)
            if class_name is None:
                return None
            methods = self.methods_of(class_name, func.attr.value)
            return (methods, not _is_static(methods[0])) if methods else None
        return None

    def instance_class_name(self, node: cst.BaseExpression) -> str | None:
        """The class of this module an expression is an instance of: ``self`` in a method,
        a name or ``self.x`` bound to ``Meter(...)``, ``Meter(...)`` itself, ``bucket.setdefault(k, Meter())``, an
        element of a container of instances (``meters[k]`` for ``defaultdict(Meter)``,
        ``{k: Meter() for k in names}``)."""
        node_type = type(node)
        if node_type is _NAME and node.value == "self":
            info = self.class_info
            return info.name if info is not None and info.name in self.class_nodes else None
        if node_type is _NAME or node_type is _ATTRIBUTE:
            dotted = dotted_name(node)
            binding = self.lookup(dotted) if dotted is not None else None
            return self._constructed_class(binding.node) if binding is not None else None
        if node_type is cst.Call and type(node.func) is _ATTRIBUTE and node.func.attr.value == "setdefault" \
                and len(node.args) >= 2:
            return self._constructed_class(node.args[1].value)
        if node_type is cst.Call:
            return self._constructed_class(node)  # Meter()(x): an instance made where it is called
        if node_type is cst.Subscript:
            dotted = dotted_name(node.value)
            binding = self.lookup(dotted) if dotted is not None else None
            return self._element_class(binding.node) if binding is not None else None
        return None

    def state_holder(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """The object whose own state a method call hands back: ``stats`` in
        ``stats.device_stat("loss")`` when ``device_stat`` (of a class of this module, every
        override) returns ``self.device_stats[name]``; None for anything else. Changing the result
        in place (``.add_(loss)``) changes what the object keeps."""
        if type(node) is not cst.Call or type(node.func) is not _ATTRIBUTE:
            return None
        class_name = self.instance_class_name(node.func.value)
        methods = self.methods_of(class_name, node.func.attr.value) if class_name is not None else []
        if not methods or not all(_returns_own_state(method) for method in methods):
            return None
        return node.func.value

    def constructed_class(self, node: cst.CSTNode | None) -> str | None:
        """The class of this module whose instance ``node`` (a binding's value) is: see
        :meth:`_constructed_class`."""
        return self._constructed_class(node)

    def _constructed_class(self, node: cst.CSTNode | None) -> str | None:
        """``Meter()``; also ``system.to(device)`` (a module moved returns itself) where ``system``
        is a parameter annotated with a class of this module (``system: LearnedDynamics``)."""
        for _ in range(4):
            if type(node) is cst.Call and type(node.func) is _ATTRIBUTE and node.func.attr.value in SELF_RETURNING_METHODS:
                node = node.func.value
            elif type(node) is cst.Call and self.wraps_a_module(node):
                node = node.args[0].value  # DataParallel(net): calls run net's forward
            else:
                break
            if type(node) is _NAME:
                binding = self.lookup(node.value) or self._init_binding(node.value)
                node = binding.node if binding is not None else None
        if type(node) is cst.Call and type(node.func) is _NAME and node.func.value in self.class_nodes:
            return node.func.value
        if type(node) is cst.Param and node.annotation is not None:
            annotation = node.annotation.annotation
            if type(annotation) is _NAME and annotation.value in self.class_nodes:
                return annotation.value
        return None

    def wraps_a_module(self, call: cst.Call) -> bool:
        """``DataParallel(net)``, ``DDP(net, device_ids=[rank])``, ``FSDP(net)``: a wrapper whose
        calls run the wrapped module's forward and hand back what it returns."""
        qualified = self.qualified_name(call.func) or ""
        return (qualified.rsplit(".", 1)[-1] in _PARALLEL_WRAPPERS and bool(call.args)
                and call.args[0].keyword is None and qualified.startswith("torch."))

    def _init_binding(self, name: str) -> "Binding | None":
        """``name`` as the class's ``__init__`` binds it (``self.system = system.to(device)`` read
        from another method: ``system`` is ``__init__``'s parameter)."""
        info = self.class_info
        if info is None:
            return None
        for statement in info.node.body.body:
            if type(statement) is cst.FunctionDef and statement.name.value == "__init__":
                scope = self.function_scopes.get(id(statement))
                return scope.bindings.get(name) if scope is not None else None
        return None

    def _element_class(self, node: cst.CSTNode | None) -> str | None:
        """``defaultdict(Meter)``, ``{"a": Meter(), ...}``, ``{k: Meter() for k in ...}``, ``[Meter() ...]``,
        ``OrderedDict({...})``."""
        if type(node) is cst.Call and dotted_name(node.func) in ("defaultdict", "collections.defaultdict") \
                and node.args and type(node.args[0].value) is _NAME and node.args[0].value.value in self.class_nodes:
            return node.args[0].value.value
        if type(node) is cst.Call and dotted_name(node.func) in _DICT_TYPES and len(node.args) == 1 \
                and node.args[0].keyword is None:
            return self._element_class(node.args[0].value)
        if type(node) in (cst.DictComp, cst.ListComp):
            return self._constructed_class(node.value if type(node) is cst.DictComp else node.elt)
        if type(node) in (cst.Dict, cst.List, cst.Tuple):
            values = [el.value for el in node.elements if not isinstance(el, (cst.StarredDictElement, cst.StarredElement))]
            classes = {self._constructed_class(value) for value in values}
            return classes.pop() if len(classes) == 1 else None
        return None

    def methods_of(self, class_name: str, method: str) -> list[cst.FunctionDef]:
        """``method`` as ``class_name`` resolves it in this module (its own or a base's), and
        the overrides of subclasses of this module (``self.step()`` may run any of them)."""
        found: list[cst.FunctionDef] = []
        queue, seen = [class_name], set()
        while queue:
            current = queue.pop(0)
            if current in seen or current not in self.class_nodes:
                continue
            seen.add(current)
            node = self.class_methods[current].get(method)
            if node is not None:
                found.append(node)
                break
            queue.extend(self.class_bases[current])
        for other, bases in self.class_bases.items():
            if other != class_name and method in self.class_methods[other] and self._inherits(other, class_name):
                found.append(self.class_methods[other][method])
        return found

    def local_ancestors(self, class_name: str) -> list[str]:
        """The bases of a class of this module, through the module's own classes (names as written)."""
        queue, seen = list(self.class_bases.get(class_name, ())), []
        while queue:
            current = queue.pop(0)
            if current not in seen:
                seen.append(current)
                queue.extend(self.class_bases.get(current, ()))
        return seen

    def _inherits(self, class_name: str, ancestor: str) -> bool:
        queue, seen = list(self.class_bases.get(class_name, ())), set()
        while queue:
            current = queue.pop()
            if current == ancestor:
                return True
            if current not in seen:
                seen.add(current)
                queue.extend(self.class_bases.get(current, ()))
        return False

    def argument_nodes(self, call: cst.Call, callee: cst.FunctionDef, bound: bool) -> dict[str, cst.BaseExpression]:
        """Parameter of ``callee`` -> the expression a call passes to it (starred arguments left out)."""
        return _bind_arguments(call, _parameters(callee, bound)[0], lambda node: node)

    def call_arguments(self, call: cst.Call, callee: cst.FunctionDef, bound: bool) -> dict[str, GraphValue]:
        """What a call passes to each parameter of ``callee`` (as ``graph_value`` sees it here)."""
        return _bind_arguments(call, _parameters(callee, bound)[0], self.graph_value)

    def argument_classes(self, call: cst.Call, callee: cst.FunctionDef, bound: bool) -> dict[str, str]:
        """Per parameter of ``callee``, the class of this module the call passes an instance of
        (``"Meter"``), or a container of instances of (``"[Meter]"``); unknown ones left out."""
        classes: dict[str, str] = {}
        for parameter, argument in _bind_argument_nodes(call, _parameters(callee, bound)[0]).items():
            name = self.instance_class_name(argument)
            if name is None and type(argument) is cst.Call:
                name = self._constructed_class(argument)  # eval_model(Predictor(), data): made as it is passed
            if name is None:
                if type(argument) is _NAME:
                    binding = self.lookup(argument.value)
                    element = self._element_class(binding.node) if binding is not None else None
                else:
                    element = self._element_class(argument)  # {"loss": Meter()} passed as it is made
                if element is not None:
                    classes[parameter] = f"[{element}]"
                continue
            if name is not None:
                classes[parameter] = name
        return classes

    def parameter_class(self, function: "FunctionScope", parameter: str, elements: bool = False) -> str | None:
        """The class of this module every call in view passes ``parameter`` of ``function`` an
        instance of (``elements``: a container of instances of), when all agree and no other
        module calls the function; None otherwise."""
        sites = self.calls_into.get(id(function.node), ())
        if not sites or any(site.starred for site in sites):
            return None
        found = {site.classes.get(parameter) for site in sites}
        if len(found) != 1:
            return None
        (name,) = found
        if name is None or name.startswith("[") != elements:
            return None
        project = self.project
        here = project.module_file(self.module_name) if project is not None and self.module_name else None
        if here is not None and function.parent is self.module_scope and \
                project.called_from_elsewhere(self.module_name, function.name, here) is not False:
            return None  # another module may pass something else
        return name.strip("[]")

    def runs_per_step(self, function: "FunctionScope", _seen: frozenset[int] = frozenset()) -> bool:
        """Does ``function`` run once per step (or more): a per-step method (``forward``,
        ``training_step``...), or a function of this module called from a loop that runs
        steps, or from a function that runs per step? (Complete at the end of the module.)"""
        if function.is_per_step_method or function.steps_once_per_call:
            return True
        if id(function.node) in _seen or len(_seen) > 8:
            return False
        seen = _seen | {id(function.node)}
        for site in self.calls_into.get(id(function.node), ()):
            if site.no_grad or not self.may_run_with_grad(site.caller):
                continue  # a call under no_grad builds no graph
            for loop in site.loops:
                if loop.trains:
                    return True  # a training loop (itself, or through what it calls)
                # A loop over data in an entry point (a script, run(), train_epoch()); not the
                # loop over the frames of one call of a helper this file calls (once) itself.
                if loop.iterates_data and not any(
                        not other.no_grad for other in self.calls_into.get(id(site.caller.node), ())):
                    return True
            if self.runs_per_step(site.caller, seen):
                return True
        return False

    def may_run_with_grad(self, function: "FunctionScope", _seen: frozenset[int] = frozenset()) -> bool:
        """Can ``function`` run with grad on: not decorated with no_grad, and, when this module
        calls it, called with grad on at least once (by a function that may run with grad)?"""
        if function.entry_grad_mode.may_be_off:
            return False
        sites = self.calls_into.get(id(function.node))
        if not sites or id(function.node) in _seen:
            return True  # called from outside this file (or recursively)
        seen = _seen | {id(function.node)}
        return any(not site.no_grad and self.may_run_with_grad(site.caller, seen) for site in sites)

    def carries_at_calls(self, value: GraphValue, function: "FunctionScope") -> bool:
        """Does ``value`` (in terms of ``function``'s parameters: see :meth:`summary_form`)
        carry a graph at some call of ``function`` in this module?"""
        if value.state is Graph.CARRIES:
            return True
        if value.state is Graph.NONE or not (value.names - {OPAQUE}):
            return False
        for site in self.calls_into.get(id(function.node), ()):
            if self.is_graph_carrying(_instantiate(value.with_names(value.names - {OPAQUE}), site.arguments,
                                                   site.starred), site.caller):
                return True
        return False

    def _call_result(self, call: cst.Call, callees: list[cst.FunctionDef], bound: bool, module_call: bool,
                     eval_mode: bool = False) -> GraphValue:
        """What a call of this module's functions returns: their summaries with the call's
        arguments put in for the parameters (pending while one has not been walked); for a
        module known to be in eval mode, what its method returns when ``self.training`` is False."""
        starred = any(arg.star for arg in call.args)
        results = []
        for callee in callees:
            positional, keyword = _parameters(callee, bound)
            arguments = _bind_arguments(call, positional, self._graph)
            summary = self.summaries.get(id(callee))
            if summary is not None and eval_mode:
                summary = self.eval_summaries.get(id(callee), summary)
            if summary is None:
                if id(callee) in self.walking:
                    results.append(UNKNOWN_VALUE)  # a recursive call
                    continue
                results.append(GraphValue.pending_call(
                    PendingCall(id(callee), tuple(sorted(arguments.items())), starred, module_call,
                                eval_mode=eval_mode)))
                continue
            result = _instantiate(summary, arguments, starred)
            results.append(_floored(result) if module_call else result)
        value = results[0]
        for other in results[1:]:
            value = value.join(other)
        return value

    def iteration_value(self, iterable: cst.BaseExpression) -> GraphValue:
        """What one iteration of ``for target in iterable`` binds: an element of a container,
        ``(index, element)`` for ``enumerate``, ``(key, value)`` for ``d.items()``, a tuple of
        elements for ``zip``."""
        if type(iterable) is cst.Call:
            func = iterable.func
            args = [arg.value for arg in iterable.args if arg.keyword is None and not arg.star]
            if type(func) is _NAME and self.qualified_name(func) == func.value:
                if func.value == "enumerate" and args:
                    return GraphValue.container(((0, NO_GRAPH), (1, self.iteration_value(args[0]))))
                if func.value == "zip" and args:
                    return GraphValue.container((i, self.iteration_value(arg)) for i, arg in enumerate(args))
                if func.value in ("range", "len"):
                    return NO_GRAPH
                if func.value in ("reversed", "sorted", "list", "tuple", "iter") and args:
                    return self.iteration_value(args[0])
            if type(func) is _ATTRIBUTE and not iterable.args:
                if func.attr.value == "items":
                    return GraphValue.container(((0, NO_GRAPH), (1, self._graph(func.value).element)))
                if func.attr.value == "values":
                    return self._graph(func.value).element
                if func.attr.value == "keys":
                    return NO_GRAPH
        return self._graph(iterable).element

    # ----- graph evaluation ---------------------------------------------------------------
    def _graph(self, node: cst.BaseExpression) -> GraphValue:
        node_type = type(node)
        if node_type is _NAME:
            if node.value in ("None", "True", "False", "self", "cls"):
                return NO_GRAPH
            binding = self.lookup(node.value)
            names = frozenset({node.value})
            if binding is None:
                if node.value in self.imports.aliases:
                    return NO_GRAPH  # a module or a function imported by name, not a tensor
                return GraphValue(Graph.UNKNOWN, names)
            if binding.kind is Kind.MODULE or binding.called or binding.graph.state is Graph.NONE:
                # bound now to a value without a graph (computed under no_grad, a number) or to a
                # callable: its name must not tie the expression to what the same name held elsewhere
                return NO_GRAPH
            graph = binding.graph
            if graph.parts is None and not graph.pending:
                if graph.state is Graph.NONE:
                    return NO_GRAPH
                if graph.state is Graph.CARRIES:
                    return CARRIES_VALUE
                if type(binding.node) is cst.BinaryOperation and _reads_itself_only_converted(binding.node, node.value):
                    # loss = loss.item() / params.window: what the name held before (backpropagated)
                    # is read only as a number; the name now ties to nothing backpropagated
                    return graph
            # The name, and what its value was computed from (``losses`` holds what was appended).
            return graph.with_names(names | graph.names)
        if node_type is _ATTRIBUTE:
            if node.attr.value in GRAPH_ENDING_ATTRIBUTES:
                return NO_GRAPH
            dotted = dotted_name(node)
            if dotted is not None and dotted.startswith("self."):
                binding = self.lookup(dotted)
                if binding is None or binding.kind is Kind.MODULE or binding.called:
                    return NO_GRAPH if binding else GraphValue(Graph.NONE, frozenset({dotted}))
                return binding.graph.with_names(frozenset({dotted}))
            base = self._graph(node.value)
            if base.parts is not None:
                return base.element
            if type(node.value) is _ATTRIBUTE and base.state is Graph.CARRIES and node.attr.value not in _TENSOR_VIEWS:
                return UNKNOWN_VALUE  # out.stats.time: a field of a field of some object, not evidence
            if base.state is Graph.UNKNOWN and dotted is not None:
                # args.num_envs is known only by itself: args.ent_coef scaling the loss says
                # nothing of it (outputs.loss, backpropagated, is)
                return GraphValue(Graph.UNKNOWN, frozenset({dotted}), None, base.pending, base.settled)
            return base
        if node_type is cst.Subscript:
            later = self._later_output(node)
            if later is not None:
                return later
            base = self._graph(node.value)
            key = subscript_key(node)
            if key is not None and (base.parts is not None or (base.pending and base.settled is Graph.NONE)):
                part = base.part(key)  # log["n"]: its own part, not the whole dict
                return part if part is not None else NO_GRAPH
            if isinstance(key, str) and type(node.value) is _ATTRIBUTE and base.state is Graph.CARRIES \
                    and not (dotted_name(node.value) or "").startswith("self."):
                return UNKNOWN_VALUE  # results[0].speed["inference"]: a dict field of an output object
            if isinstance(key, str) and type(node.value) is _NAME and base.state is Graph.CARRIES \
                    and base.parts is None and not base.pending and self._returned_by_a_call(node.value.value):
                # out["control"] of a value whose structure is not seen (a model's output dict):
                # a string key says it is a container, and which of its entries carry a graph is
                # not known (a detached statistic beside the logits); decided by its own use
                return GraphValue(Graph.UNKNOWN, frozenset({element_name(node.value.value, key)}))
            if type(key) is int and type(node.value) is _NAME and base.state is Graph.UNKNOWN \
                    and base.parts is None and not base.pending:
                # losses[0] of what an unknown call returned: decided by its own use (see element_name)
                return GraphValue(Graph.UNKNOWN, frozenset({element_name(node.value.value, key)}))
            return base.element
        if node_type is cst.Call:
            return self._graph_of_call(node)
        if node_type is cst.BinaryOperation:
            return GraphValue.combine((self._graph(node.left), self._graph(node.right)))
        if node_type is cst.UnaryOperation:
            if isinstance(node.operator, cst.Not):
                return NO_GRAPH
            return self._graph(node.expression)
        if isinstance(node, (cst.Comparison, cst.BaseString, cst.Integer, cst.Float, cst.Imaginary,
                             cst.Lambda, cst.Ellipsis)):
            return NO_GRAPH
        if node_type is cst.BooleanOperation:
            return GraphValue.combine((self._graph(node.left), self._graph(node.right)))
        if node_type is cst.IfExp:
            tested = self.tensor_test(node.test)
            if tested is not None:  # v.item() if torch.is_tensor(v) else v: the plain branch is no tensor
                name, is_tensor = tested
                plain = node.orelse if is_tensor else node.body
                if dotted_name(plain) == name:
                    return self._graph(node.body if is_tensor else node.orelse)
            body, orelse = self._graph(node.body), self._graph(node.orelse)
            joined = body.join(orelse)
            if graphless_value(node.body, body) or graphless_value(node.orelse, orelse):
                return joined.on_some_paths()  # x if c else x.item(): the graph on one branch only
            return joined
        if node_type is cst.Tuple or node_type is cst.List:
            if any(type(el) is cst.StarredElement for el in node.elements):
                return GraphValue.combine(self._graph(el.value) for el in node.elements)
            return GraphValue.container((i, self._graph(el.value)) for i, el in enumerate(node.elements))
        if node_type is cst.Set:
            return GraphValue.combine(self._graph(el.value) for el in node.elements)
        if node_type is cst.Dict:
            keys = [constant_key(el.key) if type(el) is cst.DictElement else None for el in node.elements]
            if all(isinstance(key, str) for key in keys):
                return GraphValue.container((key, self._graph(el.value)) for key, el in zip(keys, node.elements))
            return GraphValue.combine(self._graph(el.value) for el in node.elements)
        if isinstance(node, (cst.Await, cst.StarredElement)):
            return self._graph(node.value if isinstance(node, cst.StarredElement) else node.expression)
        if node_type is cst.NamedExpr:
            return self._graph(node.value)
        if node_type in _ELEMENT_COMPREHENSIONS:
            return self._comprehension_elements(node)
        return UNKNOWN_VALUE

    def _comprehension_elements(self, node: "cst.ListComp | cst.SetComp | cst.GeneratorExp") -> GraphValue:
        """What ``[len(mb) for mb in batches]``, ``(x.item() for x in xs)`` or
        ``[helper(mb) for mb in batches]`` holds: its element computed with each loop variable
        bound to an element of what it iterates. Known only when that says no graph, or leaves
        it to what a function of the project returns (its summary decides); else unknown."""
        scope = self.scope
        saved: dict[str, Binding | None] = {}
        clause = node.for_in
        try:
            while clause is not None:
                element = self._graph(clause.iter).element
                for name in names_in(clause.target):
                    if "." not in name and name not in saved:
                        saved[name] = scope.bindings.get(name)
                    if "." not in name:
                        scope.bindings[name] = Binding(Kind.VALUE, element, clause.iter)
                clause = clause.inner_for_in
            value = self._graph(node.elt)
        finally:
            for name, binding in saved.items():
                if binding is None:
                    scope.bindings.pop(name, None)
                else:
                    scope.bindings[name] = binding
        if value.state is Graph.NONE or (value.pending and not value.names and value.settled is Graph.NONE):
            return value
        return UNKNOWN_VALUE

    def _returned_by_a_call(self, name: str) -> bool:
        """Is ``name`` bound to what a call returned (``out = self.model(x)``), not a container
        built in view (``log = {}``, ``dict(...)``)?"""
        binding = self.lookup(name)
        value = binding.node if binding is not None else None
        return type(value) is cst.Call and dotted_name(value.func) not in _CONTAINER_CONSTRUCTORS

    def tensor_test(self, test: cst.BaseExpression) -> "tuple[str, bool] | None":
        """``torch.is_tensor(v)`` / ``isinstance(v, torch.Tensor)``: ("v", True); under ``not``:
        ("v", False); None for any other test."""
        if type(test) is cst.UnaryOperation and isinstance(test.operator, cst.Not):
            inner = self.tensor_test(test.expression)
            return (inner[0], not inner[1]) if inner is not None else None
        if type(test) is not cst.Call or not test.args:
            return None
        qualified = self.qualified_name(test.func)
        args = [arg.value for arg in test.args]
        name = dotted_name(args[0])
        if name is None:
            return None
        if qualified == "torch.is_tensor" and len(args) == 1:
            return name, True
        if qualified == "isinstance" and len(args) == 2 and self.qualified_name(args[1]) in ("torch.Tensor", "Tensor"):
            return name, True
        return None

    def non_tensor_test(self, test: cst.BaseExpression) -> str | None:
        """``isinstance(v, np.ndarray)`` / ``type(v) == float`` / ``type(v) is str``: the plain
        name ``v`` when the test holds only for a value that is no tensor; None otherwise."""
        if type(test) is cst.Call and test.args and len(test.args) == 2 and not any(arg.star for arg in test.args) \
                and self.qualified_name(test.func) == "isinstance":
            subject, kinds = test.args[0].value, test.args[1].value
            kinds_list = [element.value for element in kinds.elements] if type(kinds) is cst.Tuple else [kinds]
        elif type(test) is cst.Comparison and len(test.comparisons) == 1 \
                and isinstance(test.comparisons[0].operator, (cst.Equal, cst.Is)) \
                and type(test.left) is cst.Call and dotted_name(test.left.func) == "type" and len(test.left.args) == 1:
            subject, kinds_list = test.left.args[0].value, [test.comparisons[0].comparator]
        else:
            return None
        if type(subject) is not _NAME or not kinds_list:
            return None
        if all((self.qualified_name(kind) or "") in _NOT_TENSOR_TYPES for kind in kinds_list):
            return subject.value
        return None

    def _is_distribution(self, node: cst.BaseExpression) -> bool:
        """``Categorical(probs)``, or a name bound to one: a torch.distributions object."""
        if type(node) is _NAME:
            binding = self.lookup(node.value)
            node = binding.node if binding is not None else None
        if type(node) is not cst.Call:
            return False
        qualified = self.qualified_name(node.func) or ""
        return qualified.startswith("torch.distributions.")

    def _graph_of_call(self, call: cst.Call) -> GraphValue:
        func = call.func
        args = [arg.value for arg in call.args]
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in GRAPH_ENDING_METHODS:
                return NO_GRAPH
            if isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
                return NO_GRAPH  # "".join(chars), "{}".format(x): a string
            if method in _DISTRIBUTION_METHODS and self._is_distribution(func.value):
                if method == "sample":
                    return NO_GRAPH  # Distribution.sample() runs under no_grad (rsample() keeps the graph)
                return GraphValue.combine([self._graph(func.value), *(self._graph(arg) for arg in args)])
            if method in _CONTAINER_READS:
                value = self._container_read(call, method)
                if value is not None:
                    return value
            if method in ("forward", "__call__") and self.is_module_expr(func.value):
                return self._module_call(call, func.value)
            if method == "apply" and self._is_autograd_function(func.value):
                # ChamferFunction.apply(xyz1, xyz2): a Function holds no parameters; its outputs
                # have a graph when an input does
                return GraphValue.combine(self._graph(arg) for arg in args)
        qualified = self.qualified_name(func)
        if qualified == "torch.autograd.grad" and not _creates_graph(call):
            return NO_GRAPH  # gradients without create_graph are plain tensors
        if qualified is not None:
            if qualified in GRAPH_ENDING_FUNCTIONS or qualified.startswith(("math.", "numpy.", "np.", "time.", "os.", "json.", "random.", "logging.")):
                return NO_GRAPH
            if qualified.startswith("torch.nn.functional.") and any(
                word in qualified.rsplit(".", 1)[-1] for word in FUNCTIONAL_LOSS_WORDS
            ):
                return GraphValue(Graph.CARRIES)
        if self.is_module_constructor(call):
            return NO_GRAPH
        if type(func) is _NAME and func.value in _COMBINING_BUILTINS and args and self.lookup(func.value) is None:
            # max(5, int(x)): a number; sum(losses), sum([a, b]): what the elements hold
            return GraphValue.combine(self._graph(arg).element for arg in args)
        if isinstance(func, cst.Name) and self.plain_functions:
            binding = self.lookup(func.value)
            if id(binding.node) in self.plain_functions if binding is not None else func.value in self.plain_names:
                return NO_GRAPH
        if isinstance(func, cst.Name) and self._is_metric_object(func.value):
            return NO_GRAPH  # acc_fn(y_pred, y) with acc_fn = torchmetrics.Accuracy(...): a number
        if self.is_module_expr(func):
            return self._module_call(call, func)
        callees = self.callees(call)
        if callees is not None:
            return self._call_result(call, callees[0], callees[1], module_call=False)
        in_project = self._project_call(call, qualified)
        if in_project is not None:
            return in_project
        torch_function = qualified is not None and qualified.startswith("torch.") and self._is_imported(qualified)
        if isinstance(func, cst.Attribute) and not torch_function:
            receiver = self._graph(func.value).element
            method = func.attr.value
            if (receiver.state is Graph.CARRIES and method in TENSOR_API) or method in TENSOR_METHODS:
                # a tensor's own method: loss.mean(), out.view(...), out.add(other)
                return GraphValue.combine([receiver, *(self._graph(arg) for arg in args)])
            if args and method in PASS_THROUGH_METHODS.get(self.constructed_by(func.value) or "", ()):
                return self._graph(args[0])  # accelerator.gather_for_metrics(loss): loss, in one process
            # evaluator.eval(out), trainer.compute(batch): can't tell
            unknown = self._unknown_result(receiver, GraphValue.combine([receiver, *(self._graph(arg) for arg in args)]))
            if type(func.value) is _NAME:  # model.predict(x), model a parameter: its callers' class may tell
                return self._parameter_method_call(call, unknown) or unknown
            return unknown
        if torch_function:
            return GraphValue.combine(self._graph(arg) for arg in args)  # torch.cat(outs), torch.sigmoid(x)
        # A function memlint cannot read (passed in, or of a library), given tensors or not:
        # it may return a number or a detached value as well as a graph. Its result carries a
        # graph only if it is backpropagated later under its own name.
        return self._unknown_result(NO_GRAPH, GraphValue.combine(self._graph(arg) for arg in args))

    def _is_autograd_function(self, node: cst.BaseExpression) -> bool:
        """Is ``node`` a ``torch.autograd.Function`` subclass, of this module or of the project?"""
        if type(node) is _NAME and node.value in self.classes:
            return self.classes[node.value].kinds.autograd_function
        definition = self.project_definition(self.qualified_name(node))
        return definition is not None and definition.kind == "class" and \
            self.project.class_kinds(definition.qualified).autograd_function

    def _unknown_result(self, receiver: GraphValue, inputs: GraphValue) -> GraphValue:
        """What an unknown call returns: unknown, tied to no name of its inputs but a parameter
        it is a method of (``out.to_data_list()``: in a summary, what the caller passes decides,
        as it does at the call, where a graph-carrying receiver gives a graph). Asked what a
        method keeps of its parameters (:meth:`parameters_carried`), an unknown function of a
        parameter is presumed to hand on its graph too (``self.sum += allreduce(val)``): the
        caller's argument must still be seen to carry one."""
        names = inputs.names if self._presume_passing else receiver.names
        parameters = names & set(self.function.parameters) if names else frozenset()
        return GraphValue(Graph.UNKNOWN, parameters) if parameters else GraphValue(Graph.UNKNOWN)

    def _is_metric_object(self, name: str) -> bool:
        """Was ``name`` built by a torchmetrics class (``Accuracy(...).to(device)``)? Its
        results are metric values, computed without a graph."""
        binding = self.lookup(name)
        node = binding.node if binding is not None else None
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
                "to", "cuda", "cpu"):
            node = node.func.value
        if not isinstance(node, cst.Call):
            return False
        qualified = self.qualified_name(node.func)
        return qualified is not None and qualified.startswith("torchmetrics.")

    def _module_call(self, call: cst.Call, module: cst.BaseExpression) -> GraphValue:
        """A module called: it carries a graph, shaped as its ``forward`` returns when the
        module is a class of this file (``loss, sample_size, log = criterion(model, sample)``)."""
        if call.args and self.is_loss_module_call(call) and all(
                self._graph(arg.value).state is Graph.NONE for arg in call.args):
            # criterion(pred.detach().cpu(), true.detach().cpu()): a loss of values without a
            # graph has one only through weights of its own, if it has any: not known
            return UNKNOWN_VALUE
        if self._frozen_where_called(module):
            # reward_model.requires_grad_(False): no parameter records a graph; what it returns
            # carries what its inputs carry
            return GraphValue.combine(self._graph(arg.value) for arg in call.args)
        change = self.mode_of(dotted_name(module) or "")
        # a change this function made (a global's module-level mode may be changed by another one)
        in_eval = change is not None and change.mode == "eval" and change in self.function.mode_changes
        class_name = self.instance_class_name(module)
        if class_name is not None and self.classes.get(class_name) is not None and self.classes[class_name].is_module:
            # (an abstract ``forward``, a stub a subclass overrides, says nothing of what runs)
            forward = [method for method in self.methods_of(class_name, "forward") if not is_stub(method)]
            if forward:
                # a module without parameters (a hand-written Dice loss): no weights of its own
                # record a graph, so what its forward returns is not floored to one
                weights = not self._makes_no_parameters(f"{self.module_name}.{class_name}" if self.module_name else "")
                return self._call_result(call, forward, True, module_call=weights, eval_mode=in_eval)
        owner = self.project_instance_class(module)
        key = self.project.method_owner(owner, "forward") if owner is not None else None
        if key is not None:
            weights = not (self._makes_no_parameters(owner) or self._given_no_module(module, owner))
            pending = self._pending_project_call(call, key, bound=True, module_call=weights, eval_mode=in_eval)
            if pending is not None:
                return pending
        return CARRIES_VALUE

    def _given_no_module(self, module: cst.BaseExpression, owner: str) -> bool:
        """Was the project's class ``owner``, whose only modules are objects handed to its
        ``__init__`` (``SoftDiceLoss(apply_nonlin=None)``: ``self.apply_nonlin = apply_nonlin``),
        built here without any (``self.dice_func = SoftDiceLoss(smooth=1e-8)``, the parameter left
        at its default ``None`` or given ``None``)? It then holds no parameter."""
        passed_in = self.project.modules_passed_in(owner) if self.project is not None else ()
        definition = self.project.definition(owner) if passed_in else None
        init = definition.class_outline.methods.get("__init__") if definition is not None else None
        dotted = dotted_name(module)
        binding = self.lookup(dotted) if dotted is not None else None
        built = without_self_returning_calls(binding.node) if binding is not None else None
        if init is None or init.has_star_args or type(built) is not cst.Call:
            return False
        positional, _ = init.parameters(bound=True)
        for parameter in passed_in:
            given = argument_for(built, positional, parameter)
            if given is False:
                return False  # hidden in *args / **kwargs
            if given is None:
                if parameter not in init.none_defaults:
                    return False
            elif not (type(given) is _NAME and given.value == "None"):
                return False
        return True

    def _makes_no_parameters(self, qualified: str) -> bool:
        """Does the project's class ``qualified`` hold no parameter or submodule, through its bases
        (``Project.without_parameters``)? False when unknown."""
        return bool(qualified) and self.project is not None and self.project.without_parameters(qualified)

    def _container_read(self, call: cst.Call, method: str) -> GraphValue | None:
        """``d.get("k", default)``, ``d.pop("k")``, ``d.values()``, ``d.items()``: what the
        container holds (the part under a constant key when its layout is known)."""
        receiver = self._graph(call.func.value)
        if method in ("values", "items"):
            return receiver.element if not call.args else None
        if method == "keys":
            return NO_GRAPH
        if not call.args or call.args[0].keyword is not None:
            return None
        default = [self._graph(arg.value) for arg in call.args[1:2]]
        key = constant_key(call.args[0].value)
        if key is not None and (receiver.parts is not None or (receiver.pending and receiver.settled is Graph.NONE)):
            part = receiver.part(key)
            if part is None:
                return GraphValue.combine(default) if default else NO_GRAPH
            return GraphValue.combine([part, *default]) if default and receiver.parts is None else part
        if method == "pop" and receiver.state is Graph.NONE and not default:
            return None
        value = GraphValue.combine([receiver.element, *default])
        if method == "get" and default and not default[0].carries_something and value.state is not Graph.NONE:
            # result.get("state", None) from a container whose keys are not known here: the key
            # may be absent, and the value then holds nothing (a graph on some paths only)
            value = replace(value, partial=True)
        return value

    def _is_imported(self, qualified: str) -> bool:
        return qualified.split(".", 1)[0] in {q.split(".", 1)[0] for q in self.imports.aliases.values()}


_DICT_TYPES = frozenset({"dict", "OrderedDict", "collections.OrderedDict"})
_SCALING_OPERATORS = (cst.Multiply, cst.Divide)
_PARALLEL_WRAPPERS = frozenset({"DataParallel", "DistributedDataParallel", "FullyShardedDataParallel"})
# Builtins whose result hands on the elements of their arguments (for i, v in enumerate(values)).
_PASSING_ELEMENTS = frozenset({"enumerate", "zip", "reversed", "sorted", "list", "tuple", "iter"})
# Types whose instances are no tensor (``isinstance(x, np.ndarray)``: x carries no graph).
_NOT_TENSOR_TYPES = frozenset({"numpy.ndarray", "np.ndarray", "numpy.generic", "int", "float", "str", "bool", "bytes",
                               "numbers.Number", "numbers.Real", "numbers.Integral"})
# torch.distributions methods: rsample, log_prob, entropy keep the parameters' graph; sample does not.
_DISTRIBUTION_METHODS = frozenset({"sample", "rsample", "log_prob", "entropy", "cdf", "icdf", "perplexity",
                                   "sample_n"})
# Functions and methods that allocate a tensor of a given shape.
_ALLOCATING_FUNCTIONS = frozenset(f"torch.{name}" for name in (
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "rand", "randn",
    "rand_like", "randn_like")) | frozenset(f"numpy.{name}" for name in (
    # a numpy array: its slots are overwritten, and what is written becomes a number
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like"))
_ALLOCATING_METHODS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full", "clone", "zero_"})
# What makes a loop's body a step's work (see Loop.runs_steps).
_WORK = frozenset({"module_call", "backward", "optimizer_step"})
_UPDATING = frozenset({"optimizer_step"})
_TRAINING = frozenset({"backward", "optimizer_step"})
_REPEATING = frozenset({"repeats_module"})


def whole_steps(loop: "Loop") -> bool:
    """Does ``loop`` run training or evaluation steps of its own: not over the parts of one batch
    (micro-batches), not an inner loop of ``torch.autograd.grad`` updates (MAML's adaptation)?"""
    if loop.over_parts or (loop.has_backward and not loop.has_backward_pass and not loop.has_optimizer_step):
        return False
    return loop.runs_steps
_STEPPING = frozenset({"step_loop"})
# Methods every nn.Module has: called on a module, they are torch's (or an override in a module class).
MODULE_METHODS = frozenset({"eval", "train", "forward", "to", "cuda", "cpu", "half", "float", "double", "bfloat16",
                            "parameters", "named_parameters", "buffers", "modules", "children", "state_dict",
                            "load_state_dict", "zero_grad", "apply", "requires_grad_", "register_forward_hook",
                            "register_forward_pre_hook", "register_full_backward_hook", "register_buffer"})
# Module methods that return the module: ``Net().to(device).eval()`` is the Net.
SELF_RETURNING_METHODS = frozenset({"to", "cuda", "cpu", "eval", "train", "half", "float", "double", "bfloat16",
                                    "requires_grad_", "type"})
# Builtins whose result is computed from the values (or the elements) they are given.
_COMBINING_BUILTINS = frozenset({"max", "min", "sum", "abs", "pow", "divmod"})
# Conventional names of loss modules (their calls return the loss first).
_LOSS_MODULE_NAMES = frozenset({"criterion", "loss_fn", "loss_func", "lossfn", "loss_function", "loss_module",
                                "criterion_fn", "loss"})

# ----- function summaries ----------------------------------------------------------------------
# In a summary, a value that is unknown for a reason other than the function's parameters.
OPAQUE = "<unknown>"
_CONTAINER_READS = frozenset({"get", "pop", "values", "items", "keys"})
# Attributes of a tensor that are the tensor (with its graph) seen another way.
_TENSOR_VIEWS = frozenset({"T", "mT", "H", "mH", "real", "imag"})


def parameter_for(function: FunctionScope, where: "str | int") -> str | None:
    """The parameter of a method (called through an instance) that an argument fills: by
    position or keyword, else ``*args`` / ``**kwargs`` when it has them."""
    node = function.node
    if type(node) is not cst.FunctionDef:
        return None
    params = node.params
    if isinstance(where, int):
        positional = [p.name.value for p in (*params.posonly_params, *params.params)][1:]
        if where < len(positional):
            return positional[where]
        return params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
    if where in function.parameters and (params.star_kwarg is None or where != params.star_kwarg.name.value):
        return where
    return params.star_kwarg.name.value if params.star_kwarg is not None else None


class _Returns(cst.CSTVisitor):
    """The ``return`` statements of one function (not of functions defined in it)."""

    def __init__(self) -> None:
        self.values: list[cst.BaseExpression | None] = []

    def visit_Return(self, node: cst.Return) -> None:
        self.values.append(node.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


def _returns_own_state(function: cst.FunctionDef) -> bool:
    """Does every ``return`` of a method hand back an attribute of ``self`` or a part of one
    (``self.stats[name]``, ``self.stats.get(name)``)?"""
    returns = _Returns()
    function.body.visit(returns)
    return bool(returns.values) and all(
        value is not None and (storage_name(value) or "").startswith("self.") for value in returns.values)


def agreed_grad_mode(modes: "set[GradMode | None]") -> "GradMode | None":
    """The mode every yield agrees on, or None."""
    return next(iter(modes)) if len(modes) == 1 else None


_LINE_COMMENT = re.compile(r"#[^\n'\"]*$", re.MULTILINE)


def without_comments(source: str) -> str:
    """``source`` less its comments (``running_loss += loss.item()  # loss.data[0]``); a ``#``
    followed by a quote on its line is left, as it may be inside a string."""
    return _LINE_COMMENT.sub("", source)


def without_self_returning_calls(node: "cst.CSTNode | None") -> "cst.CSTNode | None":
    """``Net().to(device).eval()`` -> ``Net()``: what a chain of module (or tensor) methods that
    return their receiver was called on."""
    while type(node) is cst.Call and type(node.func) is _ATTRIBUTE and node.func.attr.value in SELF_RETURNING_METHODS:
        node = node.func.value
    return node


def _holds_callable(binding: "Binding | None") -> bool:
    return binding is not None and (binding.called or binding.kind is Kind.MODULE)


def graphless_value(node: cst.BaseExpression, value: GraphValue) -> bool:
    """Is ``node`` a value that holds no graph (``loss.item()``, ``0``, fresh buffers), not
    ``None`` (on whose path nothing is used as a value: an accumulation of it would fail)?"""
    return not value.carries_something and not (type(node) is _NAME and node.value == "None")


def _instantiate(summary: GraphValue, arguments: dict[str, GraphValue], starred: bool) -> GraphValue:
    """A summary with what a call passed put in for the parameters it names."""
    if summary.parts is not None:
        return GraphValue.container((key, _instantiate(part, arguments, starred)) for key, part in summary.parts)
    if summary.state is not Graph.UNKNOWN:
        return GraphValue(summary.state, partial=summary.partial and summary.state is not Graph.NONE)
    values = []
    for name in summary.names:
        if name == OPAQUE:
            values.append(UNKNOWN_VALUE)
        elif name in arguments:
            values.append(arguments[name])
        elif starred:
            values.append(UNKNOWN_VALUE)
        # else: the parameter's default value, a constant
    if summary.pending:
        values.append(GraphValue(Graph.UNKNOWN, frozenset(), None, summary.pending, Graph.NONE))
    result = GraphValue.combine(values)
    return result.on_some_paths() if summary.partial else result


def _floored(value: GraphValue) -> GraphValue:
    """A module's output: what its ``forward`` may return with a graph does (an unknown part
    is a tensor computed from the module's parameters); plain values stay plain."""
    if value.parts is not None:
        return GraphValue.container((key, _floored(part)) for key, part in value.parts)
    if value.state is Graph.UNKNOWN:
        return CARRIES_VALUE.on_some_paths() if value.partial else CARRIES_VALUE
    return value


def _creates_graph(call: cst.Call) -> bool:
    """``torch.autograd.grad(..., create_graph=<not False>)``: gradients that carry a graph."""
    return any(arg.keyword is not None and arg.keyword.value == "create_graph"
               and not (isinstance(arg.value, cst.Name) and arg.value.value == "False") for arg in call.args)


def _all_names(value: "GraphValue") -> set[str]:
    """The names a value (and each of its parts) may carry a graph from."""
    names = set(value.names)
    for _, part in value.parts or ():
        names |= _all_names(part)
    return names


def _all_names_with_pending(value: "GraphValue") -> set[str] | None:
    """The names a value may carry a graph from, also through the calls of its that are not
    resolved yet (what their arguments carry: a call of another module's forward on a tensor
    built from data carries nothing of the caller's parameters); None when a pending call may
    take more than its arguments show (starred, or a method of a parameter)."""
    names = set(value.names)
    for call in value.pending:
        if call.starred or isinstance(call.callee, ParameterMethod):
            return None
        for _, argument in call.arguments:
            inner = _all_names_with_pending(argument)
            if inner is None:
                return None
            names |= inner
    for _, part in value.parts or ():
        inner = _all_names_with_pending(part)
        if inner is None:
            return None
        names |= inner
    return names


def _bind_arguments(call: cst.Call, positional: list[str],
                    value_of: Callable[[cst.BaseExpression], GraphValue]) -> dict[str, GraphValue]:
    """Parameter name -> what ``call`` passes to it (starred arguments skipped)."""
    return {parameter: value_of(node) for parameter, node in _bind_argument_nodes(call, positional).items()}


def _bind_argument_nodes(call: cst.Call, positional: list[str]) -> dict[str, cst.BaseExpression]:
    """Parameter name -> the expression ``call`` passes to it (starred arguments skipped)."""
    arguments: dict[str, cst.BaseExpression] = {}
    index = 0
    for arg in call.args:
        if arg.star:
            continue
        if arg.keyword is not None:
            arguments[arg.keyword.value] = arg.value
        elif index < len(positional):
            arguments[positional[index]] = arg.value
            index += 1
    return arguments


def _parameters(function: cst.FunctionDef, bound: bool) -> tuple[list[str], list[str]]:
    """The names a call's positional arguments fill, in order (without ``self`` when the call
    goes through an instance), and every parameter a keyword may name."""
    params = function.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params)]
    if bound and positional:
        positional = positional[1:]
    return positional, positional + [p.name.value for p in params.kwonly_params]


def _is_static(function: cst.FunctionDef) -> bool:
    return any(dotted_name(d.decorator) == "staticmethod" for d in function.decorators)


def _name_expr(dotted: str) -> cst.BaseExpression:
    parts = dotted.split(".")
    node: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


def backpropagated_expr(call: cst.Call, facts: "Facts | None" = None) -> cst.BaseExpression | None:
    """The tensor a backward call differentiates: ``loss`` in ``loss.backward()``,
    ``accelerator.backward(loss)``, ``torch.autograd.grad(loss, params)``, and ``out`` in
    ``out.backward(one_hot)`` (with ``facts``: a receiver that carries a graph is the tensor,
    its argument the gradient)."""
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if positional:
        if (facts is not None and isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward"
                and facts._graph(call.func.value).state is Graph.CARRIES):
            return call.func.value
        return positional[0]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("outputs", "tensors", "loss"):
            return arg.value
    if isinstance(call.func, cst.Attribute):
        return call.func.value
    return None


NOT_A_LITERAL = object()


def literal_value(node: "cst.BaseExpression | None") -> object:
    """The value of a literal (a number, a string, True/False/None), or NOT_A_LITERAL."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.Integer):
        return int(node.value) if node.value.isdigit() else NOT_A_LITERAL
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    return NOT_A_LITERAL


def _signed_literal(node: "cst.BaseExpression | None") -> object:
    """``literal_value``, also of a negated number (``-1``)."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        value = literal_value(node.expression)
        return -value if type(value) is int else NOT_A_LITERAL
    return literal_value(node)


_COMPARE = {cst.GreaterThanEqual: lambda a, b: a >= b, cst.GreaterThan: lambda a, b: a > b,
            cst.LessThanEqual: lambda a, b: a <= b, cst.LessThan: lambda a, b: a < b,
            cst.Equal: lambda a, b: a == b, cst.NotEqual: lambda a, b: a != b,
            cst.Is: lambda a, b: a is b, cst.IsNot: lambda a, b: a is not b}


def value_with_defaults(test: cst.BaseExpression, defaults: dict[str, object]) -> object:
    """What an ``if`` test evaluates to when the parameters it reads keep their literal
    defaults: ``local_rank >= 0`` with ``local_rank=-1`` is False. NOT_A_LITERAL when the test
    reads anything else (another name, an attribute, a call) or is not a simple comparison."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        value = value_with_defaults(test.expression, defaults)
        return NOT_A_LITERAL if value is NOT_A_LITERAL else not value
    if isinstance(test, (cst.Name, cst.Attribute)):
        key = dotted_name(test)
        return bool(defaults[key]) if key in defaults else NOT_A_LITERAL
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.left, (cst.Name, cst.Attribute)):
        target = test.comparisons[0]
        compare = _COMPARE.get(type(target.operator))
        right = _signed_literal(target.comparator)
        key = dotted_name(test.left)
        if compare is None or key not in defaults or right is NOT_A_LITERAL:
            return NOT_A_LITERAL
        try:
            return bool(compare(defaults[key], right))
        except TypeError:
            return NOT_A_LITERAL
    return NOT_A_LITERAL


def argument_for(call: cst.Call, positional: list[str], parameter: str) -> "cst.BaseExpression | None | bool":
    """What ``call`` passes for ``parameter`` (``positional``: the names its positional arguments
    fill, in order): the expression, None when it passes nothing (the default), False when a
    ``*args``/``**kwargs`` hides it."""
    for position, arg in enumerate(call.args):
        if arg.star:
            return False
        if (arg.keyword is not None and arg.keyword.value == parameter) \
                or (arg.keyword is None and position < len(positional) and positional[position] == parameter):
            return arg.value
    return None


def argument_at(call: cst.Call, position: int, keyword: str) -> "cst.BaseExpression | None":
    """The argument a call passes at ``position`` or as ``keyword``; None when it passes none
    (or a starred argument comes first)."""
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        if (arg.keyword is None and index == position) or (arg.keyword is not None and arg.keyword.value == keyword):
            return arg.value
    return None


def file_name_written(path: "cst.BaseExpression | None",
                      values_of: "Callable[[str], Sequence[cst.BaseExpression]] | None" = None) -> str | None:
    """The last part of a file path when the code writes it out: ``"out/args.bin"``,
    ``os.path.join(folder, "args.bin")``, ``folder / "args.bin"``: ``args.bin``. A path built
    around a number or a name (``'{}/epoch{}_model.pt'.format(d, e)``, ``d + '/epoch' + str(e) +
    '_model.pt'``, ``f"{d}/epoch{e}_model.pt"``, ``"epoch%d_model.pt" % e``) gives its naming
    scheme, ``*_model.pt``: the text after the last part that varies, when it says more than an
    extension. ``values_of`` gives the values a name was bound to (``model_path = ...``; one)."""
    if isinstance(path, cst.Name) and values_of is not None:
        values = list(values_of(path.value) or ())
        path = values[0] if len(values) == 1 else None
    if isinstance(path, cst.Call) and (dotted_name(path.func) or "").endswith("path.join") and path.args \
            and not path.args[-1].star:
        path = path.args[-1].value
    elif isinstance(path, cst.BinaryOperation) and isinstance(path.operator, cst.Divide):
        path = path.right
    if isinstance(path, cst.SimpleString):
        value = path.evaluated_value
        if isinstance(value, str):
            name = value.replace("\\", "/").rsplit("/", 1)[-1]
            return name if "." in name.strip(".") else None
        return None
    tail = _literal_tail(path)
    if tail is None:
        return None
    tail = tail.replace("\\", "/")
    if "/" in tail:  # only the folder varies: the file's whole name
        name = tail.rsplit("/", 1)[-1]
        return name if "." in name.strip(".") else None
    stem, dot, _ = tail.rpartition(".")
    return "*" + tail if dot and stem.strip("_-. ") else None


# compiled when first used (most runs never ask): see builds_attribute_names, _literal_tail
_GETATTR = r"\b(?:getattr|hasattr)\s*\("


def builds_attribute_names(source: str) -> bool:
    """Does ``source`` look an attribute up by a name it builds (``getattr(self, "load_" + kind)``,
    ``getattr(obj, f"on_{event}")``, ``getattr(m, "{}_step".format(stage))``), or by the names
    ``dir()`` lists (``for name in dir(self): getattr(self, name)``)? Then a method
    can run though its name is written nowhere. A name handed in as it is (``getattr(mod, comp)``
    over the parts of a configured class path) is a name written somewhere else: in the code, a
    configuration file or on the command line."""
    if "getattr" not in source and "hasattr" not in source:
        return False
    for match in re.finditer(_GETATTR, source):
        depth, start, arguments = 1, match.end(), []
        position = start
        while position < len(source) and depth:
            char = source[position]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
            elif char == "," and depth == 1:
                arguments.append(source[start:position])
                start = position + 1
            position += 1
        arguments.append(source[start:position - 1])
        name = arguments[1].strip() if len(arguments) > 1 else ""
        if re.search(r"[+%{]|\.format\b|\bjoin\b|^[rbuRBU]?[fF][rR]?[\"']", name) or not name:
            return True
    # names listed from the object itself (``for name in dir(self): getattr(self, name)()``)
    return "dir" in source and re.search(_LISTS_ATTRIBUTES, source) is not None


_LISTS_ATTRIBUTES = r"(?<![\w.])dir\s*\("


_PERCENT_FIELD = r"%[-#0 +]*(?:\d+|\*)?(?:\.\d+)?[diouxXeEfFgGcrsa]"


def _literal_tail(path: "cst.BaseExpression | None") -> str | None:
    """The literal text a path built from varying parts ends with (see file_name_written)."""
    if isinstance(path, cst.Call) and isinstance(path.func, cst.Attribute) and path.func.attr.value == "format" \
            and isinstance(path.func.value, cst.SimpleString):
        template = path.func.value.evaluated_value
        if isinstance(template, str) and "}" in template:
            return template.rsplit("}", 1)[-1]
        return None
    if isinstance(path, cst.BinaryOperation) and isinstance(path.operator, cst.Modulo) \
            and isinstance(path.left, cst.SimpleString):
        template = path.left.evaluated_value
        if isinstance(template, str) and "%" in template and re.search(_PERCENT_FIELD, template):
            return re.split(_PERCENT_FIELD, template)[-1]
        return None
    if isinstance(path, cst.BinaryOperation) and isinstance(path.operator, cst.Add) \
            and isinstance(path.right, cst.SimpleString) and not isinstance(path.left, cst.SimpleString):
        value = path.right.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(path, cst.FormattedString) and path.parts \
            and any(isinstance(part, cst.FormattedStringExpression) for part in path.parts):
        last = path.parts[-1]
        return last.value if isinstance(last, cst.FormattedStringText) else None
    return None


def all_parameters(params: cst.Parameters) -> list[cst.Param]:
    """Every parameter of a signature: positional-only, plain, keyword-only, ``*args``, ``**kwargs``."""
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    if isinstance(params.star_arg, cst.Param):
        out.append(params.star_arg)
    if params.star_kwarg is not None:
        out.append(params.star_kwarg)
    return out


def constant_test(test: cst.BaseExpression, constants: dict[str, object]) -> bool | None:
    """Whether an ``if`` test is always true or always false: a literal (``if False:``, ``if 0:``),
    or a test of names bound once to a literal (``parallel = False`` ... ``if parallel:``, see
    :func:`constant_names`). None when it depends on anything else."""
    value = literal_value(test)
    if value is NOT_A_LITERAL and constants:
        value = value_with_defaults(test, constants)
    return None if value is NOT_A_LITERAL else bool(value)


def constant_names(scope: cst.CSTNode, nested_declarations: bool = True, walrus: bool = True) -> dict[str, object]:
    """The names of a function (or of a module's top level) bound exactly once, to a literal, by
    a plain assignment (``parallel = False``), and by nothing else: no other assignment, loop
    target, ``with ... as``, ``except ... as``, import, ``del``, parameter, ``:=``, and no
    ``global``/``nonlocal`` of it anywhere in it (nested functions included). Their value is the
    same wherever they are read. Statements are walked, not expressions: ``nested_declarations``
    False (the source has no ``global``/``nonlocal``) skips nested functions and classes, and
    ``walrus`` False (no ``:=`` in the source) skips looking into expressions at all."""
    finder = _scope_bindings(scope, nested_declarations, walrus)
    if finder.unread:
        return {}
    return {name: value for name, value in finder.literal.items()
            if finder.counts[name] == 1 and name not in finder.declared}


def _scope_bindings(scope: cst.CSTNode, nested_declarations: bool, walrus: bool) -> "_Bindings":
    """Every binding of a name by a function (its parameters included) or a module's top level."""
    finder = _Bindings(nested_declarations)
    if isinstance(scope, cst.FunctionDef):
        for param in all_parameters(scope.params):
            finder.count(param.name.value)
        body = scope.body.body if isinstance(scope.body, cst.IndentedBlock) else scope.body.body
    else:
        body = scope.body
    finder.statements(body)
    if walrus:
        named = _NamedExpressions()
        for statement in body:
            statement.visit(named)
        for name in named.names:
            finder.count(name)
    return finder


def is_configuration_value(value: cst.BaseExpression) -> bool:
    """``args.batch_size``, ``cfg.train.lr``, a number, or ``int(...)`` / ``float(...)`` of one: a
    value read from the command line or a configuration, never a tensor with a graph."""
    if isinstance(value, (cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in ("int", "float") \
            and len(value.args) == 1:
        return is_configuration_value(value.args[0].value)
    name = dotted_name(value) if isinstance(value, cst.Attribute) else None
    return name is not None and name.split(".", 1)[0] in CONFIG_NAMES


def bound_once_to(scope: cst.CSTNode, accepts: "Callable[[cst.BaseExpression], bool]",
                  nested_declarations: bool = True, walrus: bool = True) -> set[str]:
    """The names of a function (or of a module's top level) bound exactly once, by a plain
    assignment whose value ``accepts`` takes (``device = torch.device("cuda")``), and by nothing
    else (see :func:`constant_names`, and its two flags, which let a caller that knows the source
    has no ``global``/``nonlocal`` or ``:=`` skip the walks they need)."""
    finder = _scope_bindings(scope, nested_declarations, walrus)
    if finder.unread:
        return set()
    return {name for name, value in finder.values.items()
            if finder.counts.get(name) == 1 and name not in finder.declared and accepts(value)}


def attribute_values(class_node: cst.ClassDef, attribute: str) -> list[cst.BaseExpression] | None:
    """Every value the methods of a class assign to ``self.<attribute>`` by a plain assignment;
    None when another kind of binding touches it (``+=``, a tuple target, ``setattr``, ``del``)."""
    values: list[cst.BaseExpression] = []
    other = False

    class _Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal other
            for target in node.targets:
                found = _self_attribute(target.target)
                if found == attribute:
                    values.append(node.value)
                elif found is None and attribute in _self_attributes_in(target.target):
                    other = True

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            nonlocal other
            other |= _self_attribute(node.target) == attribute

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            nonlocal other
            if _self_attribute(node.target) == attribute:
                if node.value is None:
                    return
                values.append(node.value)

        def visit_Del(self, node: cst.Del) -> None:
            nonlocal other
            other |= attribute in _self_attributes_in(node.target)

        def visit_Call(self, node: cst.Call) -> None:
            nonlocal other
            if isinstance(node.func, cst.Name) and node.func.value in ("setattr", "delattr"):
                other = True

    class_node.body.visit(_Finder())
    return None if other else values


def _self_attribute(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def _self_attributes_in(node: cst.BaseExpression) -> set[str]:
    found = _self_attribute(node)
    if found is not None:
        return {found}
    if isinstance(node, (cst.Tuple, cst.List)):
        return {name for element in node.elements for name in _self_attributes_in(element.value)}
    if isinstance(node, cst.StarredElement):
        return _self_attributes_in(node.value)
    return set()


class _Bindings:
    """Every binding of a name by the statements of a scope (nested scopes' ``global``/``nonlocal``
    included), found by walking statements only."""

    def __init__(self, nested_declarations: bool = True) -> None:
        self.counts: dict[str, int] = {}
        self.literal: dict[str, object] = {}
        self.values: dict[str, cst.BaseExpression] = {}  # what a plain ``name = value`` binds (the last)
        self.declared: set[str] = set()
        self.unread = False  # a statement whose bindings were not read (``match``)
        self._nested = nested_declarations

    def count(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1

    def targets(self, node: cst.BaseExpression | None) -> None:
        if isinstance(node, cst.Name):
            self.count(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self.targets(element.value)
        elif isinstance(node, cst.StarredElement):
            self.targets(node.value)

    def statements(self, body: Sequence[cst.CSTNode], nested: bool = False) -> None:
        for statement in body:
            self.statement(statement, nested)

    def block(self, suite: cst.BaseSuite | None, nested: bool) -> None:
        if suite is None:
            return
        if isinstance(suite, cst.IndentedBlock):
            self.statements(suite.body, nested)
        else:  # a one-line suite: its small statements
            for small in suite.body:
                self.small(small, nested)

    def small(self, node: cst.BaseSmallStatement, nested: bool) -> None:
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            self.declared.update(item.name.value for item in node.names)
        if nested:
            return  # a nested scope's own bindings are not this scope's
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self.targets(target.target)
            if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                self.values[node.targets[0].target.value] = node.value
                value = _signed_literal(node.value)
                if value is not NOT_A_LITERAL:
                    self.literal[node.targets[0].target.value] = value
            elif len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Tuple) \
                    and isinstance(node.value, cst.Tuple) \
                    and len(node.targets[0].target.elements) == len(node.value.elements):
                for element, value in zip(node.targets[0].target.elements, node.value.elements):
                    if isinstance(element.value, cst.Name):  # a, b = args.a, args.b
                        self.values[element.value.value] = value.value
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            self.targets(node.target)
        elif isinstance(node, cst.Del):
            self.targets(node.target)
        elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                while isinstance(bound, cst.Attribute):
                    bound = bound.value
                if isinstance(bound, cst.Name):
                    self.count(bound.value)

    def statement(self, node: cst.CSTNode, nested: bool) -> None:
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                self.small(small, nested)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            if not nested:
                self.count(node.name.value)
            if self._nested:
                self.block(node.body, True)
        elif isinstance(node, cst.If):
            self.block(node.body, nested)
            orelse = node.orelse
            if isinstance(orelse, cst.If):
                self.statement(orelse, nested)
            elif orelse is not None:
                self.block(orelse.body, nested)
        elif isinstance(node, (cst.For, cst.While)):
            if isinstance(node, cst.For) and not nested:
                self.targets(node.target)
            self.block(node.body, nested)
            if node.orelse is not None:
                self.block(node.orelse.body, nested)
        elif isinstance(node, cst.With):
            for item in node.items:
                if item.asname is not None and not nested:
                    self.targets(item.asname.name)
            self.block(node.body, nested)
        elif isinstance(node, (cst.Try, cst.TryStar)):
            self.block(node.body, nested)
            for handler in node.handlers:
                if handler.name is not None and not nested:
                    self.targets(handler.name.name)
                self.block(handler.body, nested)
            if node.orelse is not None:
                self.block(node.orelse.body, nested)
            if node.finalbody is not None:
                self.block(node.finalbody.body, nested)
        else:  # match and anything newer: its bindings are not read, so nothing here is constant
            self.unread = True


class _NamedExpressions(cst.CSTVisitor):
    """The targets of ``:=`` (nested functions' own are theirs, but counting them is only safer)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name):
            self.names.append(node.target.value)


def literal_defaults(function: cst.FunctionDef) -> dict[str, object]:
    """The parameters of ``function`` with a literal default, and those defaults."""
    params = function.params
    found: dict[str, object] = {}
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        value = _signed_literal(param.default) if param.default is not None else NOT_A_LITERAL
        if value is not NOT_A_LITERAL:
            found[param.name.value] = value
    return found


def literal_arguments(call: cst.Call) -> tuple[tuple["int | str", object], ...]:
    """(position or keyword, value) of each argument of a call: its value for a literal,
    ``Ellipsis`` for anything else; a starred argument ends it as ``("*", Ellipsis)``."""
    found: list[tuple["int | str", object]] = []
    for index, arg in enumerate(call.args):
        if arg.star:
            found.append(("*", Ellipsis))
            break
        value = literal_value(arg.value)
        found.append((arg.keyword.value if arg.keyword is not None else index,
                      Ellipsis if value is NOT_A_LITERAL else value))
    return tuple(found)
