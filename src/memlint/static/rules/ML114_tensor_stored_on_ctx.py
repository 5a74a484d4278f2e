"""ML114 tensor-stored-on-ctx: a custom ``torch.autograd.Function`` keeps a tensor as an
attribute of ``ctx`` (``ctx.out = out``) instead of saving it with ``ctx.save_for_backward``.

``ctx`` lives as long as the autograd node it belongs to, that is as long as any output of the
Function (through its ``grad_fn``) is alive. What ``save_for_backward`` saves is freed as soon
as the backward pass has used it and is checked against in-place changes; an attribute of
``ctx`` is neither:

- the Function's **output** stored on ``ctx`` closes a cycle: output -> ``grad_fn`` (the node)
  -> ``ctx`` -> output. The cycle runs through the C++ node, which Python's collector cannot
  see through, so the output, ``ctx``, everything else on it and the graph below stay alive
  after the last reference is dropped: memory grows with every call (pytorch#25340, #5569).
  Error; a warning when ``backward`` deletes the attribute (the cycle is then broken only when
  a backward pass runs).
- an **input** or another tensor computed in ``forward`` stays alive for the lifetime of the
  graph, past the backward pass that needed it (typically until the next iteration), and is
  not protected against in-place changes; a view or a copy that shares the output's storage
  closes the same cycle (asappresearch/sru#171). Warning, unless ``backward`` deletes it or
  sets it to ``None``.

Evidence that the stored value is a tensor (names alone are never enough): it is returned by
``forward`` (an output; in ``setup_context``, the ``output`` argument), it comes from a
``torch`` function or a tensor method, or it is an argument that ``forward``/``backward`` use
as a tensor (a tensor-only method such as ``.view()``/``.contiguous()``/``.t()`` on it, an
annotation ``Tensor`` / ``Optional[Tensor]``, not ``Request[Tensor]``, ``save_for_backward``/``mark_dirty`` of it). Numbers, shapes, dtypes,
flags, callables, modules and a tensor reduced over every dimension (``counts.max()``, a 0-dim
tensor of one number) on ``ctx`` are what ``ctx`` is for and are not flagged, and so is a
tensor made from nothing the Function was given (``torch.get_rng_state()``, ``torch.zeros(3)``): its
size does not grow with the inputs, and activation checkpointing keeps RNG states on ``ctx`` by design.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from memlint.static.facts import ClassInfo, FunctionScope, dotted_name
from memlint.static.rule import Invalid, Rule

# Methods only a tensor has (not a number, a list, a numpy array or a module): a receiver of one
# is a tensor, and so is the result.
_TENSOR_ONLY_METHODS = frozenset({
    "clone", "contiguous", "detach", "t", "view", "view_as", "reshape_as", "expand", "expand_as",
    "permute", "unsqueeze", "narrow", "masked_fill", "masked_fill_", "mm", "bmm", "matmul", "half",
    "bfloat16", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "softmax", "log_softmax",
    "sigmoid", "type_as", "index_select", "gather", "scatter", "scatter_add", "clamp", "clamp_", "is_contiguous",
    "data_ptr", "element_size", "numel", "requires_grad_", "retain_grad", "register_hook",
    "cuda", "float", "long", "int", "bool", "unfold", "chunk", "unbind", "addmm", "baddbmm",
    "flip", "roll", "repeat_interleave", "exp", "log", "sqrt", "rsqrt", "tanh", "relu",
})
# Tensor-only attributes of a tensor (``.shape``/``.dtype`` are numpy's too).
_TENSOR_ONLY_ATTRIBUTES = frozenset({"is_cuda", "grad_fn", "requires_grad", "is_leaf", "grad", "device"})
# Methods whose result is a tensor when the receiver is one (shape queries and ``.item()`` are not).
_NOT_TENSOR_RESULTS = frozenset({"size", "dim", "numel", "is_contiguous", "data_ptr", "element_size", "item",
                                 "tolist", "requires_grad_", "register_hook", "retain_grad", "numpy", "stride",
                                 "get_device", "nelement"})
# Reductions that, given no dimension, leave a 0-dim tensor (one number).
_FULL_REDUCTIONS = frozenset({"max", "min", "amax", "amin", "sum", "mean", "prod", "norm", "all", "any", "std",
                              "var", "argmax", "argmin", "count_nonzero", "median", "logsumexp"})
# Attributes of a tensor that are tensors themselves.
_TENSOR_ATTRIBUTES = frozenset({"data", "T", "mT", "H", "mH", "real", "imag", "grad"})
# Namespaces of ``torch`` operators (their results are tensors, their first argument is one).
_OPERATOR_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.", "torch.ops.")
# ``torch.<name>`` callables that return no tensor.
_NOT_TENSOR_FUNCTIONS = frozenset({
    "torch.is_tensor", "torch.is_grad_enabled", "torch.get_default_dtype", "torch.finfo", "torch.iinfo",
    "torch.no_grad", "torch.enable_grad", "torch.set_grad_enabled", "torch.is_floating_point", "torch.numel",
    "torch.typename", "torch.get_autocast_gpu_dtype", "torch.is_autocast_enabled", "torch.is_complex",
    "torch.is_nonzero", "torch.equal", "torch.allclose", "torch.result_type", "torch.promote_types",
    "torch.can_cast", "torch.is_inference_mode_enabled", "torch.compile", "torch.manual_seed", "torch.load",
    "torch.save", "torch.broadcast_shapes", "torch.device", "torch.dtype",
})
# ``torch`` functions whose first argument is not a tensor (a size, data, a seed).
_FACTORIES = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.arange", "torch.linspace",
                        "torch.logspace", "torch.randn", "torch.rand", "torch.randint", "torch.randperm",
                        "torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.eye", "torch.manual_seed",
                        "torch.empty_strided", "torch.scalar_tensor"})
# ctx methods that take tensors.
_CTX_TENSOR_METHODS = frozenset({"save_for_backward", "mark_dirty", "mark_non_differentiable", "save_for_forward"})


@dataclass
class _Stored:
    node: cst.CSTNode
    attribute: str
    value: cst.BaseExpression
    function: FunctionScope
    ctx: str


@dataclass
class _FunctionClass:
    """What one autograd.Function class does with ``ctx``, filled as its methods are walked."""

    stores: list[_Stored]
    released: set[str]  # attributes backward deletes or sets to None
    tensor_attributes: set[str]  # attributes backward uses as tensors (ctx.x.t())
    returned: dict[int, set[str]]  # id(forward scope) -> names it returns (outputs)
    returned_attributes: set[str]  # ctx attributes forward returns (``return ctx.out``)
    tensor_names: dict[int, set[str]]  # id(scope) -> names used there as tensors
    # id(forward scope) -> outputs passed to ctx.mark_non_differentiable: they get no grad_fn,
    # so keeping one on ctx closes no cycle
    non_differentiable: dict[int, set[str]] = field(default_factory=dict)
    # id(forward scope) -> what it returns, as written (``out[0].values``)
    returned_texts: dict[int, set[str]] = field(default_factory=dict)
    # attributes backward writes into (``ctx.features[y] = ...``, ``ctx.bank.mul_(m)``): state the
    # Function updates for its owner (a memory bank), kept off save_for_backward on purpose
    updated_in_backward: set[str] = field(default_factory=set)


class TensorStoredOnCtx(Rule):
    code = "ML114"

    def __init__(self, checker) -> None:
        super().__init__(checker)
        self._classes: dict[int, _FunctionClass] = {}  # id(ClassInfo) -> what it does
        self._scheduled = False

    # ----- where we are ------------------------------------------------------------------------
    def _context(self) -> tuple[_FunctionClass, str, str] | None:
        """In ``forward``/``setup_context``/``backward`` of an autograd.Function: its record,
        the method's name, and the name of its ``ctx`` parameter."""
        function = self.facts.function
        info: ClassInfo | None = function.class_info
        if info is None or not info.kinds.autograd_function or not isinstance(function.node, cst.FunctionDef):
            return None
        if function.name not in ("forward", "setup_context", "backward", "jvp", "vjp"):
            return None
        if function.parent is None or getattr(function.parent, "info", None) is not info:
            return None  # a function nested in a method
        params = function.node.params.params
        if not params:
            return None
        record = self._classes.get(id(info))
        if record is None:
            record = self._classes[id(info)] = _FunctionClass([], set(), set(), {}, set(), {})
            if not self._scheduled:
                self._scheduled = True
                self.at_module_exit(self._decide)
        return record, function.name, params[0].name.value

    # ----- what forward stores and returns, what backward does -----------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        context = self._context()
        if context is None:
            return
        record, method, ctx = context
        for target in node.targets:
            if method == "backward" and isinstance(target.target, cst.Subscript):
                updated = _ctx_attribute(target.target.value, ctx)
                if updated is not None:
                    record.updated_in_backward.add(updated)
            pairs = _pairs(target.target, node.value)
            for element, value in pairs:
                attribute = _ctx_attribute(element, ctx)
                if attribute is None:
                    continue
                if method == "backward":
                    if isinstance(value, cst.Name) and value.value == "None":
                        record.released.add(attribute)
                elif method in ("forward", "setup_context") and not _empty_placeholders(value) \
                        and not self._made_from_constants(value):
                    record.stores.append(_Stored(element, attribute, value, self.facts.function, ctx))

    def _made_from_constants(self, value: cst.BaseExpression) -> bool:
        """``torch.get_rng_state()``, ``torch.zeros(3)``: a ``torch`` call whose arguments are all
        literals (or none), a tensor whose size depends on nothing forward was given."""
        return (isinstance(value, cst.Call) and (self.facts.qualified_name(value.func) or "").startswith("torch.")
                and all(_literal(arg.value) for arg in value.args))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        context = self._context()
        if context is None or context[1] != "backward":
            return
        record, _, ctx = context
        target = node.target.value if isinstance(node.target, cst.Subscript) else node.target
        updated = _ctx_attribute(target, ctx)
        if updated is not None:
            record.updated_in_backward.add(updated)  # ctx.features[y] /= norm

    def visit_Del(self, node: cst.Del) -> None:
        context = self._context()
        if context is None or context[1] != "backward":
            return
        record, _, ctx = context
        targets = [el.value for el in node.target.elements] if isinstance(node.target, cst.Tuple) else [node.target]
        for target in targets:
            attribute = _ctx_attribute(target, ctx)
            if attribute is not None:
                record.released.add(attribute)

    def visit_Return(self, node: cst.Return) -> None:
        context = self._context()
        if context is None or context[1] != "forward" or node.value is None:
            return
        record, _, ctx = context
        value = node.value
        elements = [el.value for el in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
        names = record.returned.setdefault(id(self.facts.function), set())
        names.update(el.value for el in elements if isinstance(el, cst.Name))
        record.returned_texts.setdefault(id(self.facts.function), set()).update(
            self._checker.module.code_for_node(el) for el in elements)
        record.returned_attributes.update(attribute for el in elements
                                          if (attribute := _ctx_attribute(el, ctx)) is not None)

    def visit_Call(self, node: cst.Call) -> None:
        context = self._context()
        if context is None:
            return
        record, method, ctx = context
        func = node.func
        used = record.tensor_names.setdefault(id(self.facts.function), set())
        qualified = self.facts.qualified_name(func) or ""
        if is_torch_operator(qualified) and qualified not in _FACTORIES and node.args and node.args[0].keyword is None:
            first = node.args[0].value  # torch.sigmoid(x), F.linear(x, w): a tensor
            name = dotted_name(first)
            if name is not None:
                used.add(name)
                attribute = _ctx_attribute(first, ctx)
                if attribute is not None:
                    record.tensor_attributes.add(attribute)
        if not isinstance(func, cst.Attribute):
            return
        attribute = _ctx_attribute(func.value, ctx)
        if method == "backward" and attribute is not None and func.attr.value in ("pop", "clear"):
            record.released.add(attribute)  # ctx.outputs.pop(): backward takes what it stored
        if method == "backward" and attribute is not None and func.attr.value.endswith("_") \
                and not func.attr.value.startswith("_"):
            record.updated_in_backward.add(attribute)  # ctx.bank.index_copy_(0, y, x)
        receiver = dotted_name(func.value)
        if receiver == ctx and func.attr.value in _CTX_TENSOR_METHODS:
            used.update(name for arg in node.args if (name := dotted_name(arg.value)) is not None)
            if func.attr.value == "mark_non_differentiable":
                record.non_differentiable.setdefault(id(self.facts.function), set()).update(
                    arg.value.value for arg in node.args if isinstance(arg.value, cst.Name))
        elif receiver is not None and func.attr.value in _TENSOR_ONLY_METHODS:
            used.add(receiver)
            attribute = _ctx_attribute(func.value, ctx)
            if attribute is not None:
                record.tensor_attributes.add(attribute)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value not in _TENSOR_ONLY_ATTRIBUTES:
            return
        context = self._context()
        if context is None:
            return
        record, _, ctx = context
        receiver = dotted_name(node.value)
        if receiver is not None:
            record.tensor_names.setdefault(id(self.facts.function), set()).add(receiver)
            attribute = _ctx_attribute(node.value, ctx)
            if attribute is not None:
                record.tensor_attributes.add(attribute)

    # ----- decisions -----------------------------------------------------------------------------
    def _decide(self) -> None:
        for record in self._classes.values():
            for stored in record.stores:
                self._decide_store(record, stored)

    def _decide_store(self, record: _FunctionClass, stored: _Stored) -> None:
        function = stored.function
        kind = "output" if stored.attribute in record.returned_attributes else self._kind(
            record, stored.value, function, 0)
        if kind is None and stored.attribute in record.tensor_attributes:
            kind = self._origin(stored.value, function)  # backward uses ctx.x as a tensor
        if kind is None:
            return
        attribute = f"{stored.ctx}.{stored.attribute}"
        released = stored.attribute in record.released
        if kind == "output":
            self.report(
                stored.node,
                f"{attribute} keeps the Function's output: a cycle (output -> grad_fn -> ctx) gc cannot free",
                help="save it with ctx.save_for_backward(...) and read ctx.saved_tensors in backward",
                needs_grad=False, function=function, severity="warning" if released else None,
            )
            return
        if released:
            return  # deleted by backward: kept no longer than save_for_backward would keep it
        if kind == "input" and stored.attribute in record.updated_in_backward:
            return  # an input backward writes into: its caller's state (a memory bank), alive anyway
        if _detached_output(stored.value, record.returned_texts.get(id(function), ()), self._checker.module):
            return  # ctx.out = out.detach(): the output's own storage, without its grad_fn: no cycle
        what = f"input '{_short(stored.value)}'" if kind == "input" else "a tensor"
        self.report(
            stored.node,
            f"{attribute} keeps {what} for the graph's lifetime, past backward",
            help="save tensors with ctx.save_for_backward(...) (freed after backward), or del the attribute in "
                 "backward",
            needs_grad=False, function=function, severity="warning",
        )

    def _kind(self, record: _FunctionClass, value: cst.BaseExpression, function: FunctionScope,
              depth: int) -> str | None:
        """"output", "input" or "tensor" when ``value`` (in ``function``) is known to hold a
        tensor, None when nothing says so."""
        if depth > 4:
            return None
        if isinstance(value, (cst.Tuple, cst.List)):
            kinds = [self._kind(record, el.value, function, depth + 1) for el in value.elements]
            for wanted in ("output", "input", "tensor"):
                if wanted in kinds:
                    return wanted
            return None
        if isinstance(value, cst.Name):
            name = value.value
            if name in record.returned.get(id(function), ()):
                # an output marked non-differentiable has no grad_fn: kept, it is a tensor, no cycle
                return "tensor" if name in record.non_differentiable.get(id(function), ()) else "output"
            if function.name == "setup_context" and _parameter_index(function, name) == 2:
                return "output"
            binding = function.bindings.get(name)
            node = binding.node if binding is not None else None
            if isinstance(node, cst.Param):
                if function.name == "setup_context":
                    return None  # ``inputs`` is a tuple of whatever forward was given
                if _annotated_tensor(node) or name in record.tensor_names.get(id(function), ()):
                    return "input"
                return None
            if isinstance(node, cst.BaseExpression) and node is not value:
                kind = self._kind(record, node, function, depth + 1)
                if kind == "input" and not isinstance(node, cst.Name):
                    return "tensor"  # computed from an input
                return kind
            return None
        if isinstance(value, cst.Call):
            func = value.func
            if self._full_reduction(value):
                return None  # a 0-dim tensor (counts.max()): one number, what ctx is for
            if is_torch_operator(self.facts.qualified_name(func) or ""):
                return "tensor"
            if isinstance(func, cst.Attribute) and func.attr.value not in _NOT_TENSOR_RESULTS:
                if func.attr.value in _TENSOR_ONLY_METHODS:
                    return "tensor"
                receiver = self._kind(record, func.value, function, depth + 1)
                return "tensor" if receiver is not None and func.attr.value not in ("tolist", "item") else None
            return None
        if isinstance(value, cst.BinaryOperation):
            left = self._kind(record, value.left, function, depth + 1)
            right = self._kind(record, value.right, function, depth + 1)
            return "tensor" if left or right else None
        if isinstance(value, cst.Comparison):  # a mask: q > qmin (not ``z is not None``)
            if any(isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn))
                   for target in value.comparisons):
                return None
            return "tensor" if self._kind(record, value.left, function, depth + 1) else None
        if isinstance(value, cst.Subscript):
            return "tensor" if self._kind(record, value.value, function, depth + 1) else None
        if isinstance(value, cst.Attribute) and value.attr.value in _TENSOR_ATTRIBUTES:
            return "tensor" if self._kind(record, value.value, function, depth + 1) else None
        return None

    def _full_reduction(self, call: cst.Call) -> bool:
        """``x.max()``, ``x.sum()``, ``torch.amax(x)``: reduced over every dimension (no ``dim``),
        a 0-dim tensor of one element."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _FULL_REDUCTIONS \
                and not (self.facts.qualified_name(func) or "").startswith("torch."):
            arguments = call.args  # a method of the tensor: every argument would name a dimension
        elif (self.facts.qualified_name(func) or "").removeprefix("torch.") in _FULL_REDUCTIONS:
            arguments = call.args[1:]  # torch.max(x)
        else:
            return False
        return not any(arg.keyword is None or arg.keyword.value in ("dim", "axis") for arg in arguments)

    def _origin(self, value: cst.BaseExpression, function: FunctionScope) -> str:
        """For a value backward uses as a tensor: an input of forward, or another tensor."""
        if isinstance(value, cst.Name):
            binding = function.bindings.get(value.value)
            if binding is not None and isinstance(binding.node, cst.Param) and function.name == "forward":
                return "input"
        return "tensor"

    VALID = [
        # a memory bank handed in by its module, which backward updates in place (momentum
        # update): the module's own state, alive anyway; save_for_backward would refuse the writes
        """
