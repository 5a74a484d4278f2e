"""The rule catalogue: every rule's code, name, severity, summary and page, readable without
libcst (``memlint rules``, configuration checks, SARIF and the cache never import a rule).

Each entry here has a rule module ``memlint/static/rules/<CODE>_<name>.py`` holding the
detector, and a page ``rules/<CODE>.md``; the rule class takes its metadata from its entry.
A code, once given out, is never reused for something else.

``triggers`` are substrings of which a file's text must contain at least one for the rule to
have anything to find there (empty: always runs). They live here, not in the rule module, so
that a file no rule can match is skipped before libcst or any rule is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    severity: str  # "error" (a leak) | "warning" (waste) | "info" (a hint)
    summary: str
    enabled_by_default: bool = True
    fixable: bool = False
    triggers: tuple[str, ...] = ()
    # False for memlint's own diagnostics, which apply to any Python file.
    torch_only: bool = True
    # Why a finding of this rule has another severity than ``severity``, for each severity its
    # detector may give instead (shown under the finding: "error here, not the usual warning: ...").
    other_severities: tuple[tuple[str, str], ...] = ()

    def why_severity(self, severity: str) -> str | None:
        """Why a finding of this rule is ``severity`` rather than the rule's own, or None."""
        return dict(self.other_severities).get(severity)

    @property
    def module(self) -> str:
        """The rule's module in :mod:`memlint.static.rules`."""
        return f"{self.code}_{self.name.replace('-', '_')}"


