"""ML203 load-without-map-location: ``torch.load(...)`` without ``map_location`` in a program
that runs one process per GPU.

Without it, every tensor comes back on the device it was saved from: a checkpoint written by
rank 0 lands on ``cuda:0`` in every process of a DDP job (each rank then holds a full copy on
GPU 0 and runs it out of memory). Flagged in a file that uses ``torch.distributed`` / DDP /
``LOCAL_RANK`` (or reads ``args.local_rank``; not a ``--local_rank`` argument only declared; a
helper's ``torch.distributed`` calls only when something in the project launches ranks),
starts a process group through a helper
of the project (not one that starts it only in a branch its own parameter defaults turn off,
``if local_rank >= 0:`` with ``local_rank=-1``), builds an ``accelerate.Accelerator`` (``accelerate launch`` runs it once per GPU),
or gives a Lightning ``Trainer`` a strategy that runs the script in every rank
(``strategy="ddp"``, ``"fsdp"``, ``"deepspeed"``; not ``"ddp_spawn"``), unless only the first rank loads (``if rank == 0:``, or ``if rank != 0: return``
first) or the group is one process (every ``init_process_group`` given ``world_size=1``, every
``spawn`` ``nprocs=1``). In a program of one process the tensors come back on the GPU they were saved from,
which in practice is the process's own (a reload of what this run saved, a CPU-saved file, one
default GPU): at most a transient copy, which depends on the file, so it is not flagged at
error; a hint (info) when the load restores a model already moved to an accelerator, or an
optimizer in a module that moves modules to one (not a load handed only to optimizers, directly
or through a name nothing else reads: the optimizer keeps the tensors as its state), and the module does not save CPU-only state (a
GPU-saved file is a second copy beside the model while it loads: the peak of a resume). Said more (warning) when the copy is kept and the module says how the file was written:
it moves modules to a GPU and saves state without moving it to the CPU, the load restores a
model or optimizer (``load_state_dict``) and stays in a local name (not deleted or rebound)
through a loop running steps later in the function: a second copy on the GPU for the run.

A load given ``map_location`` onto an accelerator (``"cuda"``, ``f"cuda:{rank}"``, a name bound
to one or the name the module moves its modules with) puts the checkpoint on the GPU itself:
once copied into a model by ``load_state_dict``, a dict kept in a local name through a later
loop of steps (or of the restored model over data) is a second copy of the weights for the run
(warning).

Checked: ``torch.load`` however it is reached (``import torch as t``, ``from torch import
load``, ``torch.serialization.load``), and a loader of the same module that hands its parameter
``map_location=None`` on to it (``load_checkpoint(path)`` leaving it out, or passing None), when
what it returns restores a model or an optimizer. ``map_location`` counts as a keyword or as the second
positional argument; a call with ``**kwargs`` / ``*args`` may pass it on and is not flagged.
``weights_only=True`` does not choose a device. Not checked: ``torch.jit.load`` (TorchScript
archives; a different function), ``torch.hub.load`` (builds a model from a repository),
``safetensors`` loaders (they take ``device=``). A save/load round trip through an in-memory
buffer in the same function (a deep copy) is meant to keep the devices and is not flagged,
nor is a file that saves to the same path and never moves anything to an accelerator (a
tutorial's CPU round trip).

Which loads matter: the result restores a module or optimizer (``model.load_state_dict(...)``,
``optimizer.load_state_dict(...)``), or the file argument / the assigned name says it is a
checkpoint (``ckpt``, ``checkpoint``, ``weights``, ``model``, ``state``, ``optim``,
``resume``...). Not flagged: files that hold no device tensors (scheduler, sampler, scaler
and RNG state, metadata, vocabularies: their names, or the assignments of the names used,
say so); a file the project writes under the name the load spells out
(``os.path.join(checkpoint, "data_args.bin")``) with nothing but CPU state or a run's
arguments (``torch.save(self.data_args, ...)``, ``data_args`` annotated with a plain-field
``@dataclass`` of the project, or ``parser.parse_args()``), in every module that writes it;
a file that another branch of the same function loads with ``map_location`` (a
deliberate choice per branch); per-rank files (``..._rank{rank}.bin``), read back by the rank
that wrote them, on its own device; XLA code (a ``*xla*`` file or class), which saves through
``xm.save`` (CPU tensors); tests (``test_*`` functions and files), which reload what they
saved and compare it in place; a project that sets ``CUDA_VISIBLE_DEVICES`` to one computed
device per process (here or in another module: each rank sees one GPU, ``cuda:0`` is its own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from memlint.static.facts import (
    TORCH_LOAD, TORCH_SAVE, argument_at, descendants, dotted_name, file_name_written, names_in, root_name,
    without_self_returning_calls,
)
from memlint.static.fixes import add_keyword_fix
from memlint.static.rule import Invalid, Rule
from memlint.static.summaries import (
    PINS_ONE_GPU, PROCESS_GROUP, SAVES_CPU_STATE, SAVES_CPU_WEIGHTS, SAVES_DEVICE_STATE, SAVES_DEVICE_WEIGHTS,
    SAVES_MODULE_STATE,
)

# Words in the file argument or the assigned name that say what is loaded.
_CHECKPOINT_WORDS = ("ckpt", "checkpoint", "weight", "model", "state", "pretrained", "resume", "snapshot",
                     "optim", "param", "best", "last", "net")
# torch's gradient scalers: their state_dict is the scale and a few counters, Python numbers
_SCALER_CLASSES = frozenset({"torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler",
                             "torch.amp.grad_scaler.GradScaler"})
_NOT_CHECKPOINT_WORDS = ("rng", "random", "seed", "sched", "sampler", "scaler", "meta", "lexicon", "vocab",
                         "token", "loader", "hparam", "training_args", "stats")
# A file written per rank ("model_rank{rank}.bin") is read back by the rank that wrote it.
_PER_RANK_WORDS = ("rank", "process_index")
_SPAWN = ("torch.multiprocessing.spawn", "torch.multiprocessing.start_processes")
# Text that marks a distributed program (a finding there is an error).
_DISTRIBUTED_TEXT = ("LOCAL_RANK", "DistributedDataParallel", "init_process_group")
# The rank a launcher gives, read (``args.local_rank``, ``training_args.local_rank``); not a
# ``--local_rank`` argument only declared: a script may declare it and still run one process.
_LOCAL_RANK_READ = re.compile(r"\.local_rank\b")
# A Lightning Trainer given a strategy that launches one process per device by running this
# script again in each (``strategy="ddp"``; older ``accelerator=`` / ``distributed_backend=``):
# every rank runs what follows ``trainer.fit`` too. Not ``ddp_spawn`` / ``ddp_notebook`` /
# ``ddp_fork``, whose workers end with ``fit``.
_RANKS_LAUNCHED = re.compile(
    r"""\b(strategy|accelerator|distributed_backend)\s*=\s*(?:[^,()]*?\s)?["']"""
    r"""(ddp(?!_spawn|_notebook|_fork)\w*|fsdp\w*|deepspeed\w*)["']""")


# Questions any program may ask (``if dist.is_initialized():``): no evidence of a process group.
_DISTRIBUTED_QUERIES = ("is_initialized", "is_available", "is_nccl_available", "is_torchelastic_launched")
_MAIN_BLOCK = re.compile(r"""^if\s+__name__\s*==\s*['"]__main__['"]""", re.MULTILINE)


def _occurrences(node: cst.CSTNode, name: str) -> int:
    """How many times the variable ``name`` is written or read in ``node``."""
    return sum(1 for found in descendants(node) if isinstance(found, cst.Name) and found.value == name)


def _without_imports(code: str) -> str:
    """The code without its ``import`` / ``from ... import`` lines (what it uses, not what it names)."""
    return "\n".join(line for line in code.splitlines()
                     if not line.lstrip().startswith(("import ", "from ")))


@dataclass
class _Load:
    node: cst.Call
    source: str | None  # the name of the file/buffer argument
    words: str  # the file argument and the assigned names, lower case
    described: str  # the same, with the assignments of the names they use
    restores_state: bool = False  # feeds model/optimizer.load_state_dict
    returned_by: str | None = None  # the function that returns what it loads (``return torch.load(p)``)
    kept_in: frozenset[str] = frozenset()  # the local names it is assigned to
    loops_before: int = 0  # how many loops the walk had entered when it loaded
    rank_zero_only: bool = False  # under ``if rank == 0:``, or after ``if rank != 0: return``
    path_text: str = ""  # the file argument as written
    beside_the_model: bool = False  # copied into a module already moved to an accelerator here
    # restored into an optimizer built over a model not moved yet (its state is cast onto the CPU):
    # beside the model only while a name still holds the checkpoint
    into_unmoved_optimizer: bool = False
    # a module it was copied into is moved to an accelerator later in the function while a local
    # name still holds the load (``model.load_state_dict(ckpt["state_dict"]); model = model.cuda()``)
    moved_while_held: bool = False
    # the parameters of its function whose load_state_dict it feeds (``model`` of ``resume(model,
    # path)``): moved to an accelerator by every caller in view, they are beside it too
    into_parameters: frozenset[str] = frozenset()
    restored_into: frozenset[str] = frozenset()  # the modules/optimizers whose load_state_dict it feeds
    only_into: frozenset[str] = frozenset()  # passed straight to these load_state_dict calls, read nowhere else
    handed_whole: int = 0  # load_state_dict calls given a name it is kept in, as it is (``opt.load_state_dict(state)``)
    written_name: str | None = None  # the file's name or naming scheme, as written (see file_name_written)