import torch
from torch import autograd

class ClusterMemoryUpdate(autograd.Function):
    @staticmethod
    def forward(ctx, inputs, targets, features, momentum):
        ctx.features = features
        ctx.momentum = momentum
        ctx.save_for_backward(inputs, targets)
        return inputs.mm(features.t())

    @staticmethod
    def backward(ctx, grad_outputs):
        inputs, targets = ctx.saved_tensors
        grad_inputs = grad_outputs.mm(ctx.features)
        for x, y in zip(inputs, targets):
            ctx.features[y] = ctx.momentum * ctx.features[y] + (1.0 - ctx.momentum) * x
            ctx.features[y] /= ctx.features[y].norm()
        return grad_inputs, None, None, None
""",
        # a count reduced over every dimension (a 0-dim tensor: one number), read back as a kernel argument
        """
import torch

class GroupedDot(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, groups):
        _, counts = torch.unique_consecutive(groups, return_counts=True)
        n_max = counts.max()
        total = torch.sum(counts)
        ctx.n_max = n_max
        ctx.total = total
        ctx.save_for_backward(q, k)
        return (q * k).sum(-1)

    @staticmethod
    def backward(ctx, grad):
        q, k = ctx.saved_tensors
        return grad[:, None] * k * ctx.n_max / ctx.total, grad[:, None] * q, None