CATALOGUE: tuple[RuleInfo, ...] = (
    # ML1xx leaks: memory grows every step.
    RuleInfo("ML101", "graph-accumulation", "error",
             "A value carrying an autograd graph is accumulated across iterations, keeping every step's graph alive.",
             fixable=True,
             other_severities=(("warning", "a link of the evidence is not shown: the graph reaches the accumulator on "
                                           "some paths only, or the value is only presumed to carry one (the help says "
                                           "which)"),)),
    RuleInfo("ML102", "loop-carried-graph", "error",
             "A value with an autograd graph is fed back into the next iteration, so the graph grows every step.",
             # Loops that run a backward pass or an optimizer step, recurrent state (hidden,
             # state, memory, a cache) streamed or sampled through a model with no backward pass
             # at all, state scaled in place, running statistics a forward keeps.
             triggers=("backward", ".step(", "grad(", "training_step", "train_step", "hidden", "state", "memor",
                       "cache", "sampl", "generat", "*=", "running_", "momentum", ".cat("),
             other_severities=(("warning", "a link of the evidence is not shown: the state carries a graph on "
                                           "some paths only, or only presumably (a model not seen, a layer's input, "
                                           "a value that only reaches a backpropagated loss: the help says which)"),)),
    RuleInfo("ML103", "retain-graph-in-loop", "error",
             "backward(retain_graph=True) runs every iteration on a graph that is never backpropagated again.",
             fixable=True, triggers=("retain_graph",)),
    RuleInfo("ML104", "hook-retains-tensors", "error",
             "A forward/backward hook stores its tensor arguments in a container that outlives the call.",
             triggers=("register_forward", "register_full_backward", "register_backward_hook", "register_hook",
                       "register_module_"),
             other_severities=(("warning", "what the hook keeps is detached, so memory grows with each call but "
                                           "without autograd graphs"),)),
    RuleInfo("ML105", "create-graph-backward", "error",
             "backward(create_graph=True) makes a parameter<->gradient reference cycle that keeps each step's "
             "graph alive.",
             triggers=("create_graph",)),
    RuleInfo("ML106", "oom-retry-in-except", "error",
             "An out-of-memory handler retries the work inside the except block, while the failed step's tensors "
             "are still alive.",
             triggers=("OutOfMemoryError", "out of memory", "oom", "OOM", "should_reduce_batch_size")),
    RuleInfo("ML107", "hook-registered-in-loop", "error",
             "A hook is registered on the same module (or tensor) every iteration and never removed: hooks and "
             "what they keep pile up.",
             triggers=("register_forward", "register_full_backward", "register_backward_hook", "register_hook",
                       "register_module_", "register_post_accumulate_grad_hook")),
    RuleInfo("ML108", "cache-keeps-graph", "error",
             "functools.lru_cache/cache over a module's output or a module's method keeps graphs, arguments and "
             "models alive.",
             triggers=("lru_cache", "functools.cache", "@cache"),
             other_severities=(("warning", "what the cache keeps is bounded, or holds no autograd graph"),)),
    RuleInfo("ML109", "models-kept-across-runs", "warning",
             "A loop over folds/trials trains a new model each time and keeps every one (weights, optimizer "
             "state) in a list.",
             triggers=(".append(", "] = ", "+= [")),
    RuleInfo("ML110", "epoch-end-outputs-kept", "error",
             "A LightningModule overrides training_epoch_end(outputs) and training_step returns tensors besides "
             "the loss: Lightning keeps every step's until the epoch ends.",
             triggers=("_epoch_end",)),
    RuleInfo("ML111", "recording-left-on", "warning",
             "CUDA memory history or a profiler without a schedule records every step of a training run: host "
             "memory grows with each one.",
             triggers=("_record_memory_history", "profiler.profile", "import profile", "profiler import")),
    RuleInfo("ML112", "figures-never-closed", "error",
             "A pyplot figure is made on every call or iteration and never closed: pyplot keeps every one.",
             triggers=("pyplot",)),
    RuleInfo("ML113", "cudagraphs-fed-many-shapes", "warning",
             "A callable compiled with CUDA graphs (mode='reduce-overhead') is fed a new input shape again and "
             "again: a graph and its buffers are kept per shape.",
             triggers=("reduce-overhead", "max-autotune")),
    RuleInfo("ML114", "tensor-stored-on-ctx", "error",
             "A custom autograd.Function keeps a tensor on ctx instead of save_for_backward: its output makes a "
             "cycle gc cannot free, other tensors outlive backward.",
             triggers=("ctx.",),
             other_severities=(("warning", "what ctx keeps is an input or intermediate (no cycle), or backward "
                                           "releases it"),)),
    RuleInfo("ML115", "owner-reference-cycle", "error",
             "An object holding device memory refers back to itself (a grad_fn hook capturing it, its own bound "
             "method kept): it is freed only by the cycle collector, or never.",
             triggers=("grad_fn", "self."),
             other_severities=(("warning", "the cycle is an object keeping its own bound method: the cycle "
                                           "collector frees it, late"),)),
    RuleInfo("ML116", "model-deepcopy-per-step", "warning",
             "copy.deepcopy of a whole model on its device every step, or only to take its weights: a model's "
             "worth of GPU memory per copy, freed late when the module holds a cycle.",
             triggers=("deepcopy",)),
    RuleInfo("ML117", "tensor-cache-keyed-by-shape", "warning",
             "A dict on an object caches a tensor per shape or length and never evicts: every new size adds a "
             "tensor for the life of the object.",
             triggers=("] = ", "functools.cache", "@cache", "lru_cache")),
    RuleInfo("ML118", "cycle-keeps-every-batch", "warning",
             "itertools.cycle over a DataLoader keeps every batch of the first pass to replay it: a whole "
             "epoch of batches stays in memory.",
             triggers=("cycle",)),
    RuleInfo("ML119", "exception-kept-past-handler", "warning",
             "A caught exception stored in a global, on an object or in a kept container: its traceback keeps "
             "every frame of the call stack alive, with the tensors and models they hold.",
             triggers=("except",)),
    # ML2xx waste: the peak is higher than it needs to be.
    RuleInfo("ML201", "grad-enabled-inference", "warning",
             "A forward pass that is only inference (eval mode, an inference loop, a teacher or target model) runs "
             "with autograd enabled, keeping activations for a backward that never comes.",
             fixable=True,
             # eval mode; a training step (a teacher); outputs collected by an inference loop; outputs
             # only read detached
             triggers=(".eval()", ".train(False)", "train(mode=False)", ".train()", "backward", "training_step",
                       "train_step", "compute_loss", ".append(", ".extend(", "+= [", ".cat(", ".stack(", "property",
                       ".detach(", ".item(", ".tolist(", ".data")),
    RuleInfo("ML202", "empty-cache-in-loop", "warning",
             "torch.cuda.empty_cache() runs every step: it frees nothing still referenced and forces slow "
             "re-allocation.",
             triggers=("empty_cache",)),
    RuleInfo("ML203", "load-without-map-location", "error",
             "torch.load() without map_location in a program of one process per GPU: every rank loads the "
             "checkpoint onto cuda:0.",
             fixable=True, triggers=("load(",),
             other_severities=(("warning", "one process: the checkpoint this program saved from its GPU comes back "
                                           "onto the GPU and stays referenced through the training that follows; or "
                                           "every rank loads a file whose use is not seen (only its name says it "
                                           "holds model or optimizer state)"),
                               ("info", "one process: how the file was saved is not known; a GPU-saved checkpoint "
                                        "copied into a model already on the GPU (or into an optimizer) is a second "
                                        "copy beside it while it loads"))),
    RuleInfo("ML204", "cuda-in-dataset", "warning",
             "A tensor is moved to CUDA inside a Dataset or collate_fn, which runs in DataLoader worker processes.",
             triggers=("cuda",)),
    RuleInfo("ML205", "dataset-python-objects", "info",
             "A Dataset holds its samples in a big Python list/dict read by DataLoader workers: copy-on-read grows "
             "every worker.",
             triggers=("num_workers",)),
    RuleInfo("ML206", "data-parallel", "warning",
             "nn.DataParallel scatters each batch from the first GPU and gathers the outputs there, which fills "
             "first; use DistributedDataParallel.",
             triggers=("DataParallel", "data_parallel"),
             other_severities=(("info", "the loss is computed in forward, so nothing piles up on the first GPU: "
                                        "only speed is at stake"),)),
    RuleInfo("ML207", "outputs-kept-on-device", "warning",
             "Model outputs are collected on the accelerator over a whole loader: memory grows through the epoch.",
             # The module must move data to an accelerator (and collect outputs): .cuda(), .to(device),
             # device="cuda", accelerator.prepare(...), .to(local_rank)...; or Lightning's predict
             # hooks, whose batch Lightning puts on the module's device itself; or a list extended
             # with a tensor (row views, on any device)
             triggers=("cuda", "device", "prepare(", "gpu", "rank", "predict_step", "on_predict_batch_end",
                       ".extend(")),
    RuleInfo("ML208", "anomaly-detection-enabled", "warning",
             "Autograd anomaly detection is left on for training: a traceback per graph node and a much slower "
             "step.",
             triggers=("detect_anomaly",)),
    RuleInfo("ML209", "output-attentions-in-training", "warning",
             "A training forward asks for output_attentions/output_hidden_states it never reads: every layer's "
             "maps are built and kept.",
             triggers=("output_attentions", "output_hidden_states"),
             other_severities=(("info", "hidden states, unlike attention maps, are mostly kept for backward "
                                        "anyway"),)),
    RuleInfo("ML210", "metric-lifecycle", "warning",
             "A torchmetrics metric is built every batch, or updated every step and never reset.",
             triggers=("torchmetrics",)),
    RuleInfo("ML211", "gc-collect-in-loop", "warning",
             "gc.collect() runs every step: a full collection costs milliseconds to seconds per step and hides the "
             "real leak.",
             triggers=("collect(",)),
    RuleInfo("ML212", "persistent-workers-per-evaluation", "warning",
             "A DataLoader with persistent_workers=True is built anew for every evaluation: worker processes are "
             "started each time.",
             triggers=("persistent_workers",)),
    RuleInfo("ML213", "grad-mode-without-effect", "warning",
             "torch.no_grad() alone on a line, or on a factory whose returned closure does the work: autograd "
             "stays on where the work runs.",
             triggers=("no_grad", "inference_mode")),
    RuleInfo("ML214", "unread-model-copy", "warning",
             "A deep copy of a model or of its state dict is kept on an object (or appended at every call) "
             "where no code of the project reads it: a model's worth of memory for nothing.",
             triggers=("deepcopy",)),
    RuleInfo("ML215", "checkpoint-kept-through-training", "info",
             "A checkpoint loaded into host memory and copied into a model with load_state_dict() stays alive "
             "through the training loop that follows: a second copy of the weights for the whole run.",
             triggers=("load_state_dict",)),
    RuleInfo("ML216", "predictions-collected-unused", "warning",
             "Lightning's trainer.predict() keeps every batch's predictions to return them, and the caller throws "
             "the result away: the whole run's outputs stay in memory for nothing.",
             fixable=True,
             triggers=(".predict(",)),
    # ML3xx distributed.
    RuleInfo("ML301", "nccl-without-set-device", "warning",
             "An NCCL process group starts with no torch.cuda.set_device(local_rank): every rank opens a context "
             "on GPU 0.",
             triggers=("init_process_group",)),
    RuleInfo("ML302", "accumulation-without-no-sync", "warning",
             "Gradient accumulation on a DDP model without model.no_sync(): an all-reduce on every micro-batch.",
             triggers=("DistributedDataParallel", "accelerator.prepare(")),
    RuleInfo("ML303", "full-state-dict-on-every-rank", "warning",
             "FSDP FULL_STATE_DICT without FullStateDictConfig(offload_to_cpu=True, rank0_only=True) gathers the "
             "whole model on every GPU.",
             triggers=("FULL_STATE_DICT", "FullyShardedDataParallel", "fsdp")),
    RuleInfo("ML304", "all-gather-object-results", "warning",
             "all_gather_object gathers every batch's predictions as pickled Python objects onto every rank.",
             triggers=("gather_object", "gather_for_metrics", "comm.all_gather", "import all_gather")),
    # ML9xx memlint's own diagnostics.
    RuleInfo("ML901", "unchecked-file", "error",
             "The file could not be checked: syntax error, unreadable, undecodable or not Python.",
             torch_only=False),
    RuleInfo("ML902", "internal-error", "error",
             "memlint failed on this file (a bug in memlint); the other files were still checked.",
             torch_only=False),
    RuleInfo("ML903", "unused-suppression", "info",
             "A '# noqa' or '# memlint: disable' comment names a code that is not reported on that line.",
             enabled_by_default=False, torch_only=False,
             # Runs only in files that have a suppression comment.
             triggers=("noqa", "NOQA", "memlint:")),
)

