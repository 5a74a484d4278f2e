"""Held-out precision benchmark: memlint over training code its rule writers never read.

The libraries below were kept away from the people writing memlint's rules (issues 13 and 18),
so the findings here measure precision on unseen code, not on code the rules were tuned on.
The globs pick what trains and evaluates (trainers, engines, callbacks, handlers, inferers,
metrics, datasets and data modules, the examples and tests shipped in the wheel, inference
pipelines), not only model definitions: monai's ``networks/`` and most of diffusers' model
zoo are left out.

    python3 benchmarks/heldout_code.py            # table per package
    python3 benchmarks/heldout_code.py --list     # plus every finding: path:line:col CODE message
                                                  # (paths relative to benchmarks/.corpus-heldout/)
    python3 benchmarks/heldout_code.py --package trl --select ML1 --list

Pinned to the releases PyPI served when the corpus was chosen, installed with
``pip install --no-deps --target benchmarks/.corpus-heldout/<name>`` (git-ignored; an install
already there is kept, delete the folder to reinstall). Run by hand, not by CI. Baseline and
triage: benchmarks/triage/heldout-baseline.txt and benchmarks/triage/heldout.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / ".corpus-heldout"

# name -> (pinned requirement, source globs relative to the install folder)
PACKAGES: dict[str, tuple[str, tuple[str, ...]]] = {
    # Everything but networks/ (architectures): engines, handlers, inferers, metrics, losses,
    # apps (detection, auto3dseg, pathology... with their own training loops), data, transforms.
    "monai": (
        "monai==1.6.1",
        tuple(
            f"monai/{part}/**/*.py"
            for part in (
                "apps", "auto3dseg", "bundle", "config", "data", "engines", "fl", "handlers",
                "inferers", "losses", "metrics", "optimizers", "transforms", "utils", "visualize",
            )
        )
        + ("monai/*.py",),
    ),
    # Trainer/validator/predictor engines, per-task train/val/predict, callbacks, torch_utils.
    "ultralytics": ("ultralytics==8.4.190", ("ultralytics/**/*.py",)),
    "stable-baselines3": ("stable-baselines3==2.9.2", ("stable_baselines3/**/*.py",)),
    "composer": ("mosaicml==0.32.1", ("composer/**/*.py",)),
    # The wheel ships examples/ and tests/ next to the package.
    "pytorch-forecasting": (
        "pytorch-forecasting==1.8.0",
        ("pytorch_forecasting/**/*.py", "examples/**/*.py", "tests/**/*.py", "extension_templates/**/*.py"),
    ),
    "torchgeo": ("torchgeo==0.8.1", ("torchgeo/**/*.py",)),
    # Training utilities, hooks, loaders and the inference loops of the main pipeline families
    # (the other ~250k lines of pipelines are near copies of these).
    "diffusers": (
        "diffusers==0.42.1",
        (
            "diffusers/training_utils.py",
            "diffusers/optimization.py",
            "diffusers/callbacks.py",
            "diffusers/hooks/**/*.py",
            "diffusers/loaders/**/*.py",
            "diffusers/pipelines/pipeline_utils.py",
            "diffusers/pipelines/stable_diffusion/**/*.py",
            "diffusers/pipelines/stable_diffusion_xl/**/*.py",
            "diffusers/pipelines/controlnet/**/*.py",
            "diffusers/pipelines/flux/**/*.py",
            "diffusers/pipelines/wan/**/*.py",
        ),
    ),
    "peft": ("peft==0.21.2", ("peft/**/*.py",)),
    "trl": ("trl==1.16.0", ("trl/**/*.py",)),
    "open_clip_torch": ("open_clip_torch==3.3.0", ("open_clip/**/*.py", "open_clip_train/**/*.py")),
}


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(HERE))
    import real_code  # the same install/check/table code as the named corpus

    return real_code.main(argv, packages=PACKAGES, corpus=CORPUS, description=__doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
