"""Precision benchmark on research code: the training repositories and tutorials people copy.

``real_code.py`` checks frameworks (Lightning, Accelerate, ...); this checks the code written
*with* them, where the first findings a researcher sees must be true: a minimal GPT, masked
autoencoders, detection fine-tuning, diffusion, self-supervised and contrastive learning with
teacher/EMA networks, GANs, RL loops, Hugging Face fine-tuning notebooks and scripts, and the
tutorials and courses most people learned PyTorch from. Each repository is pinned by commit;
only its ``.py`` and ``.ipynb`` files are checked (notebooks cell by cell, as ``memlint check``
does).

    python3 benchmarks/research_code.py                    # table per repository
    python3 benchmarks/research_code.py --list             # plus every finding (paths relative to the corpus)
    python3 benchmarks/research_code.py --repo nanoGPT --repo mae --select ML2 --list
    python3 benchmarks/research_code.py --mirror /work/.mirror   # read local git mirrors, no network

Getting the code: by default each repository is cloned at its pinned commit into
``benchmarks/.corpus-research/<name>/`` (git-ignored): a shallow, blob-filtered fetch of that one
commit with a sparse checkout of the Python files and notebooks, so even the large tutorial
repositories cost a few megabytes. ``--mirror DIR`` instead takes each repository from a local
git directory ``DIR/<owner>+<name>/repo`` (or ``DIR/<owner>+<name>``) with ``git archive``.
A checkout already there at the pinned commit is kept (delete the folder to refetch).

Files that import a library held out for evaluation (see ``HELD_OUT``) are skipped and counted:
this corpus is used to tune rules, and must not tune them on those libraries.

Every finding is triaged in ``benchmarks/triage/research_code.md``. Run by hand, not by CI.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / ".corpus-research"
PIN_FILE = ".memlint-pinned"  # written after a complete checkout: the commit it holds

CODE = ("**/*.py", "**/*.ipynb")


@dataclass(frozen=True)
class Repo:
    name: str  # short name: the table's row, --repo, the folder in the corpus
    github: str  # owner/name
    commit: str  # the pinned commit (40 hex digits)
    what: str  # what it is, in a few words
    include: tuple[str, ...] = CODE  # globs relative to the repository root
    exclude: tuple[str, ...] = ()  # fnmatch patterns on the relative path


REPOS: tuple[Repo, ...] = (
    Repo("nanoGPT", "karpathy/nanoGPT", "3adf61e154c3fe3fca428ad6bc3818b27a3b8291",
         "minimal GPT training (DDP, autocast, estimate_loss)"),
    Repo("minGPT", "karpathy/minGPT", "37baab71b9abea1b76ab957409a1cc2fbfba8a26",
         "minimal GPT library and trainer"),
    Repo("mae", "facebookresearch/mae", "efb2a8062c206524e35e47d04501ed4f544c0ae8",
         "masked-autoencoder pre-training and fine-tuning"),
    Repo("detr", "facebookresearch/detr", "29901c51d7fe8712168b8d0d64351170bc0f83e0",
         "detection training and fine-tuning"),
    Repo("improved-diffusion", "openai/improved-diffusion", "1bc7bbbdc414d83d4abf2ad8cc1446dc36c4e4d5",
         "diffusion training with EMA"),
    Repo("guided-diffusion", "openai/guided-diffusion", "22e0df8183507e13a7813f8d38d51b072ca1e67c",
         "diffusion and noisy-classifier training"),
    Repo("denoising-diffusion", "lucidrains/denoising-diffusion-pytorch", "faed4db28e724735323fa91c70aa9b28a6e1cbac",
         "the most copied DDPM trainer (EMA, accelerate)"),
    Repo("stylegan2-ada", "NVlabs/stylegan2-ada-pytorch", "d72cc7d041b42ec8e806021a205ed9349f87c6a4",
         "GAN training with custom ops"),
    Repo("PyTorch-GAN", "eriklindernoren/PyTorch-GAN", "36d3c77e5ff20ebe0aeefd322326a134a279b93e",
         "forty GAN training scripts"),
    Repo("dino", "facebookresearch/dino", "7c446df5b9f45747937fb0d72314eb9f7b66930a",
         "self-distillation: student and EMA teacher"),
    Repo("deit", "facebookresearch/deit", "7e160fe43f0252d17191b71cbb5826254114ea5b",
         "ViT training with a distillation teacher"),
    # The last commit before the repository's code was removed upstream.
    Repo("moco", "facebookresearch/moco", "132aea9da9bb995a411c915c0420be3db62052f3",
         "contrastive learning with a momentum key encoder"),
    Repo("SimCLR", "sthalles/SimCLR", "1848fc934ad844ae630e6c452300433fe99acfd9",
         "contrastive learning (SimCLR)"),
    Repo("byol", "lucidrains/byol-pytorch", "299312613c1f44923e7869d1c82be7d536c2c42b",
         "BYOL: online network and EMA target"),
    Repo("OpenAI-CLIP", "moein-shariatnia/OpenAI-CLIP", "73fea1f9b71a4982997ea4c75070a845b547abef",
         "a CLIP training tutorial"),
    Repo("cleanrl", "vwxyzjn/cleanrl", "fe8d8a03c41a7ef5b523e2e354bd01c363e786bb",
         "single-file RL: PPO, DQN, SAC, TD3 with target networks",
         # adapted copies of stable-baselines3 code (held out for evaluation)
         exclude=("cleanrl_utils/buffers.py", "cleanrl_utils/atari_wrappers.py")),
    Repo("pytorch-examples", "pytorch/examples", "77f55b912142e11fcfdf5b530231fb9c52f181e8",
         "the official examples (ImageNet, DCGAN, word LM, RL, DDP...)"),
    Repo("pytorch-tutorial", "yunjey/pytorch-tutorial", "0500d3df5a2a8080ccfccbc00aca0eacc21818db",
         "the most starred PyTorch tutorial"),
    Repo("LLMs-from-scratch", "rasbt/LLMs-from-scratch", "28c65cdfbc3338e2e040016eea4b7fdf556e4d57",
         "book notebooks: GPT pre-training, fine-tuning, DPO"),
    Repo("pytorch-deep-learning", "mrdbourke/pytorch-deep-learning", "baa27b691617461c173ecf3439793cd8cde74e13",
         "course notebooks"),
    Repo("pytorch-seq2seq", "bentrevett/pytorch-seq2seq", "b3cd54c72cd6e4e63f672d334c795b4fe744ef92",
         "seq2seq tutorial notebooks"),
    Repo("hf-notebooks", "huggingface/notebooks", "5068b1142e8ed1e691c8b1e9f98e4473ebe55790",
         "Hugging Face fine-tuning notebooks and the course",
         include=("examples/**/*.ipynb", "course/en/**/*.ipynb"),
         exclude=("*tf*", "*tensorflow*", "*keras*", "*flax*", "*jax*")),
    Repo("accelerate-examples", "huggingface/accelerate", "16cb6eb80dd9aa8b4df1a63ef57863e455d53b83",
         "Hugging Face fine-tuning scripts (the package itself is in real_code.py)",
         include=("examples/**/*.py",)),
)
BY_NAME = {repo.name: repo for repo in REPOS}

# Libraries held out for the final evaluation: never tune rules on code that uses them.
HELD_OUT = ("monai", "ultralytics", "stable_baselines3", "composer", "pytorch_forecasting", "torchgeo",
            "diffusers", "peft", "trl", "open_clip")
_HELD_OUT_IMPORT = re.compile(rf"\b(?:from|import)\s+(?:{'|'.join(HELD_OUT)})\b")


def _git(*args: str, cwd: Path | None = None, stdout=None) -> subprocess.CompletedProcess:
    done = subprocess.run(["git", *args], cwd=cwd, stdout=stdout, stderr=subprocess.PIPE)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args[:3])}... failed: {done.stderr.decode(errors='replace').strip()}")
    return done


def _pinned(target: Path, commit: str) -> bool:
    marker = target / PIN_FILE
    return marker.is_file() and marker.read_text().strip() == commit


def _mirror_git_dir(mirror: Path, github: str) -> Path | None:
    folder = mirror / github.replace("/", "+")
    for candidate in (folder / "repo", folder, folder / "repo" / ".git"):
        if (candidate / "HEAD").is_file():
            return candidate
    return None


def _glob_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for git-style globs on relative paths: ``**/`` is any folders (or none),
    ``*`` any characters but ``/``."""
    parts = []
    for pattern in patterns:
        regex = re.escape(pattern).replace(r"\*\*/", "(?:.*/)?").replace(r"\*", "[^/]*")
        parts.append(f"(?:{regex})")
    return re.compile(f"(?:{'|'.join(parts)})\\Z")