BY_CODE: dict[str, RuleInfo] = {info.code: info for info in CATALOGUE}
# Produced by the runner itself, never by a detector walking the module.
RUNNER_CODES = ("ML901", "ML902")
UNUSED_SUPPRESSION = "ML903"


def all_codes() -> list[str]:
    return [info.code for info in CATALOGUE]


def default_codes() -> list[str]:
    return [info.code for info in CATALOGUE if info.enabled_by_default]


def rule_info(code: str) -> RuleInfo | None:
    return BY_CODE.get(code)


def _page_folders() -> list[Path]:
    package = Path(__file__).resolve().parent  # src/memlint
    # In the wheel the pages are memlint/rules/; in a source checkout that is a link to rules/.
    return [package / "rules", package.parents[1] / "rules"]


def rule_page_path(code: str) -> Path | None:
    """The file of a rule's page (shipped in the wheel), or None."""
    if code not in BY_CODE:
        return None
    for folder in _page_folders():
        page = folder / f"{code}.md"
        if page.is_file():
            return page
    return None


@lru_cache(maxsize=None)
def rule_page(code: str) -> str | None:
    """The Markdown page of a rule (``memlint rule CODE``), or None for an unknown code."""
    info = BY_CODE.get(code)
    if info is None:
        return None
    page = rule_page_path(code)
    if page is not None:
        return page.read_text(encoding="utf-8")
    return f"# {info.code} {info.name}\n\n{info.summary}\n"