""",
        # a detached alias of the output (the fix maintainers apply to the output-on-ctx cycle):
        # the output's storage without its grad_fn, read back as a tensor in backward
        """
import torch

class NormalizeScores(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scores, row_splits):
        out = scores - torch.logsumexp(scores, dim=0)
        ctx.out = out.detach()
        return out

    @staticmethod
    def backward(ctx, grad):
        probs = ctx.out.exp()
        return grad - probs * grad.sum(), None
""",
        # a list of tensors that backward takes back with pop()
        """
import torch
class InvertibleFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, fn, x):
        ctx.fn = fn
        with torch.no_grad():
            y = fn(x)
        ctx.outputs = [y.detach()]
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y = ctx.outputs.pop()
        x = ctx.fn.inverse(y)
        return None, grad_output * x
""",
        # the CPU RNG state kept to replay forward in backward (activation checkpointing): made from
        # nothing the Function was given, a few KiB however large the inputs
        """
import torch
class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_function, *args):
        ctx.run_function = run_function
        ctx.fwd_cpu_rng_state = torch.get_rng_state()
        ctx.save_for_backward(*args)
        with torch.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = [x.detach().requires_grad_(True) for x in ctx.saved_tensors]
        torch.set_rng_state(ctx.fwd_cpu_rng_state)
        with torch.enable_grad():
            outputs = ctx.run_function(*inputs)
        torch.autograd.backward(outputs, grads)
        return (None,) + tuple(x.grad for x in inputs)