def _wanted(repo: Repo, relative: str) -> bool:
    return bool(_glob_regex(repo.include).match(relative)) and not any(
        fnmatch.fnmatch(relative, pattern) for pattern in repo.exclude)


def _extract(git_dir: Path, repo: Repo, target: Path) -> None:
    """Write the wanted files of the pinned commit from a git directory (blob by blob through
    one ``cat-file --batch``: a mirror may lack the big blobs of files we do not want)."""
    listed = _git(f"--git-dir={git_dir}", "ls-tree", "-r", "-z", repo.commit, stdout=subprocess.PIPE).stdout
    blobs = []
    for entry in listed.decode("utf-8", errors="surrogateescape").split("\0"):
        if not entry:
            continue
        info, path = entry.split("\t", 1)
        mode, kind, sha = info.split()
        if kind == "blob" and mode != "120000" and _wanted(repo, path):
            blobs.append((sha, path))
    request = "".join(f"{sha}\n" for sha, _ in blobs).encode()
    done = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "--batch"], input=request,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    out, at = done.stdout, 0
    missing = []
    for sha, path in blobs:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].split()
        if header[-1] == b"missing":
            missing.append(path)
            at = header_end + 1
            continue
        size = int(header[2])
        content = out[header_end + 1: header_end + 1 + size]
        at = header_end + 1 + size + 1
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(content)
    if missing:  # a mirror may leave out its largest files (notebooks with big outputs)
        print(f"  {len(missing)} file(s) absent from the mirror, not checked: {', '.join(missing)}", file=sys.stderr)