class LoadWithoutMapLocation(Rule):
    code = "ML203"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._saved_to: dict[int, set[str]] = {}  # function id -> names of buffers torch.save wrote
        self._numbers_only_loads: set[int] = set()  # id() of loads handed straight to a scaler's or schedule's state
        self._only_cpu_saves: bool | None = None  # see _project_saves_only_cpu_state
        self._loaded_into: dict[int, dict[str, _Load]] = {}  # function id -> name -> the load it holds
        self._feeds_state_dict: set[int] = set()  # id() of expressions passed to load_state_dict
        # id() of a call passed straight to load_state_dict (read nowhere else) -> whose it is
        self._fed_into: dict[int, set[str]] = {}
        self._fed_on_device: set[int] = set()  # ... of a module already moved to an accelerator
        self._mapped: dict[int, set[str]] = {}  # function id -> files loaded with map_location
        path = checker.path.replace("\\", "/")
        base = path.rsplit("/", 1)[-1]
        self._test_file = base.startswith("test_") or base.endswith("_test.py") or "/tests/" in path
        self._xla_file = "xla" in base
        self._saved_paths: set[str] = set()  # the file arguments of torch.save in this module, as written
        # torch.save of something not moved to the CPU on the way (``model.state_dict()``, a
        # checkpoint dict): in a file that moves modules to a GPU, what it writes holds CUDA tensors
        # The last names of calls whose result feeds a load_state_dict (``best_model_state()`` in
        # ``model.load_state_dict(self.checkpointer.best_model_state())``)
        self._fed_to_state_dict: set[str] = set()
        # ... of those, the ones whose result is copied into a module already moved to an accelerator
        self._fed_on_device_calls: set[str] = set()
        self._function_of_load: dict[int, object] = {}  # id() of a load -> its function
        self._deleted: dict[int, set[str]] = {}  # function id -> names ``del``-eted in it
        # Nothing in the file moves a tensor to an accelerator: what it saves itself is on the CPU.
        self._cpu_only_file = _MOVES_TO_ACCELERATOR.search(checker.source) is None
        self._code: str | None = None  # the source without comments, made when first needed
        # id() of a def -> (map_location parameter, file parameter) when it wraps torch.load (see _load_wrapper)
        self._wrappers: dict[int, tuple[str, str | None] | None] = {}
        self._may_wrap = "map_location" in checker.source  # a wrapper names the parameter it passes on
        # Modules moved to an accelerator so far: by function (id), and "class" for self.x (moved
        # in any method, __init__ first): a load copied into one of them lands beside it
        self._moved: dict[object, set[str]] = {}
        # Functions of this module started in each process by ``mp.spawn(worker, ...)``: the ranks
        # run them (and what they call); the process that spawns them is one process.
        self._spawned: set[str] = set()
        self._spawning: set[int] = set()  # id() of the functions that call mp.spawn (the parent's)
        # id() of a def of this module -> parameter -> for each call of it, whether the module
        # passed there had been moved to an accelerator by the caller (``resume(model, path)``
        # after ``model = Net().cuda()``)
        self._handed_moved: dict[int, dict[str, list[bool]]] = {}
        self._onto_device: list[_Load] = []  # loads given ``map_location=<an accelerator>``
        self._collected_loads: set[int] = set()  # id() of loads onto the device a comprehension collects

    def visit_Assign(self, node: cst.Assign) -> None:
        """A name bound anew (``model = MobileNetV2()``) is no longer the module moved before;
        a move in the value (``model = model.cuda()``) puts it back, visited after this."""
        for target in node.targets:
            name = dotted_name(target.target)
            if name is not None:
                self._moved.get("class" if name.startswith("self.") else id(self.facts.function), set()).discard(name)

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._note_loads_collected(node.elt)

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._note_loads_collected(node.value)

    def _note_loads_collected(self, element: cst.BaseExpression) -> None:
        """``[torch.load(f, map_location=device) for f in files]``: every file of the list is on
        the GPU at once (the folds of an ensemble, used one at a time), where ``map_location="cpu"``
        would put each on the device only when a model copies it."""
        if not (isinstance(element, cst.Call) and self.facts.qualified_name(element.func) in TORCH_LOAD):
            return
        if self._test_file or self.facts.function.name.startswith("test"):
            return
        positional = [arg.value for arg in element.args if arg.keyword is None]
        location = _keyword(element, "map_location") or (positional[1] if len(positional) >= 2 else None)
        if location is None or not self._onto_accelerator(location):
            return
        self._collected_loads.add(id(element))
        self.report(element, "every checkpoint of the list is loaded onto the device at once",
                    help="load them with map_location='cpu' and let load_state_dict copy one at a time onto the "
                         "model's device",
                    needs_grad=False, severity="warning")

    def visit_Del(self, node: cst.Del) -> None:
        self._deleted.setdefault(id(self.facts.function), set()).update(names_in(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict":
            self._note_state_dict_load(node)
            return
        if isinstance(func, cst.Attribute) and func.attr.value in ("cuda", "to") and \
                _MOVES_TO_ACCELERATOR.search(_text(node)) is not None:
            # model.cuda(), model.to(device), self.model = net.to(device), m = DP(Net().cuda())
            moved = dotted_name(without_self_returning_calls(func.value))
            for name in ({moved} if moved is not None else set()) | set(self._checker.assign_targets):
                # self.x, or the module itself (``self.to(device)`` in its __init__): for every method
                in_class = name.startswith("self.") or (name == "self" and facts.function.class_info is not None)
                self._moved.setdefault("class" if in_class else id(facts.function), set()).add(name)
            if moved is not None:
                self._note_moved_while_held(moved)
        self._note_modules_handed(node)
        qualified = facts.qualified_name(func)
        if qualified in _SPAWN:
            target = node.args[0].value if node.args and node.args[0].keyword is None else _keyword(node, "fn")
            if isinstance(target, cst.Name):
                self._spawned.add(target.value)
            elif isinstance(target, cst.Attribute) and dotted_name(target) == f"self.{target.attr.value}":
                self._spawned.add(target.attr.value)  # mp.spawn(self._train, ...): a method of the class
            if facts.function is not facts.module_scope:
                self._spawning.add(id(facts.function))  # this function runs in the parent, which spawns
        if qualified in TORCH_SAVE:
            positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
            target = positional[1] if len(positional) > 1 else _keyword(node, "f")
            if target is not None:
                name = root_name(target)
                if name:
                    self._saved_to.setdefault(id(facts.function), set()).add(name)
                self._saved_paths.add(_text(target))
            return
        if any(arg.star for arg in node.args):
            return  # *args / **kwargs may carry map_location
        if qualified not in TORCH_LOAD:
            source = self._wrapped_load(node) if self._may_wrap else None
            if source is not None:
                self._note_load(node, source or None, wrapped=True)
            return
        positional = [arg.value for arg in node.args if arg.keyword is None]
        location = _keyword(node, "map_location") or (positional[1] if len(positional) >= 2 else None)
        if location is not None:
            mapped = positional[0] if positional else _keyword(node, "f")
            if mapped is not None:
                self._mapped.setdefault(id(facts.function), set()).add(_text(mapped))
            if self._onto_accelerator(location):
                self._note_load_onto_device(node, mapped)
            return
        self._note_load(node, positional[0] if positional else _keyword(node, "f"))

    def _wrapped_load(self, node: cst.Call) -> "cst.BaseExpression | str | None":
        """``load_checkpoint(path)`` where ``load_checkpoint`` of this module hands its
        parameter ``map_location=None`` on to ``torch.load``: a load without map_location when
        the call leaves it out (or passes None). The file argument of the call ("" when not
        seen), or None when the call is no such load."""
        callees = self.facts.callees(node)
        if callees is None or len(callees[0]) != 1:
            return None
        definition, bound = callees[0][0], callees[1]
        wrapper = self._wrappers.get(id(definition), False)
        if wrapper is False:
            wrapper = self._wrappers[id(definition)] = self._load_wrapper(definition)
        if wrapper is None:
            return None
        location, file = wrapper
        passed = self.facts.argument_nodes(node, definition, bound)
        given = passed.get(location)
        if given is not None and not (isinstance(given, cst.Name) and given.value == "None"):
            return None
        return passed.get(file, "") if file is not None else ""

    def _load_wrapper(self, definition: cst.FunctionDef) -> tuple[str, str | None] | None:
        """(the parameter passed as ``map_location``, the one passed as the file) when the
        function calls ``torch.load(f, map_location=p)`` with a parameter ``p`` that defaults
        to None."""
        params = {param.name.value: param for param in (*definition.params.posonly_params, *definition.params.params,
                                                        *definition.params.kwonly_params)}
        stack: list[cst.CSTNode] = [definition.body]
        while stack:
            current = stack.pop()
            if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue  # a nested definition runs when called, not here
            if isinstance(current, cst.Call) and self.facts.qualified_name(current.func) in TORCH_LOAD:
                positional = [arg.value for arg in current.args if arg.keyword is None and not arg.star]
                location = _keyword(current, "map_location") or (positional[1] if len(positional) > 1 else None)
                file = positional[0] if positional else _keyword(current, "f")
                if isinstance(location, cst.Name) and location.value in params:
                    default = params[location.value].default
                    if isinstance(default, cst.Name) and default.value == "None":
                        return location.value, file.value if isinstance(file, cst.Name) and file.value in params \
                            else None
                return None
            stack.extend(current.children)
        return None

    def _note_load(self, node: cst.Call, source: cst.BaseExpression | None, wrapped: bool = False) -> None:
        """A load without map_location (``torch.load(path)``, or, ``wrapped``, a loader of this
        module that leaves it None), decided when its function and the module have been walked.
        A loader's call counts only when what it returns restores a model or an optimizer: what
        else it may load (trainer state, RNG state) its arguments do not say."""
        facts = self.facts
        function = facts.function
        if self._test_file or function.name.startswith("test"):
            return  # tests reload what they saved and compare it where it was
        if self._xla_file or "xla" in (function.class_info.name.lower() if function.class_info else ""):
            return  # XLA code saves through xm.save, which moves every tensor to the CPU first
        targets = self._checker.assign_targets
        words = " ".join([_text(source) if source is not None else ""] + sorted(targets)).lower()
        described = " ".join([self._describe(source) if source is not None else ""] + sorted(targets)).lower()
        if wrapped:
            described += " " + " ".join(_text(arg.value) for arg in node.args).lower()
        if any(word in described for word in _PER_RANK_WORDS):
            return  # a per-rank file, loaded by the rank that saved it: same device
        load = _Load(node, root_name(source) if source is not None else None, words, described,
                     restores_state=id(node) in self._feeds_state_dict, rank_zero_only=self._rank_zero_only(),
                     beside_the_model=id(node) in self._fed_on_device,
                     only_into=frozenset(self._fed_into.get(id(node), ())),
                     path_text=_text(source) if source is not None else "",
                     kept_in=frozenset(name for name in targets if "." not in name),
                     loops_before=len(facts.loop_of_node),
                     written_name=file_name_written(argument_at(node, 0, "f"), function.stored_values.get))
        for name in targets:
            self._loaded_into.setdefault(id(function), {})[name] = load
        self._function_of_load[id(node)] = function

        saved_first = load.source is not None and load.source in self._saved_to.get(id(function), ())

        def decide_in_function() -> None:
            if load.handed_whole and len(load.kept_in) == 1 and _occurrences(function.node, *load.kept_in) \
                    == 1 + load.handed_whole:
                # ``state = torch.load(p); optimizer.load_state_dict(state)``, the name read nowhere else
                load.only_into = load.restored_into
            if any(returned is node for returned in function.returned_nodes):
                load.returned_by = function.name
            if saved_first:
                return  # torch.save(obj, buffer) ... torch.load(buffer): a deep copy on purpose
            if source is not None and _text(source) in self._mapped.get(id(function), ()):
                return  # another branch maps the same file: this one keeps the devices on purpose
            if not load.restores_state:
                if wrapped:
                    return
                if any(word in load.described for word in _NOT_CHECKPOINT_WORDS):
                    return  # scheduler/RNG/sampler state, metadata, vocabularies: no device tensors
                if not any(word in load.words for word in _CHECKPOINT_WORDS):
                    if load.returned_by is not None:
                        # ``return torch.load(path)``: a checkpoint when a caller here copies it into a model
                        self.at_module_exit(lambda: load.returned_by in self._fed_to_state_dict and self._report(load))
                    return  # nothing says this is a model or optimizer checkpoint
            self.at_module_exit(lambda: self._report(load))

        self.at_function_exit(decide_in_function)

    def _rank_zero_only(self) -> bool:
        """Does only the first rank get here: inside ``if rank == 0:`` / ``if is_main_process():``
        (or the ``else`` of ``if rank != 0:``), or after ``if rank != 0: return`` at the top of
        the function?"""
        for if_id, branch in self.facts.branch_path:
            node = self.facts.if_nodes.get(if_id)
            if node is not None and _rank_test(node.test) == ("first" if branch == "body" else "others"):
                return True
        function = self.facts.function.node
        body = getattr(function, "body", None)
        for statement in body.body if isinstance(body, cst.IndentedBlock) else ():
            if isinstance(statement, cst.If) and _rank_test(statement.test) == "others" and _only_returns(statement.body):
                return True
        return False

    def _describe(self, node: cst.BaseExpression, depth: int = 0) -> str:
        """The text of ``node`` and of the assignments of the names it uses (two levels), so
        ``torch.load(path)`` after ``path = os.path.join(d, "scheduler.pt")`` reads as a scheduler."""
        parts = [_text(node)]
        if depth < 2:
            for name in sorted(names_in(node))[:8]:
                binding = self.facts.lookup(name)
                if binding is not None and isinstance(binding.node, cst.BaseExpression) and binding.node is not node:
                    parts.append(self._describe(binding.node, depth + 1))
        return " ".join(parts)

    def _optimizes_a_model_not_moved(self, optimizer: str, moved: set[str]) -> bool:
        """Was ``optimizer`` built here over a model's parameters (``torch.optim.Adam(model.parameters(),
        ...)``) and is that model not moved to an accelerator yet? Its ``load_state_dict`` casts
        the loaded state onto those parameters' device: the CPU."""
        binding = self.facts.lookup(optimizer)
        built = binding.node if binding is not None else None
        if not (isinstance(built, cst.Call) and (self.facts.qualified_name(built.func) or "").startswith("torch.optim.")
                and built.args):
            return False
        params = built.args[0].value
        if not (isinstance(params, cst.Call) and isinstance(params.func, cst.Attribute)
                and params.func.attr.value == "parameters"):
            return False
        model = dotted_name(params.func.value)
        return model is not None and not any(model == name or model.startswith(name + ".") for name in moved)

    def _restores_weights_saved_on_the_cpu(self, load: _Load) -> bool:
        """Does the load restore models only (``net.load_state_dict(load_net)``, no optimizer)
        in a project whose saves of a model's weights (this module's and the others') all move
        them to the CPU first, one at least (BasicSR's ``save_network``; its training state, the
        optimizers', is saved from the device and restored elsewhere)?"""
        if not (load.restores_state and load.restored_into) or any(self._is_optimizer(name) for name in load.restored_into):
            return False
        cpu, device = self._saves(SAVES_CPU_WEIGHTS), self._saves(SAVES_DEVICE_WEIGHTS)
        project = self.facts.project
        if project is not None and not device:
            elsewhere = project.saved_weights(self._checker.path)
            if elsewhere is None:
                return False
            cpu, device = cpu or elsewhere[0], elsewhere[1]
        return cpu and not device

    def _holds_numbers_only(self, owner: cst.BaseExpression) -> bool:
        """Is ``owner`` (of ``owner.load_state_dict(...)``) apex's ``amp`` module, or an object
        built by a torch learning-rate scheduler or gradient scaler class? Their state is numbers."""
        qualified = self.facts.qualified_name(owner) or ""
        if qualified in ("apex.amp", "apex.amp.amp"):
            return True
        binding = self.facts.lookup(dotted_name(owner) or "")
        built = binding.node if binding is not None else None
        if not isinstance(built, cst.Call):
            return False
        made = self.facts.qualified_name(built.func) or ""
        return made.startswith("torch.optim.lr_scheduler.") or made in _SCALER_CLASSES

    def _note_state_dict_load(self, node: cst.Call) -> None:
        """``model.load_state_dict(x)`` / ``optimizer.load_state_dict(x)``: x holds device tensors."""
        owner = node.func.value
        owner_dotted = dotted_name(owner) or ""
        moved = self._moved.get(id(self.facts.function), set()) | self._moved.get("class", set())
        # model.module.load_state_dict(...) of a moved model, or the optimizer of a moved model
        # ... or an optimizer's state: a resume of training, which in a module that moves its
        # modules to an accelerator runs there (the state comes back beside the model's)
        on_device = any(owner_dotted == name or owner_dotted.startswith(name + ".") for name in moved) or (
            "optim" in owner_dotted.rsplit(".", 1)[-1].lower() and not self._cpu_only_file)
        # an optimizer over a model not moved yet casts the state onto the CPU: beside nothing on the
        # device, once the checkpoint is let go (see _Load.into_unmoved_optimizer)
        unmoved_optimizer = on_device and not any(
            owner_dotted == name or owner_dotted.startswith(name + ".") for name in moved) \
            and self._optimizes_a_model_not_moved(owner_dotted, moved)
        owner_name = owner_dotted.rsplit(".", 1)[-1].lower()
        if self._holds_numbers_only(owner):
            # apex.amp.load_state_dict(torch.load(p)), scaler.load_state_dict(...): the file holds the
            # state of a loss scaler or a learning-rate schedule, numbers, no device tensor
            self._numbers_only_loads.update(id(arg.value) for arg in node.args if isinstance(arg.value, cst.Call))
            return
        if not (self.facts.is_module_expr(owner) or "optim" in owner_name or "model" in owner_name
                or owner_name in ("net", "module", "opt")):
            return
        for arg in node.args:
            value = arg.value
            while isinstance(value, (cst.Subscript, cst.Attribute)):
                value = value.value
            if isinstance(value, cst.Name):
                load = self._loaded_into.get(id(self.facts.function), {}).get(value.value) \
                    or self._onto_device_load_behind(value.value)
                if load is not None:
                    load.restores_state = True
                    if unmoved_optimizer:
                        load.into_unmoved_optimizer = True
                    else:
                        load.beside_the_model |= on_device
                    restored = owner_dotted[:-len(".module")] if owner_dotted.endswith(".module") else owner_dotted
                    load.restored_into |= {restored}
                    if arg.value is value:
                        load.handed_whole += 1
                    root = owner_dotted.split(".", 1)[0]
                    binding = self.facts.function.bindings.get(root)
                    if root in self.facts.function.parameters and binding is not None \
                            and isinstance(binding.node, cst.Param):  # the caller's module, not rebound
                        load.into_parameters |= {root}
                    elif owner_dotted == "self" and self.facts.function.class_info is not None:
                        load.into_parameters |= {"self"}  # self.load_state_dict(...) in a method
                    continue
                binding = self.facts.lookup(value.value)
                value = binding.node if binding is not None else None
            if isinstance(value, cst.Call):
                self._feeds_state_dict.add(id(value))
                if value is arg.value:  # optimizer.load_state_dict(torch.load(path)): read there only
                    self._fed_into.setdefault(id(value), set()).add(owner_dotted)
                if on_device:
                    self._fed_on_device.add(id(value))
                called = dotted_name(value.func)
                if called is not None:
                    self._fed_to_state_dict.add(called.rsplit(".", 1)[-1])
                    if on_device:
                        self._fed_on_device_calls.add(called.rsplit(".", 1)[-1])

    def _note_moved_while_held(self, moved: str) -> None:
        """``moved`` goes to an accelerator here: a load of this function copied into it earlier
        and still held in a local name (not deleted, not rebound so far) is on the GPU it was
        saved from beside the weights it was copied into, now on the GPU too."""
        function = self.facts.function
        deleted = self._deleted.get(id(function), set())
        for load in self._loaded_into.get(id(function), {}).values():
            if load.moved_while_held or not load.restores_state or not load.kept_in or load.kept_in & deleted:
                continue
            if moved not in load.restored_into and not any(name.startswith(moved + ".") for name in load.restored_into):
                continue
            if all((binding := function.bindings.get(name)) is not None and binding.node is load.node
                   for name in load.kept_in):
                load.moved_while_held = True

    def _onto_device_load_behind(self, name: str) -> _Load | None:
        """A load onto the device that ``name`` was computed from in this function (``state =
        {k.removeprefix("module."): v for k, v in payload["state_dict"].items()}`` after ``payload =
        torch.load(path, map_location=device)``): its tensors are what ``name`` hands on."""
        function = self.facts.function
        for held, load in self._loaded_into.get(id(function), {}).items():
            if held != name and any(load is other for other in self._onto_device) \
                    and function.derives_from({name}, {held}):
                return load
        return None

    def _note_modules_handed(self, call: cst.Call) -> None:
        facts = self.facts
        found = facts.callees(call) if call.args else None
        if found is None:
            return
        moved = self._moved.get(id(facts.function), set()) | self._moved.get("class", set())
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        receiver = call.func.value if found[1] and isinstance(call.func, cst.Attribute) else None
        for definition in found[0]:
            if receiver is not None:  # model.restore_weights(path): the method's self is the caller's model
                self._handed_moved.setdefault(id(definition), {}).setdefault("self", []).append(
                    (dotted_name(receiver) or "") in moved)
            scope = facts.function_scopes.get(id(definition))
            parameters = scope.parameters if scope is not None else tuple(
                param.name.value for param in definition.params.params if param.name.value not in ("self", "cls"))
            for parameter, value in zip(parameters, positional):
                self._handed_moved.setdefault(id(definition), {}).setdefault(parameter, []).append(
                    (dotted_name(value) or "") in moved)

    def _moved_by_every_caller(self, load: _Load) -> bool:
        """Does every call in view of the load's function hand it, for a parameter the load is
        copied into, a module its caller had moved to an accelerator?"""
        function = self._function_of_load.get(id(load.node))
        if function is None or not load.into_parameters:
            return False
        handed = self._handed_moved.get(id(function.node), {})
        return any(handed.get(parameter) and all(handed[parameter]) for parameter in load.into_parameters)

    def _outside_the_spawned_ranks(self, load: _Load) -> bool:
        """The module spawns its ranks itself (``mp.spawn(train_worker, ...)``) and the load is in
        a function that only the module's own top-level code, or the function that spawns, calls
        (directly or through other functions), never a spawned one: the parent process runs it,
        once (``load_trained_model()`` after the spawned training finished, a searcher's
        ``self._postprocess()`` after ``mp.spawn(self._train, ...)``). A function with a caller
        not known here may run in a rank."""
        module_scope = self.facts.module_scope
        function = self._function_of_load.get(id(load.node))
        if not self._spawned or function is None or function is module_scope:
            return False
        calls_into = self.facts.calls_into
        seen, frontier = set(), [function]
        while frontier:
            scope = frontier.pop()
            if id(scope) in seen:
                continue
            seen.add(id(scope))
            if scope.name in self._spawned and (scope.parent is module_scope or scope.class_info is not None):
                return False
            if id(scope) in self._spawning:
                continue  # the function that spawns the ranks runs in the parent: so does what it calls
            callers = [call.caller for call in calls_into.get(id(scope.node), ())]
            if not callers:
                return False  # called from elsewhere (another module, a framework): maybe by a rank
            frontier.extend(caller for caller in callers if caller is not module_scope)
        return True

    def _run_by_this_script_only(self, load: _Load, code: str) -> bool:
        """Is the load in a top-level function that only this module's own top-level code calls
        (its ``__main__`` block), in a module that starts no group of processes (no
        ``init_process_group``, no launcher, no helper that starts one: its ``torch.distributed``
        use is queries for whoever imports its other parts)? Run as a script, it is one process."""
        function = self._function_of_load.get(id(load.node))
        facts = self.facts
        if function is None or function.parent is not facts.module_scope or function.class_info is not None \
                or facts.project is None or not facts.module_name:
            return False
        if any(text in code for text in _DISTRIBUTED_TEXT) or _RANKS_LAUNCHED.search(code) is not None \
                or _LOCAL_RANK_READ.search(code) is not None or self._builds_accelerator(code) \
                or self._starts_process_group():
            return False
        sites = facts.call_sites.get(function.name, [])
        if not sites or any(site.caller is not facts.module_scope for site in sites):
            return False
        here = facts.project.file_of_path(self._checker.path)
        return facts.project.called_from_elsewhere(facts.module_name, function.name, here) is False

    def _builds_accelerator(self, code: str) -> bool:
        """Does the module build an ``accelerate.Accelerator``? ``accelerate launch`` then runs
        it in one process per GPU, and every process runs the load."""
        names = [local for local, qualified in self.facts.imports.aliases.items()
                 if qualified in ("accelerate.Accelerator", "accelerate.accelerator.Accelerator", "accelerate")]
        return any(re.search(rf"\b{re.escape(name)}(\.Accelerator)?\s*\(", code) for name in names)

    def _starts_process_group(self) -> bool:
        """Does this module start a process group through a helper of the project
        (``utils.init_distributed_mode(args)``)?"""
        facts = self.facts
        return any(PROCESS_GROUP in scope.effects for scope in (facts.module_scope, *facts.function_scopes.values())) \
            or facts.effect_through_project(PROCESS_GROUP) is True

    def _pins_one_gpu(self) -> bool:
        """Does this module, or another of the project, set ``CUDA_VISIBLE_DEVICES`` to one
        computed device per process (``os.environ["CUDA_VISIBLE_DEVICES"] = str(rank % 8)``)?"""
        if any(PINS_ONE_GPU in scope.effects for scope in self.facts.function_scopes.values()) or \
                PINS_ONE_GPU in self.facts.module_scope.effects:
            return True
        project = self.facts.project
        return project is not None and project.pins_one_gpu(project.file_of_path(self._checker.path).path)

    def _code_text(self) -> str:
        """The module's text without its comments: a comment that mentions ``LOCAL_RANK`` or
        ``strategy="ddp"`` starts no process."""
        if self._code is None:
            self._code = _COMMENT.sub("", self._checker.source)
        return self._code

    def _names_no_accelerator(self) -> bool:
        """Does the module's code (comments left out) name no accelerator at all: no ``.cuda()``,
        no ``"cuda"``/``"mps"`` device, no ``torch.cuda`` call, no launcher or rank? Its
        ``.to(self.device)`` then moves to a device it makes itself, the CPU
        (``args.device = torch.device('cpu')``, the CUDA line commented out)."""
        return _NAMES_AN_ACCELERATOR.search(self._code_text()) is None

    def _onto_accelerator(self, location: cst.BaseExpression) -> bool:
        """Does ``map_location`` put the tensors on an accelerator: a device written as one
        (``"cuda"``, ``f"cuda:{rank}"``, ``torch.device("cuda")``), a name bound to one in view,
        or the name this module moves its modules with (``model.to(device)``)? Not the CPU, not a
        function or a mapping (``lambda storage, loc: storage``), not a name nothing here moves to."""
        if isinstance(location, (cst.Lambda, cst.Dict)):
            return False
        text = _text(location)
        if _ACCELERATOR_WORD.search(text):
            return True
        if "cpu" in text.lower() or not isinstance(location, (cst.Name, cst.Attribute)):
            return False
        if isinstance(location, cst.Name):
            binding = self.facts.lookup(location.value)
            if binding is not None and isinstance(binding.node, cst.BaseExpression) and binding.node is not location:
                bound = _text(binding.node)
                if _ACCELERATOR_WORD.search(bound):
                    return True
                if "cpu" in bound.lower():
                    return False
        if self._cpu_only_file:
            return False
        return re.search(rf"\.to\(\s*{re.escape(text)}\s*[,)]|device\s*=\s*{re.escape(text)}\s*[,)]",
                         self._code_text()) is not None

    def _note_load_onto_device(self, node: cst.Call, source: cst.BaseExpression | None) -> None:
        """``checkpoint = torch.load(path, map_location=device)``: the checkpoint is on the GPU
        by the call itself. Once ``load_state_dict`` has copied it into a model, the dict is a
        second copy of the weights: said when it stays in a local name while a loop of steps (or
        of the restored model over data) runs later in the function."""
        facts = self.facts
        function = facts.function
        if self._test_file or function.name.startswith("test"):
            return  # tests reload what they saved and compare it where it was
        load = _Load(node, root_name(source) if source is not None else None, "", "",
                     path_text=_text(source) if source is not None else "",
                     kept_in=frozenset(name for name in self._checker.assign_targets if "." not in name),
                     loops_before=len(facts.loop_of_node),
                     restores_state=id(node) in self._feeds_state_dict)
        for name in load.kept_in:
            self._loaded_into.setdefault(id(function), {})[name] = load
        self._function_of_load[id(node)] = function
        self._onto_device.append(load)
        self.at_function_exit(lambda: self._report_onto_device(load))

    def _report_onto_device(self, load: _Load) -> None:
        if id(load.node) in self._collected_loads:
            return  # said where the list is made
        held = min(load.kept_in, default="")
        if self._kept_through_steps(load, or_running_the_model=True):
            self.report(load.node, f"'{held}', loaded onto the device, keeps a second copy of the weights through "
                                   "the loop after it",
                        help="del the checkpoint once load_state_dict has copied it, or load with map_location='cpu' "
                             "(load_state_dict copies onto the model's device)",
                        needs_grad=False, severity="warning")
        # Not said: a load onto the device beside the model it restores, or before the model moves
        # there, with the dict let go once copied. The peak of that restore holds two copies, but
        # maintainers' own fixes load this way (map_location=device): on the fixed twins of the
        # recall benchmark a hint there said more of the fixes than of the reports it named.

    def _rebound(self, load: _Load) -> bool:
        """Is a name the load was kept in bound to something else later in its function
        (``checkpoint = None``)?"""
        function = self._function_of_load.get(id(load.node))
        return function is not None and any(
            (binding := function.bindings.get(name)) is None or binding.node is not load.node for name in load.kept_in)

    def _deleted_in_function(self, load: _Load) -> bool:
        function = self._function_of_load.get(id(load.node))
        return function is not None and bool(load.kept_in & self._deleted.get(id(function), set()))

    def _kept_through_steps(self, load: _Load, or_running_the_model: bool = False) -> bool:
        """Is the load copied into a model or optimizer (``load_state_dict``) and held in a local
        name that a loop running steps, walked after it in the same function, outlives (neither
        deleted nor rebound)? ``or_running_the_model``: also a loop, not over a fixed few items, that
        runs the model the load restored (an evaluation: ``self.model.generate(batch)`` each time)."""
        if not load.restores_state or not load.kept_in or self._deleted_in_function(load):
            return False
        function = self._function_of_load.get(id(load.node))
        if function is None:
            return False
        if self._rebound(load):
            return False  # rebound later (checkpoint = None): not kept
        later = [loop for loop in list(self.facts.loop_of_node.values())[load.loops_before:] if loop.scope is function]
        if any(loop.runs_steps for loop in later):
            return True
        return or_running_the_model and any(  # by what it does, not by the names of what it walks
            not (loop.bounded or loop.over_parts) and _uses_any(names_in(loop.node.body), load.restored_into)
            for loop in later)

    def _kept_on_gpu(self, load: _Load) -> bool:
        """In one process: is what this load reads back a checkpoint of this program's GPU
        state, copied into a model and then kept on the GPU while the function trains? The
        module moves modules to an accelerator and saves state without moving it to the CPU
        first; the load feeds ``load_state_dict``; it is held in a local name that a loop
        running steps, walked after it, outlives (neither deleted nor rebound): a second copy
        of the weights (and optimizer state) on the GPU for the whole run."""
        if not self._saves_device_state_here() or load.rank_zero_only:
            return False
        return self._kept_through_steps(load)

    def _uses_distributed(self, code: str) -> bool:
        """Does the code use ``torch.distributed`` or a distributed wrapper it imports:
        ``dist.get_rank()``, ``init_process_group(...)``, ``torch.distributed.barrier()`` (``code``:
        without its import lines)? In a helper module the import is enough (its callers are the
        distributed program, unless nothing in the project launches ranks); in a script (a
        ``__main__`` block), which decides how it runs, an
        import alone (``import torch.distributed as dist`` in a single-process inference script,
        never used) is no evidence of one process per GPU."""
        imports = self.facts.imports
        if not imports.uses_distributed:
            return False
        if not _MAIN_BLOCK.search(code):
            # a helper: its callers are the distributed program, if the project has one
            project = self.facts.project
            return project is None or project.may_launch_ranks()
        queries = "|".join(_DISTRIBUTED_QUERIES)
        if re.search(rf"\btorch\.distributed\.(?!(?:{queries})\b)\w", code):
            return True
        for local, qualified in imports.aliases.items():
            if not (qualified.startswith(("torch.distributed", "torch.nn.parallel.distributed"))
                    or qualified.endswith(("DistributedDataParallel", "FullyShardedDataParallel"))):
                continue
            if local.startswith("*") or (qualified.rsplit(".", 1)[-1] not in _DISTRIBUTED_QUERIES and re.search(
                    rf"(?<![\w.]){re.escape(local)}\s*(?:\(|\.(?!(?:{queries})\b)\w)", code)):
                return True
        return False

    def _is_optimizer(self, name: str) -> bool:
        """Does ``name`` hold an optimizer: built by a ``torch.optim`` class in view, or so named
        (``optimizer``, ``self.optim_g``)? Its ``load_state_dict`` moves the loaded state onto its
        parameters' device, keeping a tensor already there as it is."""
        binding = self.facts.lookup(name)
        value = binding.node if binding is not None else None
        if isinstance(value, cst.Call) and (self.facts.qualified_name(value.func) or "").startswith("torch.optim."):
            return True
        return "optim" in name.rsplit(".", 1)[-1].lower()

    def _written_without_device_tensors(self, load: _Load) -> bool:
        """Is the file loaded one the project writes under a name the code spells out
        (``os.path.join(checkpoint, "data_args.bin")``), every save to which holds no device
        tensor: CPU state, or a run's arguments (``torch.save(self.data_args, ...)``)?"""
        file_name = load.written_name
        if file_name is None:
            return False
        here = self.facts.saved_files.get(file_name)
        if here is False:
            return False
        project = self.facts.project
        elsewhere = project.writes_no_device_tensor_to(file_name, self._checker.path) if project is not None else None
        return elsewhere is not False and (here is True or elsewhere is True)

    def _saves(self, effect: str) -> bool:
        """Does a ``torch.save`` of this module write CPU state (SAVES_CPU_STATE: moved there on the
        way, or a model moved there first) or anything else (SAVES_DEVICE_STATE)?"""
        return any(effect in scope.effects for scope in (self.facts.module_scope, *self.facts.function_scopes.values()))

    def _saves_device_state_here(self) -> bool:
        """Does this module itself ``torch.save`` state not moved to the CPU (the checkpoints it
        reads back are of its own making, with device tensors)?"""
        return not self._cpu_only_file and self._saves(SAVES_DEVICE_STATE)

    def _project_saves_module_state(self) -> bool:
        """Does a ``torch.save`` of the project (this module or another) write a model's or an
        optimizer's state not moved to the CPU (SAVES_MODULE_STATE: its checkpoints hold GPU
        tensors)? Not a save of anything else (a dataset cache, results): False when no module that
        saves can be read."""
        if self._saves(SAVES_MODULE_STATE):
            return True
        project = self.facts.project
        elsewhere = project.saved_state(self._checker.path) if project is not None else None
        return elsewhere is not None and elsewhere[2]

    def _project_saves_only_cpu_state(self) -> bool:
        """Does every ``torch.save`` of the project (this module and the others) write state moved
        to the CPU, and one at least? Then the checkpoints it reads back hold no device tensors.
        Not when a module that saves cannot be read. Asked once per module (it reads the others'
        summaries)."""
        if not self.facts.module_done:
            return self._saves_only_cpu_state()  # later saves of this module not walked yet
        if self._only_cpu_saves is None:
            self._only_cpu_saves = self._saves_only_cpu_state()
        return self._only_cpu_saves

    def _saves_only_cpu_state(self) -> bool:
        cpu, device = self._saves(SAVES_CPU_STATE), self._saves(SAVES_DEVICE_STATE)
        project = self.facts.project
        if device or project is None:
            return cpu and not device
        elsewhere = project.saved_state(self._checker.path)
        if elsewhere is None:
            return False
        if (cpu or elsewhere[0]) and not elsewhere[1]:
            return True
        # Other parts of the project save device state; the scripts beside this one (in its
        # folder), which write the checkpoints it reads back, save only CPU state.
        beside = project.saved_state(self._checker.path, beside=True)
        return beside is not None and (cpu or beside[0]) and not beside[1]

    def _report(self, load: _Load) -> None:
        if id(load.node) in self._numbers_only_loads:
            return  # restored straight into a loss scaler's or a schedule's state: numbers
        if self._restores_weights_saved_on_the_cpu(load):
            return  # restores only a model, whose weights the project writes only from the CPU
        if self._cpu_only_file and load.path_text in self._saved_paths:
            return  # the tutorial's round trip: saved by this CPU-only file, to the same path
        if self._project_saves_only_cpu_state():
            return  # every checkpoint the project writes is moved to the CPU first
        if self._written_without_device_tensors(load):
            return  # the file the project writes under that name holds no device tensor (a run's arguments)
        code = self._code_text()
        used = _without_imports(code)
        distributed = not load.rank_zero_only and not self._outside_the_spawned_ranks(load) \
            and not _a_group_of_one(used) and not self._run_by_this_script_only(load, code) and (
            self._uses_distributed(used) or any(
                text in used for text in _DISTRIBUTED_TEXT) or _RANKS_LAUNCHED.search(code) is not None
            or _LOCAL_RANK_READ.search(code) is not None
            or self._builds_accelerator(code) or self._starts_process_group())
        called = "torch.load" if self.facts.qualified_name(load.node.func) in TORCH_LOAD else (
            dotted_name(load.node.func) or "the loader")
        if not distributed:
            # One process: the tensors come back on the GPU they were saved from, which is in
            # practice this process's own: at most a transient copy, said (as a warning) only when
            # this program saved them from its GPU and the load is copied into a model.
            if load.only_into and all(self._is_optimizer(name) for name in load.only_into):
                return  # optimizer.load_state_dict keeps the loaded tensors as its state: no second copy
            if self._kept_on_gpu(load):
                self.report(load.node, f"{called}() without map_location keeps the checkpoint on the GPU through "
                                       "the training that follows",
                            help="pass map_location='cpu' (load_state_dict copies onto the model's device), or del "
                                 "the checkpoint once restored",
                            needs_grad=False, severity="warning",
                            fix=add_keyword_fix(load.node, "map_location", '"cpu"'))
            elif not (load.kept_in or load.returned_by):
                # ``model.load_state_dict(torch.load(p))``: the second copy lives only while
                # load_state_dict copies it, in the GPU the process itself uses
                return
            elif (load.restores_state and (load.beside_the_model
                                           or (load.into_unmoved_optimizer and not self._deleted_in_function(load)
                                               and not self._rebound(load) and not self._names_no_accelerator())
                                           or (load.moved_while_held and self._saves_device_state_here())
                                           or self._moved_by_every_caller(load))
                  # ``return torch.load(path)``, which a caller here copies into a moved model
                  or load.returned_by in self._fed_on_device_calls) \
                    and not load.rank_zero_only and not (
                    self._project_saves_only_cpu_state()):
                # A hint: how the file was written is not known here (unless this module saves
                # CPU tensors only), and a GPU-saved checkpoint comes back beside the model it
                # restores (the peak of a resume, or a load where the saving GPU is busy or absent).
                self.report(load.node, f"{called}() without map_location loads the checkpoint onto the GPU it was saved from",
                            help="pass map_location='cpu': a GPU-saved checkpoint is otherwise a second copy beside the "
                                 "model while it loads (load_state_dict copies onto the model's device)",
                            needs_grad=False, severity="info",
                            fix=add_keyword_fix(load.node, "map_location", '"cpu"'))
            return
        if self._pins_one_gpu():
            return  # CUDA_VISIBLE_DEVICES leaves each process one GPU: cuda:0 is the rank's own
        by_name_only = not load.restores_state
        # An error needs the file to hold GPU tensors: the project writes checkpoints from the GPU.
        # A file nothing here writes (a pretrained download, another package's output) may well
        # hold CPU tensors: then the finding says which link is missing.
        unknown_writer = not self._project_saves_module_state()
        self.report(load.node, f"{called}() without map_location: every rank loads the checkpoint onto cuda:0",
                    help="pass map_location='cpu' (then move what you need), or map_location=f'cuda:{local_rank}'"
                    + ("; only the file's name says it holds model tensors, and nothing here saves GPU tensors"
                       if by_name_only and unknown_writer else
                       "; only the file's name says it holds model or optimizer tensors" if by_name_only else
                       "; nothing here saves GPU tensors: so if the file was saved from one" if unknown_writer else ""),
                    needs_grad=False, severity="warning" if by_name_only or unknown_writer else None,
                    fix=add_keyword_fix(load.node, "map_location", '"cpu"'))

    VALID = [
        # one process, a checkpoint handed straight to load_state_dict, held by no name: the second
        # copy lives only while load_state_dict copies it, on the GPU the process itself uses
        """
import argparse
import torch
from torch import nn

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--load_model_path", default=None)
    args = parser.parse_args()
    model = nn.Linear(4, 4).cuda()
    if args.load_model_path is not None:
        model.load_state_dict(torch.load(args.load_model_path))
""",
        # map_location onto the GPU into a model still on the CPU, and the checkpoint let go
        # (deleted, rebound) before the model moves and the loop runs
        """
import torch

def evaluate(model, loader, path, device):
    checkpoint = torch.load(path, map_location=device)
    model.load_state_dict(checkpoint["model"])
    del checkpoint
    model.to(device)
    return [model(x.to(device)).argmax(-1).tolist() for x in loader]

def train(model, optimizer, loader, path, device):
    ckpt = torch.load(path, map_location=device)
    model.load_state_dict(ckpt["model"])
    ckpt = None
    model.to(device)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""",
        # onto the GPU beside a model (or its optimizer) already there, or before the model moves
        # there, in a helper that returns: two copies only at the peak of the restore, the way
        # maintainers' own fixes load (map_location=device); not said
        """
import torch

def load_model(path, device):
    model = Mapper().to(device)
    state = torch.load(path, map_location=device)
    model.load_state_dict(state["model"])
    return model.eval()

def load_then_move(path, device):
    model = Mapper()
    state = torch.load(path, map_location=device)
    model.load_state_dict(state["model"])
    return model.to(device).eval()

class Trainer:
    def __init__(self, model, device):
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters())

    def resume(self, path):
        self.optimizer.load_state_dict(torch.load(path, map_location=self.device))
""",
        # onto the CPU and kept; or onto the GPU without a name (freed once copied); or a
        # device the function binds to the CPU; or a storage function
        """
import torch

def train(model, optimizer, loader, path, device):
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["model"])
    model.to(device)
    for x, y in loader:
        loss = model(x.to(device)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

def restore(model, path, device):
    model.load_state_dict(torch.load(path, map_location=device))
    return model.to(device)

def restore_on_cpu(model, path):
    device = torch.device("cpu")
    state = torch.load(path, map_location=device)
    model.load_state_dict(state)
    return model.to("cuda")

def restore_storages(model, path):
    state = torch.load(path, map_location=lambda storage, loc: storage)
    model.load_state_dict(state)
    return model.cuda()
""",
        # one process: the weights are loaded into a model still on the CPU, moved afterwards: no
        # second copy beside it on the GPU (a CPU-saved download stays on the CPU)
        """
import torch

def build(path, device):
    model = Net()
    model.load_state_dict(torch.load(path))
    return model.to(device)

class Checkpointer:
    def __init__(self, directory):
        self.directory = directory

    def best_state(self):
        return torch.load(self.directory + "/best.th")

def export_best(checkpointer):
    model = Net()
    model.load_state_dict(checkpointer.best_state())
    return model

def load_folds(files):
    return [torch.load(f, map_location="cpu") for f in files]

def load_for_inference(path):
    # a module that writes no checkpoint: how the file was written is not known here
    checkpoint = torch.load(path)
    model = Net()
    model.load_state_dict(checkpoint["state_dict"])
    return model.cuda().eval()

def build_and_let_go(path):
    checkpoint = torch.load(path)
    model = Net()
    model.load_state_dict(checkpoint["state_dict"])
    del checkpoint
    return model.cuda().eval()
""",
        # one process: a moved model, then a fresh one bound to the same name and loaded on the CPU
        """
import torch

model = Net().to("cuda")
run(model)
model = Net()
model.load_state_dict(torch.load("weights.pth"))
export(model)
""",
        # one process, saved from the CPU: the reload comes back on the CPU
        """
import torch

class Trainer:
    def __init__(self, model):
        self.model = model.cuda()

    def save(self, path):
        torch.save({k: v.cpu() for k, v in self.model.state_dict().items()}, path)

    def restore_best(self, path):
        self.model.load_state_dict(torch.load(path))
""",
        # one process: a GPU checkpoint loaded, but not copied into a model here (read for its epoch)
        """
import torch

def train(model, loader, optimizer, path):
    model = model.cuda()
    for x, y in loader:
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        optimizer.step()
    torch.save(model.state_dict(), path)

def last_epoch(path):
    return torch.load(path)["epoch"]
""",
        # one process: the DDP strategy is only mentioned in a comment
        """
import torch
import pytorch_lightning as pl
def main(system, checkpoint):
    # for several GPUs, pass strategy="ddp" and devices="auto"
    trainer = pl.Trainer(accelerator="gpu", devices=1, callbacks=[checkpoint])
    trainer.fit(system)
    state_dict = torch.load(checkpoint.best_model_path)
    system.load_state_dict(state_dict["state_dict"])
""",
        # "ddp_spawn" workers end with fit: only the launching process loads afterwards
        """
import torch
import pytorch_lightning as pl
def main(system, checkpoint):
    trainer = pl.Trainer(accelerator="gpu", strategy="ddp_spawn", devices=2, callbacks=[checkpoint])
    trainer.fit(system)
    state_dict = torch.load(checkpoint.best_model_path)
    system.load_state_dict(state_dict["state_dict"])
""",
        # one process: the checkpoint comes back on the GPU it was saved from, in practice this
        # process's own (a reload of this run's save, a CPU-saved file, one default GPU): at most
        # a transient copy, which the file's producer, not this line, decides
        """
import torch
from torch import nn
def resume(model: nn.Module, optimizer, path):
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["epoch"]

def restore(ckpt_path):
    return torch.load(f=ckpt_path)
""",
        # map_location as keyword, as second positional, with weights_only
        """
import torch
def restore(model, optimizer, path, device):
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    state = torch.load(path + ".ema", device)
    return state
""",
        # a loader that receives map_location and passes it on; called without it in every
        # rank for what restores no model or optimizer (trainer state, its own rank's file)
        """
import torch
import torch.distributed as dist
def load_checkpoint(path, map_location=None, **kwargs):
    return torch.load(path, map_location=map_location, **kwargs)

def restore_trainer(model, path, rank):
    dist.init_process_group("nccl")
    trainer_state = load_checkpoint(path + "/train.pt")
    local_state = load_checkpoint(f"{path}/rank{rank}.pt")
    model.load_state_dict(load_checkpoint(f"{path}/model_rank{rank}.pt"))
    return trainer_state, local_state

def load_any(path, *args, **kwargs):
    return torch.load(path, *args, **kwargs)
""",
        # other loaders: TorchScript, hub, safetensors, numpy, json
        """
import json
import numpy as np
import torch
from safetensors.torch import load_file
def build(path):
    scripted = torch.jit.load(path + "/model.pt")
    model = torch.hub.load("pytorch/vision", "resnet50")
    weights = load_file(path + "/model.safetensors", device="cpu")
    meta = json.load(open(path + "/meta.json"))
    stats = np.load(path + "/stats.npy")
    return scripted, model, weights, meta, stats
""",
        # an in-memory round trip: a deep copy that keeps the devices on purpose
        """
import io
import torch
def clone_state(module):
    buffer = io.BytesIO()
    torch.save(module.state_dict(), buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)
""",
        # no device tensors: scheduler, RNG and sampler state, metadata; a file of unknown content
        """
import torch
def load_training_state(scheduler, scaler, input_dir, process_index):
    scheduler.load_state_dict(torch.load(input_dir / "scheduler.bin"))
    scaler.load_state_dict(torch.load(input_dir / "scaler.pt"))
    rng_states = torch.load(input_dir / f"random_states_{process_index}.pkl")
    metadata = torch.load(input_dir / "meta.pt")
    alignments = torch.load(input_dir / "alignments.pt")
    return rng_states, metadata, alignments
""",
        # per-rank files, read back by the rank that wrote them; an XLA program
        """
import os
import torch
def load_local_state(model, input_dir, accelerator):
    weights_name = f"pytorch_model_fsdp_rank{accelerator.process_index}.bin"
    state_dict = torch.load(os.path.join(input_dir, weights_name))
    model.load_state_dict(state_dict)
""",
        """
import torch
class XLAStrategy:
    def load_checkpoint(self, model, path):
        checkpoint = torch.load(path)
        model.load_state_dict(checkpoint["model"])
""",
        # "model" only in how the path was built (a model name): the file holds test inputs
        """
import torch
from huggingface_hub import hf_hub_download
def prepare_inputs(model_name):
    filename = "pixel_values_512.pt" if "512" in model_name else "pixel_values_224.pt"
    filepath = hf_hub_download(repo_id="org/test-image", filename=filename, repo_type="dataset")
    pixel_values = torch.load(filepath)
    return pixel_values
""",
        # the other branch maps the same file: this one keeps the devices on purpose
        """
import torch
def resume(model, args):
    if args.gpu is None:
        checkpoint = torch.load(args.resume)
    else:
        checkpoint = torch.load(args.resume, map_location=f"cuda:{args.gpu}")
    model.load_state_dict(checkpoint["state_dict"])
""",
        # a scheduler-like class restoring its own (plain) state
        """
import torch
class WarmupScheduler:
    def load(self, path):
        self.load_state_dict(torch.load(path))
""",
        # a test reloading what it saved, to compare it where it was
        """
import torch
def test_checkpoint_round_trip(tmp_path, model):
    torch.save(model.state_dict(), tmp_path / "model.pt")
    state_dict = torch.load(tmp_path / "model.pt")
    assert state_dict.keys() == model.state_dict().keys()
""",
        # a method called load on something else
        """
import torch
import yaml
def setup(config_path, loader):
    config = yaml.load(open(config_path), Loader=yaml.SafeLoader)
    state = loader.load(config["ckpt"])
    return config, state
""",
    ]

    # Each in a program that runs one process per GPU (torch.distributed, DDP, LOCAL_RANK).
    INVALID = [
        # the checkpoints of every fold onto the GPU at once, used one at a time
        Invalid("""
import torch

def load_folds(files, model):
    all_params = [torch.load(f, map_location=torch.device("cuda", torch.cuda.current_device())) for f in files]
    return all_params
""", line=5),
        # one process (info): a loader returns the checkpoint, and a caller copies it into a model
        # its class moved to the GPU
        Invalid("""
import os
import torch

class Checkpointer:
    def __init__(self, directory):
        self.directory = directory

    def best_state(self):
        return torch.load(os.path.join(self.directory, "best.th"))

class Trainer:
    def __init__(self, model, checkpointer, device):
        self.model = model.to(device)
        self.checkpointer = checkpointer

    def finish(self):
        best = self.checkpointer.best_state()
        self.model.load_state_dict(best)
""", line=10, fixed='map_location="cpu"'),
        # one process (info): copied into a model still on the CPU, which moves to the GPU while
        # the checkpoint is still held: a GPU-saved checkpoint and the moved weights, side by side
        Invalid("""
import torch

def load_for_inference(path, on_gpu=True):
    checkpoint = torch.load(path)
    model = Net()
    model.load_state_dict(checkpoint["state_dict"])
    if on_gpu:
        model = model.cuda()
    return model.eval()

def save(model, path):
    torch.save({"state_dict": model.state_dict()}, path)
""", line=5, fixed='map_location="cpu"'),
        # one process (info): the checkpoint is deleted once restored, but while it loads a GPU-saved
        # copy sits beside the model on the GPU (the peak of a resume)
        Invalid("""
import torch

def train(model, loader, optimizer, path):
    model = model.cuda()
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    del checkpoint
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save({"model": model.state_dict()}, path)
""", line=6, fixed='map_location="cpu"'),
        # one process (info): best weights saved from the GPU, reloaded beside the live model
        Invalid("""
import torch

class Trainer:
    def __init__(self, model, device, best_path):
        self.model = model.to(device)
        self.best_path = best_path

    def save_best(self):
        torch.save(self.model.state_dict(), self.best_path)

    def load_best(self):
        state_dict = torch.load(self.best_path)
        self.model.load_state_dict(state_dict)
""", line=13, fixed='map_location="cpu"'),
        # one process (info, not error): a leftover --local_rank flag and a DataParallel model start no ranks
        Invalid("""
import argparse
import torch
from torch import nn

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1, help="for distributed training")
    parser.add_argument("--load_model_path", default=None)
    args = parser.parse_args()
    model = nn.DataParallel(nn.Linear(4, 4).cuda())
    if args.load_model_path is not None:
        state = torch.load(args.load_model_path)
        model.module.load_state_dict(state)
""", line=13, fixed='map_location="cpu"'),
        # one process: a resumed checkpoint this script saved from the GPU, kept through the training
        Invalid("""
import torch

def train(model, loader, optimizer, resume, path):
    model = model.cuda()
    if resume:
        checkpoint = torch.load(path)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
""", line=7, fixed='map_location="cpu"'),
        # a loader of the module that hands its map_location=None on to torch.load, called
        # without it in every rank
        Invalid("""
import torch
import torch.distributed as dist

def load_checkpoint(filename, map_location=None):
    return torch.load(filename, map_location=map_location)

def main(model, rank, path):
    dist.init_process_group("nccl")
    model.load_state_dict(load_checkpoint(path))
    model.load_state_dict(load_checkpoint(path, map_location="cpu"))
""", line=10),
        # an accelerate program: `accelerate launch` runs it once per GPU, and every process loads
        Invalid("""
import torch
from accelerate import Accelerator
class Trainer:
    def __init__(self, model):
        self.accelerator = Accelerator()
        self.model = self.accelerator.prepare(model)
    def load(self, path):
        state = torch.load(path)
        self.accelerator.unwrap_model(self.model).load_state_dict(state["model"])
""", line=9, fixed='state = torch.load(path, map_location="cpu")'),
        # Lightning's "ddp" strategy runs the script again in each rank: all of them load after fit
        Invalid("""
import torch
import pytorch_lightning as pl
def main(system, checkpoint):
    trainer = pl.Trainer(accelerator="gpu", strategy="ddp", devices="auto", callbacks=[checkpoint])
    trainer.fit(system)
    state_dict = torch.load(checkpoint.best_model_path)
    system.load_state_dict(state_dict["state_dict"])
""", line=7),
        Invalid("""
import torch
import torch.distributed as dist
from torch import nn
def resume(model: nn.Module, optimizer, path):
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["epoch"]
""", line=6),
        # weights_only alone does not choose the device; alias import
        Invalid("""
import torch as t
import torch.distributed as dist
def load_weights(model, path):
    state = t.load(path, weights_only=True)
    model.load_state_dict(state)
""", line=5),
        # from torch import load
        Invalid("""
from torch import load
from torch.nn.parallel import DistributedDataParallel
def load_backbone(model, path):
    model.backbone.load_state_dict(load(path))
""", line=5),
        # an nn.Module restoring itself
        Invalid("""
import torch
import torch.distributed
from torch import nn
class Encoder(nn.Module):
    def __init__(self, path=None):
        super().__init__()
        self.proj = nn.Linear(128, 64)
        if path is not None:
            self.load_state_dict(torch.load(path))
""", line=10),
        # file= as keyword
        Invalid("""
import os
import torch
def restore(ckpt_path):
    local_rank = int(os.environ["LOCAL_RANK"])
    return torch.load(f=ckpt_path)
""", line=6),
        # a DDP program: every rank loads onto cuda:0 (error severity)
        Invalid("""
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(model, args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = model.cuda(local_rank)
    if args.resume:
        model.load_state_dict(torch.load(args.resume))
    model = DDP(model, device_ids=[local_rank])
""", line=13),
        # map_location onto the GPU, copied into the model, and the dict kept through the
        # evaluation loop that runs that model: a second copy of the weights for the whole pass
        Invalid("""
import torch

class Evaluator:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device

    @torch.no_grad()
    def run(self, loader, path):
        checkpoint = torch.load(path, map_location=self.device)
        self.model.load_state_dict(checkpoint["state_dict"])
        outputs = []
        for batch in loader:
            outputs.extend(self.model(batch.to(self.device)).argmax(-1).tolist())
        return outputs
""", line=11),
        # a resume onto the rank's GPU, the checkpoint still referenced while the epochs train
        Invalid("""
import torch

def main_worker(gpu, model, optimizer, loader, args):
    model.cuda(gpu)
    if args.resume:
        loc = "cuda:{}".format(gpu)
        checkpoint = torch.load(args.resume, map_location=loc)
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda(gpu)), y.cuda(gpu))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
""", line=8),
    ]


_RANK_WORDS = ("rank", "main_process", "is_master", "is_main", "master_process")
# A move of a tensor or module off the CPU: .cuda(), .to(<anything but a dtype>), device="cuda...",
# accelerator.prepare(...), XLA devices.
# A comment to the end of its line (a "#" inside a string may cut a little more: less evidence, never more).
_COMMENT = re.compile(r"#[^\n]*")
# A device written as an accelerator's: "cuda", "cuda:0", f"cuda:{rank}", torch.device("xpu").
_ACCELERATOR_WORD = re.compile(r"""\b(?:cuda|xpu|mps|npu)\b""")
_MOVES_TO_ACCELERATOR = re.compile(
    r"\.cuda\(|\.to\((?!\s*(?:dtype\s*=|(?:torch\.)?(?:float|half|double|bfloat16|int|long|bool|uint8|complex)))"
    r"|device\s*=\s*f?['\"](?:cuda|mps|xpu|npu)|\.prepare\(|xla_device|xm\.")


# Anything that may put a tensor on an accelerator, or take a device from elsewhere.
_NAMES_AN_ACCELERATOR = re.compile(
    r"\.cuda\b|\bcuda\s*\(|['\"](?:cuda|mps|xpu|npu|hpu)(?::\d+)?['\"]|['\"]cuda:|\btorch\.cuda\b|\bcuda\.|"
    r"\.prepare\(|xla|\bxm\.|accelerat|rank|device_ids|get_device|set_device|device_count|\bgpu")


_GROUP_STARTS = re.compile(r"\b(init_process_group|spawn)\s*\(")


def _a_group_of_one(code: str) -> bool:
    """Does the code start its process group only for one process: every ``init_process_group(``
    given ``world_size=1`` and every ``spawn(`` given ``nprocs=1`` (a single-GPU evaluation script
    that builds a group because its model needs one), with one of them at least?"""
    found = False
    for match in _GROUP_STARTS.finditer(code):
        arguments = code[match.end():match.end() + 400]
        keyword = "world_size" if match.group(1) == "init_process_group" else "nprocs"
        if not re.match(rf"[^()]*(?:\([^()]*\)[^()]*)*\b{keyword}\s*=\s*1\b", arguments):
            return False
        found = True
    return found and "LOCAL_RANK" not in code


def _rank_test(test: cst.BaseExpression) -> str | None:
    """"first" for a test that holds on the first rank only (``rank == 0``, ``is_main_process()``,
    ``local_rank in (-1, 0)``), "others" for one that holds on every other rank
    (``rank != 0``, ``rank > 0``, ``not is_main_process()``), None otherwise."""
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated, test = not negated, test.expression
    text = cst.Module(body=()).code_for_node(test).lower()
    if not any(word in text for word in _RANK_WORDS):
        return None
    result: str | None = None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        operator = test.comparisons[0].operator
        right = test.comparisons[0].comparator
        zero = isinstance(right, cst.Integer) and right.value == "0"
        if zero and isinstance(operator, (cst.Equal, cst.LessThanEqual)):
            result = "first"
        elif zero and isinstance(operator, (cst.NotEqual, cst.GreaterThan)):
            result = "others"
        elif isinstance(operator, cst.In) and "0" in cst.Module(body=()).code_for_node(right):
            result = "first"
    elif isinstance(test, (cst.Call, cst.Name, cst.Attribute)) and any(
            word in text for word in ("main_process", "is_master", "is_main", "master_process")):
        result = "first"
    if result is not None and negated:
        result = "others" if result == "first" else "first"
    return result


def _only_returns(block: cst.BaseSuite) -> bool:
    statements = block.body if isinstance(block, cst.IndentedBlock) else (block,)
    return all(isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
               and all(isinstance(small, (cst.Return, cst.Pass, cst.Expr)) for small in statement.body)
               for statement in statements) and any(
        isinstance(small, cst.Return) for statement in statements for small in getattr(statement, "body", ()))


def _uses_any(names: set[str], modules: frozenset[str]) -> bool:
    """Does one of ``names`` (``self.model.generate``) read one of ``modules`` (``self.model``)?"""
    return any(name == module or name.startswith(module + ".") for name in names for module in modules)


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def _text(node: cst.CSTNode) -> str:
    return cst.Module(body=()).code_for_node(node)