""",
        # empty workspace placeholders handed to an extension: no element, no memory held
        """
import torch
class DeformConvFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, offset, weight):
        ctx.save_for_backward(input, offset, weight)
        ctx.bufs_ = [input.new_empty(0), input.new_empty(0)]
        return torch.ops.my_ext.deform_conv(input, weight, offset, ctx.bufs_[0], ctx.bufs_[1])

    @staticmethod
    def backward(ctx, grad_output):
        input, offset, weight = ctx.saved_tensors
        return torch.ops.my_ext.deform_conv_backward(input, weight, offset, grad_output, ctx.bufs_[0])
""",
        # a handle object parameterised by Tensor (an Awaitable the backward waits on) is no tensor
        """
import torch
from torch import Tensor
from torch.autograd import Function
class AllToAllReq(Function):
    @staticmethod
    def forward(ctx, pg, myreq: "Request[Tensor]", a2ai, inputs):
        myreq.req = torch.distributed.all_to_all_single(myreq.buffer, inputs, group=pg, async_op=True)
        ctx.myreq = myreq
        ctx.pg = pg
        return myreq.dummy_tensor

    @staticmethod
    def backward(ctx, *unused):
        myreq = ctx.myreq
        myreq.req.wait()
        grad = myreq.tensor
        myreq.tensor = None
        return (None, None, None, grad)