def obtain(repo: Repo, mirror: Path | None, target: Path | None = None) -> Path:
    """The repository's files at the pinned commit in ``target`` (default: its folder in this
    corpus), fetched if not there yet."""
    target = target or CORPUS / repo.name
    if _pinned(target, repo.commit):
        _mark_checkout(target)
        return target
    if target.exists():
        subprocess.run(["rm", "-rf", str(target)], check=True)
    target.mkdir(parents=True)
    if mirror is not None:
        git_dir = _mirror_git_dir(mirror, repo.github)
        if git_dir is None:
            raise SystemExit(f"no mirror of {repo.github} under {mirror}")
        print(f"extracting {repo.github}@{repo.commit[:12]} from {git_dir}", file=sys.stderr)
        _extract(git_dir, repo, target)
        _mark_checkout(target)
    else:
        print(f"fetching {repo.github}@{repo.commit[:12]}", file=sys.stderr)
        _git("init", "--quiet", cwd=target)
        _git("remote", "add", "origin", f"https://github.com/{repo.github}.git", cwd=target)
        _git("sparse-checkout", "set", "--no-cone", *repo.include, cwd=target)
        _git("fetch", "--quiet", "--depth=1", "--filter=blob:none", "origin", repo.commit, cwd=target)
        _git("checkout", "--quiet", "FETCH_HEAD", cwd=target)
    (target / PIN_FILE).write_text(repo.commit + "\n")
    return target


def _mark_checkout(target: Path) -> None:
    """An extracted copy gets an (empty) ``.git`` as a checkout has: memlint finds the project's
    root by it, and scripts in sub-folders then import the root's packages as they do when run."""
    if not (target / ".git").exists():
        _git("init", "--quiet", cwd=target)


def source_files(target: Path, repo: Repo) -> tuple[list[str], int]:
    """The files to check, and how many were skipped for importing a held-out library. Not the
    folders ``memlint check .`` skips in the repository (``.ipynb_checkpoints/``, ``build/``...):
    the files are named one by one here, and a named file is checked wherever it lies."""
    from memlint.static.discovery import skip_folder_name

    files: set[Path] = set()
    for pattern in repo.include:
        files.update(p for p in target.glob(pattern) if p.is_file() and ".git" not in p.parts)
    kept, held_out = [], 0
    for path in sorted(files):
        relative = path.relative_to(target)
        if not _wanted(repo, relative.as_posix()) or any(skip_folder_name(part) for part in relative.parts[:-1]):
            continue
        if _HELD_OUT_IMPORT.search(path.read_text(encoding="utf-8", errors="replace")):
            held_out += 1
            continue
        kept.append(str(path))
    return kept, held_out


def count_lines(paths: list[str]) -> int:
    """Lines of code: a notebook counts its code cells' lines, not its JSON."""
    import json

    total = 0
    for path in paths:
        if path.endswith(".ipynb"):
            try:
                cells = json.loads(Path(path).read_text(encoding="utf-8")).get("cells", [])
            except ValueError:
                continue
            for cell in cells:
                if cell.get("cell_type") == "code":
                    source = cell.get("source", "")
                    total += len(source) if isinstance(source, list) else source.count("\n") + 1
        else:
            with open(path, "rb") as fh:
                total += fh.read().count(b"\n")
    return total


