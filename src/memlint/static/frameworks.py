"""Built-in models of the classes frameworks provide, by qualified name: what memlint knows a
class outside the project is (an ``nn.Module``, a ``LightningModule``, a Hugging Face
``Trainer``, a ``Dataset``...), and so what the framework does with a subclass's methods
(Lightning runs ``validation_step`` under no-grad and backpropagates what ``training_step``
returns; the HF Trainer backpropagates what ``compute_loss`` returns).

A class of the project is classified through its bases (:meth:`memlint.static.project.Project.ancestors`);
a base that is neither in the project nor known here leaves the class's kind unknown, which a
rule must read as unknown (not as "plain class").
"""

from __future__ import annotations

from dataclasses import dataclass

LIGHTNING_PACKAGES = ("lightning", "pytorch_lightning", "lightning_fabric")
# The HF Trainer and the trainers built on it (TRL's, setfit's...): compute_loss is backpropagated,
# prediction_step runs under no-grad.
_HF_TRAINERS = ("Trainer", "Seq2SeqTrainer")
_TRAINER_PACKAGES = ("transformers", "trl", "setfit", "peft")
# Classes of model libraries that are loaded with ``from_pretrained`` but are not modules.
_NOT_MODULE_WORDS = ("Tokenizer", "Config", "Processor", "FeatureExtractor", "Extractor", "Vocab", "Scheduler",
                     "Pipeline", "Output", "Args", "Arguments", "Trainer", "Callback", "Collator", "Dataset")
_NOT_MODULE_TORCH_NN = frozenset({"Parameter", "ParameterList", "ParameterDict", "UninitializedParameter",
                                  "UninitializedBuffer"})
# Packages whose classes are none of the kinds above (they do not build on torch): a class
# deriving from one of theirs is as plain as its other bases make it.
_PLAIN_PACKAGES = frozenset({
    "abc", "enum", "typing", "typing_extensions", "collections", "dataclasses", "json", "threading",
    "multiprocessing", "argparse", "logging", "unittest", "contextlib", "functools", "io", "os", "pathlib",
    "numbers", "queue", "sklearn", "numpy", "pandas", "scipy", "pydantic", "attr", "attrs",
})
# Methods of framework objects that hand back what they are given (in one process, the same
# tensor, graph included): Accelerator.gather_for_metrics(loss) is loss.
PASS_THROUGH_METHODS: dict[str, frozenset[str]] = {
    "accelerate.Accelerator": frozenset({"gather", "gather_for_metrics", "reduce", "pad_across_processes"}),
    "accelerate.accelerator.Accelerator": frozenset({"gather", "gather_for_metrics", "reduce",
                                                     "pad_across_processes"}),
}
DATASET_CLASSES = frozenset({"Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "Subset"})


@dataclass(frozen=True)
class ClassKinds:
    """What a class is, as far as its bases tell."""

    module: bool = False  # an nn.Module (its calls run forward and carry graphs)
    lightning: bool = False  # a LightningModule
    hf_trainer: bool = False  # a transformers.Trainer (or a trainer built on it)
    dataset: bool = False  # a torch.utils.data.Dataset
    autograd_function: bool = False  # a torch.autograd.Function
    optimizer: bool = False  # a torch.optim.Optimizer
    # a Lightning Callback: its on_*_batch_end hooks run once per batch, given the step's outputs
    # and the batch on the module's device
    lightning_callback: bool = False
    # Some base is neither a class of the project nor one memlint knows: the class may be any
    # of the above (a LightningModule through a third-party base), so "not X" is not known.
    unknown_base: bool = False

    def join(self, other: "ClassKinds") -> "ClassKinds":
        return ClassKinds(*(a or b for a, b in zip(_fields(self), _fields(other))))


def _fields(kinds: ClassKinds) -> tuple[bool, ...]:
    return (kinds.module, kinds.lightning, kinds.hf_trainer, kinds.dataset, kinds.autograd_function,
            kinds.optimizer, kinds.lightning_callback, kinds.unknown_base)


PLAIN = ClassKinds()


def external_kinds(qualified: str) -> ClassKinds:
    """What a class outside the project is, from its qualified name (``object`` and other
    builtins are plain; an unknown third-party class is ``unknown_base``)."""
    if "." not in qualified:
        if qualified in ("object", "Exception", "BaseException", "dict", "list", "tuple", "str", "int",
                         "float", "set", "type", "ABC", "Enum", "IntEnum", "NamedTuple", "Protocol",
                         "Generic", "TypedDict"):
            return PLAIN
        return ClassKinds(unknown_base=True)  # a name not imported nor defined: a star import
    root = qualified.split(".", 1)[0]
    last = qualified.rsplit(".", 1)[-1]
    if root in _PLAIN_PACKAGES:
        return PLAIN
    if root in LIGHTNING_PACKAGES:
        if last == "LightningModule":
            return ClassKinds(module=True, lightning=True)
        if last.endswith("Callback") or last == "BasePredictionWriter":
            return ClassKinds(lightning_callback=True)
        if last in ("LightningDataModule", "Trainer", "Fabric"):
            return PLAIN  # the data, the loop runner: not modules (their methods are methods)
        return ClassKinds(unknown_base=True)
    if root == "torch":
        if last in DATASET_CLASSES and ".data" in qualified:
            return ClassKinds(dataset=True)
        if last == "Function" and "autograd" in qualified:
            return ClassKinds(autograd_function=True)
        if qualified.startswith("torch.optim") and last[:1].isupper():
            return ClassKinds(optimizer=True)
        if qualified.startswith("torch.nn.") and last[:1].isupper() and not qualified.startswith(
                "torch.nn.functional") and last not in _NOT_MODULE_TORCH_NN:
            return ClassKinds(module=True)
        return ClassKinds(unknown_base=True)
    if root == "accelerate" and last == "Accelerator":
        return PLAIN  # accelerator.unwrap_model(m), .backward(loss): methods of the launcher object
    if root == "skorch" and last.startswith("NeuralNet"):
        return PLAIN  # a scikit-learn style wrapper; it calls its own validation_step under no_grad
    if root in _TRAINER_PACKAGES and (last in _HF_TRAINERS or last.endswith("Trainer")):
        return ClassKinds(hf_trainer=True)
    if root == "transformers":
        if any(word in last for word in _NOT_MODULE_WORDS):
            return PLAIN if last.endswith(("Config", "Output", "Arguments", "Args")) else ClassKinds(unknown_base=True)
        if last.endswith(("Model", "PreTrainedModel")) or "For" in last or last.endswith(("Layer", "Block", "Encoder",
                                                                                           "Decoder", "Attention")):
            return ClassKinds(module=True)
    return ClassKinds(unknown_base=True)


def is_lightning_package(qualified: str) -> bool:
    return qualified.split(".", 1)[0] in LIGHTNING_PACKAGES