""",
        # tensors saved with save_for_backward, numbers and flags on ctx
        """
import torch
class ScaledMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, scale: float, transpose=False):
        ctx.save_for_backward(x, weight)
        ctx.scale = scale
        ctx.transpose = transpose
        ctx.shape = x.shape
        ctx.dtype = x.dtype
        return x.mm(weight.t()) * scale

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return grad_out.mm(weight) * ctx.scale, grad_out.t().mm(x) * ctx.scale, None, None
""",
        # a callable and a module on ctx; the inputs kept until backward deletes them
        # (guided-diffusion's checkpoint function)
        """
import torch
class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_function, length, *args):
        ctx.run_function = run_function
        ctx.input_tensors = list(args[:length])
        ctx.input_params = list(args[length:])
        with torch.no_grad():
            output_tensors = ctx.run_function(*ctx.input_tensors)
        return output_tensors

    @staticmethod
    def backward(ctx, *output_grads):
        ctx.input_tensors = [x.detach().requires_grad_(True) for x in ctx.input_tensors]
        with torch.enable_grad():
            outputs = ctx.run_function(*ctx.input_tensors)
        grads = torch.autograd.grad(outputs, ctx.input_tensors + ctx.input_params, output_grads)
        del ctx.input_tensors
        del ctx.input_params
        return (None, None) + grads