def build_parser(description: str, names: list[str]) -> argparse.ArgumentParser:
    """The options of a run over repositories called ``names`` (benchmarks/fresh_code.py adds its own)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--list", action="store_true", help="print every finding")
    parser.add_argument("--select", default=None, help="comma-separated code prefixes (default: the default rule set)")
    parser.add_argument("--all-rules", action="store_true", help="enable every rule, also those off by default")
    parser.add_argument("--repo", action="append", choices=sorted(names), help="only these repositories")
    parser.add_argument("--mirror", type=Path, default=None,
                        help="take repositories from local git mirrors (DIR/<owner>+<name>[/repo]) instead of GitHub")
    parser.add_argument("-j", "--jobs", type=int, default=0, help="worker processes (default: all cores)")
    parser.add_argument("--absolute", action="store_true", help="--list: absolute paths (default: relative to the corpus)")
    return parser


def main(argv: list[str] | None = None) -> int:
    return check(build_parser(__doc__.splitlines()[0], list(BY_NAME)).parse_args(argv), list(REPOS))


def check(args: argparse.Namespace, repos: list[Repo], corpus: Path = CORPUS,
          folder: Callable[[Repo], str] = lambda repo: repo.name) -> int:
    """Obtain, check and tabulate ``repos`` (``args.repo`` narrows them), each in ``corpus / folder(repo)``."""
    sys.path.insert(0, str(HERE.parent / "src"))
    from memlint.catalogue import all_codes, default_codes
    from memlint.config import Config
    from memlint.static.runner import check_paths

    if args.all_rules:
        config = Config(select=["ML"])
    elif args.select:
        config = Config(select=[c.strip() for c in args.select.split(",") if c.strip()])
    else:
        config = Config()
    enabled = sorted(config.enabled_codes(all_codes(), default_codes()))

    if args.repo:
        by_name = {repo.name: repo for repo in repos}
        repos = [by_name[name] for name in args.repo]
    rows = []
    all_findings = []
    per_rule_total: Counter[str] = Counter()
    for repo in repos:
        target = obtain(repo, args.mirror, corpus / folder(repo))
        files, held_out = source_files(target, repo)
        lines = count_lines(files)
        start = time.perf_counter()
        result = check_paths(files, config, use_cache=False, jobs=args.jobs)
        elapsed = time.perf_counter() - start
        per_rule = Counter(f.code for f in result.findings)
        per_rule_total.update(per_rule)
        rows.append((repo.name, repo.commit[:7], len(files), held_out, lines, elapsed, per_rule))
        all_findings.extend(result.findings)

    if args.list:
        for f in all_findings:
            path = f.path if args.absolute else os.path.relpath(f.path, corpus)
            where = f"{f.line}:{f.column}"
            if getattr(f, "cell", None) is not None:
                where = f"cell {f.cell}:{where}"
            print(f"{path}:{where} {f.code} [{f.severity}] {f.message}")
        print()

    shown = sorted(per_rule_total)
    silent = [c for c in enabled if c not in per_rule_total and not c.startswith("ML9")]
    head = f"{'repository':<23}{'commit':>8}{'files':>7}{'held':>6}{'lines':>9}{'secs':>7}{'total':>7}{'/10k':>7}"
    head += "".join(f"{c:>7}" for c in shown)
    print(head)
    print("-" * len(head))
    totals = [0, 0, 0, 0, 0.0]
    for name, commit, nfiles, held_out, lines, secs, per_rule in rows:
        n = sum(per_rule.values())
        for i, value in enumerate((nfiles, held_out, lines, n, secs)):
            totals[i] += value
        row = f"{name:<23}{commit:>8}{nfiles:>7}{held_out:>6}{lines:>9}{secs:>7.2f}{n:>7}{n * 10000 / max(lines, 1):>7.2f}"
        row += "".join(f"{per_rule[c]:>7}" for c in shown)
        print(row)
    print("-" * len(head))
    nfiles, held_out, lines, n, secs = totals
    row = f"{'total':<23}{'':>8}{nfiles:>7}{held_out:>6}{lines:>9}{secs:>7.2f}{n:>7}{n * 10000 / max(lines, 1):>7.2f}"
    row += "".join(f"{per_rule_total[c]:>7}" for c in shown)
    print(row)
    print(f"no findings: {', '.join(silent) or '-'}")
    print(f"rules enabled: {', '.join(enabled)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