""",
        # setup_context saving the output the right way; a class that is not an autograd.Function
        """
import torch
class Exp(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return grad * result

class Recorder:
    def forward(self, ctx, x):
        ctx.out = x.clone()
        return ctx.out
""",
    ]

    INVALID = [
        # the same input on ctx, only read by backward: kept for the graph's lifetime
        Invalid("""
import torch
from torch import autograd

class MemoryScores(autograd.Function):
    @staticmethod
    def forward(ctx, inputs, features):
        ctx.features = features
        return inputs.mm(features.t())

    @staticmethod
    def backward(ctx, grad_outputs):
        return grad_outputs.mm(ctx.features), None
""", line=8),
        # a reduction over one dimension keeps a tensor of the other ones
        Invalid("""
import torch
class RowCounts(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, groups):
        counts = torch.bincount(groups)
        ctx.row_sums = counts.sum(dim=0, keepdim=True) * q.sum(1)
        return q * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2, None
""", line=7),
        # the output kept on ctx (pytorch#25340)
        Invalid("""
import torch
class ClampedExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.clamp(max=20).exp()
        ctx.y = y
        return y

    @staticmethod
    def backward(ctx, grad_y):
        return grad_y * ctx.y
""", line=7),
        # an input kept on ctx: a warning (it lives as long as the graph)
        Invalid("""
import torch
from typing import Optional
from torch.autograd import Function
class StraightThrough(Function):
    @staticmethod
    def forward(ctx, logits, hard: Optional[torch.Tensor]):
        ctx.hard = hard
        return logits + (hard - logits).detach()

    @staticmethod
    def backward(ctx, grad):
        return grad, None
""", line=8),
        # intermediates kept on ctx, one of them used as a tensor in backward (sru#171)
        Invalid("""
import torch
class GatedCell(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, x, c0):
        gate = torch.sigmoid(u)
        c = gate * c0 + (1 - gate) * x
        ctx.save_for_backward(u, x, c0)
        ctx.c = c
        return torch.tanh(c)

    @staticmethod
    def backward(ctx, grad_h):
        u, x, c0 = ctx.saved_tensors
        grad_c = grad_h * (1 - torch.tanh(ctx.c) ** 2)
        return grad_c, grad_c, grad_c
""", line=9),
        # the output from setup_context
        Invalid("""
import torch
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.result = output

    @staticmethod
    def backward(ctx, grad):
        return grad * (1 - torch.exp(-ctx.result))
""", line=10),
    ]


def is_torch_operator(qualified: str) -> bool:
    """A ``torch`` operator returning a tensor: ``torch.matmul``, ``torch.nn.functional.relu``
    (not ``torch.Size``, ``torch.is_tensor``, ``torch.nn.modules.utils._pair``)."""
    if qualified.startswith(_OPERATOR_NAMESPACES):
        return True
    parts = qualified.split(".")
    return (len(parts) == 2 and parts[0] == "torch" and parts[1][:1].islower()
            and qualified not in _NOT_TENSOR_FUNCTIONS)


def _pairs(target: cst.BaseExpression, value: cst.BaseExpression) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """``ctx.a, ctx.b = x, y`` -> (ctx.a, x), (ctx.b, y); a target unpacking one value gets it whole."""
    if isinstance(target, (cst.Tuple, cst.List)):
        if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements):
            return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
        return [(t.value, value) for t in target.elements]
    return [(target, value)]


def _ctx_attribute(node: cst.BaseExpression, ctx: str) -> str | None:
    """``attr`` for ``ctx.attr``."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == ctx:
        return node.attr.value
    return None


def _parameter_index(function: FunctionScope, name: str) -> int | None:
    params = [p.name.value for p in function.node.params.params]
    return params.index(name) if name in params else None


def _annotated_tensor(param: cst.Param) -> bool:
    """Annotated ``Tensor``, ``torch.Tensor``, ``Optional[Tensor]`` or ``Tensor | None``: not a
    container or a handle parameterised by it (``List[Tensor]``, ``Request[Tensor]``)."""
    return param.annotation is not None and _is_tensor_type(param.annotation.annotation)


def _is_tensor_type(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):  # Tensor | None
        sides = [node.left, node.right]
        return any(_is_tensor_type(side) for side in sides) and all(
            _is_tensor_type(side) or (isinstance(side, cst.Name) and side.value == "None") for side in sides)
    if isinstance(node, cst.Subscript) and (dotted_name(node.value) or "").rsplit(".", 1)[-1] == "Optional" \
            and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return _is_tensor_type(node.slice[0].slice.value)
    if isinstance(node, cst.SimpleString):  # "Tensor", "torch.Tensor"
        return node.evaluated_value in ("Tensor", "torch.Tensor")
    return dotted_name(node) in ("Tensor", "torch.Tensor")


def _short(node: cst.BaseExpression) -> str:
    text = cst.Module(body=()).code_for_node(node)
    return text if len(text) <= 24 else text[:21] + "..."


_EMPTY_MAKERS = frozenset({"new_empty", "new_zeros", "empty", "zeros"})


def _empty_placeholders(value: cst.BaseExpression) -> bool:
    """``[x.new_empty(0), x.new_empty(0)]``, ``torch.empty(0)``: tensors made with no element
    (workspace placeholders an extension fills in its own copies), which hold no memory."""
    values = [element.value for element in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
    return bool(values) and all(
        isinstance(v, cst.Call) and isinstance(v.func, (cst.Attribute, cst.Name))
        and (v.func.attr.value if isinstance(v.func, cst.Attribute) else v.func.value) in _EMPTY_MAKERS
        and len(v.args) == 1 and isinstance(v.args[0].value, cst.Integer) and v.args[0].value.value == "0"
        for v in values)


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(_literal(element.value) for element in node.elements)
    return False


def _detached_output(value: cst.BaseExpression, returned: "set[str] | tuple", module: cst.Module) -> bool:
    """``out.detach()`` (or ``out[0].detach()`` of a holder whose ``out[0].values`` forward
    returns): a detached alias of the output shares its storage and holds no ``grad_fn``, so it
    keeps nothing the output does not and closes no cycle (the fix maintainers apply)."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "detach" and not value.args):
        return False
    receiver = module.code_for_node(value.func.value)
    return any(text == receiver or text.startswith((receiver + ".", receiver + "[")) for text in returned)
