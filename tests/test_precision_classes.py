"""The false shapes seen on code nobody here had read, one test per class, as near-misses that
must stay quiet (with the deciding fact in another module where the class says so), each beside
the true shape it is a near-miss of. See benchmarks/triage/fresh.md."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from memlint.config import Config
from memlint.static.runner import check_paths
from memlint.static.source_check import check_source
from memlint.catalogue import default_codes


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def project_findings(root: Path, name: str) -> list[tuple[int, str]]:
    result = check_paths([str(root / name)], Config(), use_cache=False)
    return sorted((f.line, f.code) for f in result.findings)


def findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(source), "train.py", default_codes()))


# ----- 1. evaluation a framework runs, the framework's class reached through the project ------------
def test_1_lightning_evaluation_hooks_through_a_base_class_of_another_module(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "proj/__init__.py": "",
        "proj/base.py": """
            import lightning.pytorch as pl

            class TaskModule(pl.LightningModule):
                def configure_optimizers(self):
                    return None
        """,
        "proj/model.py": """
            import torch
            from .base import TaskModule

            class Classifier(TaskModule):
                def __init__(self):
                    super().__init__()
                    self.net = torch.nn.Linear(4, 2)
                    self.validation_step_outputs = []

                def validation_step(self, batch, batch_idx):
                    logits = self.net(batch)
                    self.validation_step_outputs.append(logits)

                def test_step(self, batch, batch_idx):
                    self.net.eval()
                    return self.net(batch)
        """,
    })
    assert project_findings(tmp_path, "proj/model.py") == []


# ----- 2. values that carry no graph ----------------------------------------------------------------
def test_2_values_that_carry_no_graph(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "rl/__init__.py": "",
        "rl/losses.py": """
            def policy_loss(logits, actions, rewards):
                loss = -(logits.log_softmax(-1).gather(1, actions) * rewards).mean()
                return loss, rewards.detach().sum()
        """,
        "rl/train.py": """
            import numpy as np
            import torch
            from .losses import policy_loss

            def train(policy, env, opt, tokenizer, steps):
                total_reward = 0
                transcripts = []
                accuracy = 0
                for step in range(steps):
                    obs, actions, rewards = env.rollout(policy)
                    logits = policy(obs)
                    loss, reward = policy_loss(logits, actions, rewards)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    total_reward += reward
                    transcripts.append(tokenizer.decode(actions.tolist()))
                    accuracy += (logits.argmax(-1) == actions).float().mean()
                    kept = logits.detach()
                    transcripts.append(kept * 2)
                return total_reward, transcripts, accuracy
        """,
    })
    assert project_findings(tmp_path, "rl/train.py") == []
    # the same loop keeping the loss itself
    loop = (tmp_path / "rl/train.py").read_text().replace("total_reward += reward", "total_reward += loss")
    (tmp_path / "rl/train.py").write_text(loop)
    assert project_findings(tmp_path, "rl/train.py") == [(16, "ML101")]


# ----- 3. accumulators that do not outlive the step ------------------------------------------------------
def test_3_accumulators_that_do_not_outlive_the_step():
    source = """
        import torch
        from torch import nn

        class SeqLoss(nn.Module):
            def forward(self, logits, targets):
                total = 0
                for d in range(logits.size(-1)):
                    total += nn.functional.mse_loss(logits[..., d], targets[..., d])
                return total

        class Tracker:
            def __init__(self):
                self.loss = self._make_empty_loss()

            def _make_empty_loss(self):
                return {"value": 0}

            def step(self, model, loader, opt):
                for x, y in loader:
                    self.loss = self._make_empty_loss()
                    loss = model(x, y)
                    self.loss["value"] = self.loss["value"] + loss
                    opt.zero_grad()
                    loss.backward()
                    opt.step()

        class Decoder(nn.Module):
            def forward(self, x, steps):
                buf = x.new_zeros(x.size(0), steps, x.size(-1))
                for k in range(steps):
                    buf[:, k, :] = x.narrow(1, k, 1).squeeze(1)
                return buf
    """
    assert findings(source) == []


# ----- 4. facts in another module ----------------------------------------------------------------------
def test_4_set_device_done_by_a_helper_of_another_module(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "dist_train/__init__.py": "",
        "dist_train/utils.py": """
            import os
            import torch

            def get_device():
                local_rank = int(os.environ["LOCAL_RANK"])
                torch.cuda.set_device(local_rank)
                return torch.device("cuda", local_rank)
        """,
        "dist_train/main.py": """
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            from dist_train import utils

            def main(model):
                device = utils.get_device()
                dist.init_process_group("nccl")
                model = DDP(model.to(device))
                dist.barrier()
        """,
    })
    assert project_findings(tmp_path, "dist_train/main.py") == []


def test_4_set_device_done_by_the_entry_point_before_it_builds_the_trainer(tmp_path):
    """The process group is started in a trainer's ``__init__``; the only program that builds
    the trainer sets the device first (``run.py``): the constructor's callers are found by the
    class's name. A program that builds it without setting the device brings the finding back."""
    trainer = """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        class Trainer:
            def __init__(self, model, local_rank):
                dist.init_process_group(backend="nccl", init_method="env://")
                self.model = DDP(model.cuda(), device_ids=[local_rank])
                torch.cuda.synchronize()
    """
    run = """
        import argparse
        import torch
        from otrans.trainer import Trainer

        def main(args):
            trainer = Trainer(torch.nn.Linear(2, 2), args.local_rank)

        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--local_rank", type=int, default=0)
            args = parser.parse_args()
            {set_device}
            main(args)
    """
    files = {"pyproject.toml": "", "otrans/__init__.py": "", "otrans/trainer.py": trainer}
    write(tmp_path, {**files, "run.py": run.format(set_device="torch.cuda.set_device(args.local_rank)")})
    assert [code for _, code in project_findings(tmp_path, "otrans/trainer.py") if code == "ML301"] == []
    write(tmp_path, {"run.py": run.format(set_device="print(args)")})
    assert [code for _, code in project_findings(tmp_path, "otrans/trainer.py") if code == "ML301"] == ["ML301"]


# ----- 5. loops that are not steps ---------------------------------------------------------------------
def test_5_loops_that_are_not_steps():
    source = """
        import torch
        from tqdm import tqdm

        def merge_shards(model, shard_files):
            merged = {}
            for shard in tqdm(shard_files):
                state = torch.load(shard, map_location="cpu")
                merged.update(state)
            model.load_state_dict(merged)

        def run_benchmarks(model, benchmarks, evaluate):
            results = []
            for name in benchmarks:
                results.append(evaluate(model, name))
            return results

        def warmup(model, x):
            outs = []
            for i in [2]:
                outs.append(model(x[:i]))
            return outs
    """
    assert findings(source) == []


# ----- 6. single rules ----------------------------------------------------------------------------------
def test_5_steps_by_what_the_callees_do_and_methods_named_like_models():
    """``for step in range(n_updates)`` calling a learner's update (which backpropagates and
    steps) runs steps whatever its names: the update's returned loss tensors kept in a list are
    reported. ``update_model`` is a method of a class of this file, not a module call: when it
    returns numbers (``.item()``), nothing is reported."""
    source = """
        import torch
        import torch.nn as nn

        class Learner:
            def __init__(self, device):
                self.network = nn.Linear(4, 1).to(device)
                self.optimizer = torch.optim.Adam(self.network.parameters())

            def update_model(self, x):
                loss = self.network(x).pow(2).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                return loss, loss.detach()

        class Agent:
            def __init__(self, device):
                self.learner = Learner(device)
                self.update_info = []

            def train(self, n_updates):
                for step in range(n_updates):
                    info = self.learner.update_model(torch.randn(8, 4))
                    self.update_info.append(info)
    """
    assert findings(source) == [(25, "ML101")]
    assert findings(source.replace("return loss, loss.detach()", "return loss.item(), loss.detach()")) == []


def test_6_gradient_penalty_and_grad_norm_measurement_backpropagated_right_after():
    source = """
        import torch

        def train_critic(critic, loader, opt, weight):
            for real, fake in loader:
                real.requires_grad_(True)
                score = critic(real)
                grads = torch.autograd.grad(score.sum(), real, create_graph=True, retain_graph=True)[0]
                penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
                loss = critic(fake).mean() - score.mean() + weight * penalty
                opt.zero_grad()
                loss.backward()
                opt.step()

        def train_balanced(model, loader, opt):
            for x, y in loader:
                losses = model(x, y)
                norms = []
                for loss in losses:
                    loss.backward(retain_graph=True)
                    norms.append(model.weight.grad.norm().item())
                    model.zero_grad()
                sum(losses).backward()
                opt.step()
    """
    assert findings(source) == []


def test_6_a_gradient_penalty_returned_to_the_caller():
    """retain_graph=True beside create_graph=True changes nothing (retain_graph defaults to
    create_graph); the caller backpropagates the penalty. Without create_graph it is reported."""
    source = """
        import torch
        from torch import nn

        class GradientPenaltyLoss(nn.Module):
            def forward(self, fake, real, critic):
                alpha = torch.rand((real.size(0), 1, 1, 1), device=real.device)
                mixed = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
                scores = critic(mixed)
                grads = torch.autograd.grad(outputs=scores, inputs=mixed, grad_outputs=torch.ones_like(scores),
                                            create_graph=True, retain_graph=True)[0]
                return ((grads.view(grads.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()
    """
    assert findings(source) == []
    assert findings(source.replace("create_graph=True, ", "")) == [(10, "ML103")]


def test_2_a_number_returned_beside_the_loss_on_one_path():
    """``get_loss`` returns ``(loss, auc)`` when asked for the AUC and ``loss`` otherwise: the
    AUC unpacked from it is a number (its part of the tuple), not the loss's graph, even though
    the loop around it trains (through a helper) and so runs steps. The loss part is reported."""
    source = """
        import torch
        from sklearn.metrics import roc_auc_score

        def get_loss(out, label, loss_func, get_auc=True):
            loss = loss_func(out, label)
            if get_auc:
                return loss, roc_auc_score(label.cpu().numpy(), out.detach().cpu().numpy())
            return loss

        def train_model(model, x, label, loss_func, optimizer):
            loss = get_loss(model(x), label, loss_func, get_auc=False)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        def main(model, x, label, loss_func, optimizer, epochs):
            aucs = []
            for epoch in range(epochs):
                train_model(model, x, label, loss_func, optimizer)
                loss, auc = get_loss(model(x), label, loss_func)
                aucs.append(auc)
            return aucs
    """
    assert findings(source) == []
    assert findings(source.replace("aucs.append(auc)", "aucs.append(loss)")) == [(22, "ML101")]


def test_2_later_outputs_of_a_loss_function_passed_in():
    """``loss_tuple = loss_fn(...)``; ``loss_tuple[0]`` is backpropagated: that says the first
    output carries a graph, not ``loss_tuple[1:]`` (a loss function passed in returns the loss
    first, then values for logging, often detached). Keeping the first output is reported."""
    source = """
        import torch

        class AverageMeter:
            def __init__(self):
                self.acc = []
            def add(self, vals):
                self.acc.append(vals)

        def train_epoch(model, loader, optimizer, loss_fn):
            meter = AverageMeter()
            for data in loader:
                optimizer.zero_grad()
                loss_tuple = loss_fn(model(data), data)
                loss = loss_tuple[0]
                loss.backward()
                optimizer.step()
                meter.add([loss.cpu().detach(), *loss_tuple[1:]])
            return meter
    """
    assert findings(source) == []
    assert findings(source.replace("*loss_tuple[1:]]", "*loss_tuple[:2]]")) == [(18, "ML101")]


def test_2_a_sum_converted_with_numpy_and_a_frozen_model():
    """A running sum later converted with ``.cpu().numpy()`` holds no graph in a program that runs
    (numpy() raises on a tensor that requires grad); a model frozen with ``requires_grad_(False)``
    and fed data records none. With ``.detach()`` before ``.numpy()`` (or no freezing), the
    evidence is gone and the sum is reported."""
    source = """
        import torch

        def feature_stats(detector_net, loader, device):
            mu = torch.zeros([2048], dtype=torch.float64, device=device)
            for images in loader:
                features = detector_net(images.to(device)).to(torch.float64)
                mu += features.sum(0)
            return mu.cpu().numpy()

        def score_all(reward_model, batches):
            reward_model.requires_grad_(False)
            total = 0
            for input_ids in batches:
                total += reward_model(input_ids).sum()
            return total
    """
    assert findings(source) == []
    # the detector then also runs with grad on for nothing (ML201, an inference loop's sum)
    assert findings(source.replace("mu.cpu().numpy()", "mu.detach().cpu().numpy()")) == [(7, "ML201"), (8, "ML101")]
    assert (15, "ML101") in findings(source.replace("reward_model.requires_grad_(False)", "reward_model.eval()"))
    # a same-named local frozen in another function says nothing of this one's model
    other = source + """
        def probe(reward_model, batches):
            kept = []
            for input_ids in batches:
                kept.append(reward_model(input_ids).sum())
            return kept
    """
    assert (21, "ML101") in findings(other)


def test_2_an_argument_the_callee_does_not_pass_on():
    """A batch drawn with ``loader.next_batch(cfg.batch_size)`` and then backpropagated does not
    make ``cfg.batch_size`` carry a graph: the method (of this module) returns slices of its own
    tokens, not its argument, so the position it adds the size to holds a number. When the method
    returns what it is given, the argument is backpropagated and its running sum is reported."""
    source = """
        import torch
        from dataclasses import dataclass

        class Loader:
            def __init__(self, tokens):
                self.tokens = tokens
                self.position = 0

            def next_batch(self, batch_size):
                chunk = self.tokens[self.position:self.position + batch_size + 1]
                self.position += batch_size
                return chunk[:-1].cuda(), chunk[1:].cuda()

        @dataclass
        class Hyperparameters:
            batch_size: int = 64

        hp = Hyperparameters()
        model = torch.nn.Linear(4, 4).cuda()
        loader = Loader(torch.arange(100000))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(100):
            inputs, targets = loader.next_batch(hp.batch_size)
            model(inputs, targets).backward()
            opt.step()
    """
    assert findings(source) == []
    # a size that carries a graph itself (computed from the model's weights), handed back as the
    # inputs: the argument is backpropagated and the loader's running sum of it is reported (an
    # attribute of a configuration namespace, hp.batch_size, never carries one)
    passing = source.replace("return chunk[:-1].cuda(), chunk[1:].cuda()", "return batch_size, chunk[1:].cuda()") \
        .replace("loader.next_batch(hp.batch_size)", "loader.next_batch(model(torch.ones(4)).sum())")
    assert findings(passing) == [(24, "ML101")]


def test_6_data_parallel_for_inference_with_outputs_moved_to_the_cpu():
    source = """
        import torch
        from torch import nn

        def embed(model, loader):
            model = nn.DataParallel(model.cuda()).eval()
            embeddings = []
            with torch.no_grad():
                for x in loader:
                    embeddings.append(model(x.cuda()).cpu())
            return torch.cat(embeddings)
    """
    assert findings(source) == []


# ----- a graph that reaches the accumulator on some paths only: a warning, not an error ---------
def _severities(root: Path, name: str) -> list[tuple[int, str, str]]:
    result = check_paths([str(root / name)], Config(), use_cache=False)
    return sorted((f.line, f.code, f.severity) for f in result.findings)


def _meter_project(root: Path, sync_body: str) -> None:
    write(root, {
        "pyproject.toml": "",
        "proj/__init__.py": "",
        "proj/dist.py": sync_body,
        "proj/meter.py": """
            from .dist import sync

            class AverageMeter:
                def __init__(self, distributed=True):
                    self.distributed = distributed
                    self.sum = 0
                    self.count = 0

                def _sync(self, val):
                    return sync(val) if self.distributed else val

                def update(self, val, n=1):
                    self.sum += self._sync(val * n)
                    self.count += n
        """,
        "proj/train.py": """
            import torch
            from .meter import AverageMeter

            def train(model, loader, optimizer):
                meter = AverageMeter()
                for x, y in loader:
                    loss = torch.nn.functional.mse_loss(model(x), y)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    meter.update(loss, x.shape[0])
        """,
    })


def test_a_helper_of_another_module_that_returns_its_argument_on_one_path_only(tmp_path):
    # under a process group the helper hands back fresh all-gathered buffers, without a graph:
    # the meter keeps the graph only when none is up, so the finding is a warning that says so
    _meter_project(tmp_path, """
        import torch
        import torch.distributed as dist

        def sync(tensor):
            if not dist.is_initialized():
                return tensor
            gathered = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
            dist.all_gather(gathered, tensor)
            return sum(gathered)
    """)
    result = check_paths([str(tmp_path / "proj/train.py")], Config(), use_cache=False)
    found = [(f.line, f.code, f.severity, f.message) for f in result.findings]
    assert [(line, code, severity) for line, code, severity, _ in found] == [(11, "ML101", "warning")]
    assert found[0][3].endswith("(on some paths)")


def test_a_helper_of_another_module_that_always_returns_its_argument(tmp_path):
    _meter_project(tmp_path, """
        def sync(tensor):
            return tensor
    """)
    assert _severities(tmp_path, "proj/train.py") == [(11, "ML101", "error")]


def test_a_step_that_returns_the_loss_on_one_path_and_a_number_on_the_others():
    # stanza's update(): ``if loss == 0.0: return loss`` and ``loss.item()`` otherwise
    source = """
        import torch

        class Trainer:
            def __init__(self, model, optimizer):
                self.model = model
                self.optimizer = optimizer

            def update(self, batch):
                loss = self.model(batch).sum()
                if loss == 0.0:
                    return loss
                loss.backward()
                self.optimizer.step()
                return loss.item()

        def train(model, optimizer, loader):
            trainer = Trainer(model, optimizer)
            total = 0
            for batch in loader:
                total += trainer.update(batch)
            return total
    """
    found = check_source(textwrap.dedent(source), "train.py", default_codes())
    assert [(f.line, f.code, f.severity) for f in found] == [(21, "ML101", "warning")]
    assert found[0].message.endswith("(on some paths)")
    # the same step returning the loss on every path: an error
    always = textwrap.dedent(source).replace("return loss.item()", "return loss")
    assert [(f.line, f.code, f.severity) for f in check_source(always, "train.py", default_codes())] == \
        [(21, "ML101", "error")]


# ----- ML301: what runs on the current device, in this module or in the project code it calls ---
def _nccl_project(root: Path, metric_body: str) -> None:
    write(root, {
        "pyproject.toml": "",
        "proj/__init__.py": "",
        "proj/metrics.py": metric_body,
        "proj/calc.py": """
            import torch
            from . import metrics

            def worker(rank, world_size, model, dataset):
                torch.distributed.init_process_group(backend="nccl", init_method="file:///tmp/i",
                                                     rank=rank, world_size=world_size)
                device = torch.device("cuda", rank)
                model = model.to(device)
                return metrics.feature_stats(model, dataset, device)
        """,
    })


def test_nccl_group_whose_ranks_name_their_devices_everywhere(tmp_path):
    # torch.device("cuda", rank) names the rank's GPU, and the metric code does too: NCCL follows
    # the tensors' devices, nothing lands on GPU 0
    _nccl_project(tmp_path, """
        import torch

        def feature_stats(model, dataset, device):
            loader = torch.utils.data.DataLoader(dataset, batch_size=64)
            return [model(x.to(device)).mean(0) for x in loader]
    """)
    assert project_findings(tmp_path, "proj/calc.py") == []


def test_nccl_group_whose_called_metric_code_pins_memory_on_the_current_device(tmp_path):
    # the metric module's pinned loader works on the current device, GPU 0 in every rank
    _nccl_project(tmp_path, """
        import torch

        def feature_stats(model, dataset, device):
            loader = torch.utils.data.DataLoader(dataset, batch_size=64, pin_memory=True)
            return [model(x.to(device)).mean(0) for x in loader]
    """)
    assert project_findings(tmp_path, "proj/calc.py") == [(5, "ML301")]


def test_nccl_group_whose_metric_is_run_through_a_registry_of_another_module(tmp_path):
    # calc_metric(name) runs _metric_dict[name](opts), a dict a decorator of that module fills: the
    # registered metric's pinned loader works on the current device (stylegan2-ada's calc_metrics)
    write(tmp_path, {
        "pyproject.toml": "",
        "proj/__init__.py": "",
        "proj/metric_main.py": """
            import torch

            _metric_dict = dict()

            def register_metric(fn):
                assert callable(fn)
                _metric_dict[fn.__name__] = fn
                return fn

            def calc_metric(metric, **kwargs):
                return _metric_dict[metric](kwargs)

            @register_metric
            def fid50k(opts):
                loader = torch.utils.data.DataLoader(opts["dataset"], batch_size=64, pin_memory=True)
                return sum(float(x.to(opts["device"]).mean()) for x in loader)
        """,
        "proj/calc.py": """
            import torch
            from . import metric_main

            def worker(rank, world_size, G, dataset):
                torch.distributed.init_process_group(backend="nccl", init_method="file:///tmp/i",
                                                     rank=rank, world_size=world_size)
                device = torch.device("cuda", rank)
                G = G.to(device)
                return metric_main.calc_metric("fid50k", G=G, dataset=dataset, device=device)
        """,
    })
    assert project_findings(tmp_path, "proj/calc.py") == [(5, "ML301")]
    # the same registry whose metric names its device everywhere: nothing on GPU 0
    text = (tmp_path / "proj/metric_main.py").read_text().replace(", pin_memory=True", "")
    (tmp_path / "proj/metric_main.py").write_text(text)
    assert project_findings(tmp_path, "proj/calc.py") == []


def test_a_literal_registry_of_functions_is_followed_and_a_mixed_dict_is_not(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "proj/__init__.py": "",
        "proj/metric_main.py": """
            import torch

            def fid50k(opts):
                loader = torch.utils.data.DataLoader(opts["dataset"], batch_size=64, pin_memory=True)
                return sum(float(x.to(opts["device"]).mean()) for x in loader)

            METRICS = {"fid50k": fid50k}

            def calc_metric(metric, **kwargs):
                return METRICS[metric](kwargs)
        """,
        "proj/calc.py": """
            import torch
            from . import metric_main

            def worker(rank, world_size, G, dataset):
                torch.distributed.init_process_group(backend="nccl", init_method="file:///tmp/i",
                                                     rank=rank, world_size=world_size)
                device = torch.device("cuda", rank)
                G = G.to(device)
                return metric_main.calc_metric("fid50k", G=G, dataset=dataset, device=device)
        """,
    })
    assert project_findings(tmp_path, "proj/calc.py") == [(5, "ML301")]
    # a dict that also holds other values is not a registry of functions: nothing is followed
    text = (tmp_path / "proj/metric_main.py").read_text().replace('{"fid50k": fid50k}', '{"fid50k": fid50k, "n": 3}')
    (tmp_path / "proj/metric_main.py").write_text(text)
    assert project_findings(tmp_path, "proj/calc.py") == []


# ----- ML114: an output marked non-differentiable has no grad_fn, so ctx keeping it closes no cycle ---
def _ctx_severities(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.severity) for f in check_source(textwrap.dedent(source), "ops.py", ["ML114"])]


def test_ctx_keeping_a_non_differentiable_output_is_a_warning_and_a_differentiable_one_an_error():
    source = """
        import torch
        class VectorPool(torch.autograd.Function):
            @staticmethod
            def forward(ctx, features, idx):
                out = features.index_select(0, idx) * 2
                counts = idx.new_zeros((idx.numel(),))
                ctx.for_backward = (counts, idx)
                ctx.mark_non_differentiable(counts)
                return out, counts

            @staticmethod
            def backward(ctx, grad_out, grad_counts):
                counts, idx = ctx.for_backward
                return grad_out, None
        """
    assert _ctx_severities(source) == [(8, "warning")]
    assert _ctx_severities(source.replace("ctx.mark_non_differentiable(counts)", "pass")) == [(8, "error")]


# ----- a coefficient beside a graph-carrying factor is no graph: REINFORCE's reward ------------------
REINFORCE = """
    import torch
    from torch.distributions import Categorical
    from R_EA import train_and_eval

    class ExponentialMovingAverage(object):
        def __init__(self, momentum):
            self._numerator, self._denominator, self._momentum = 0, 0, momentum
        def update(self, value):
            self._numerator = self._momentum * self._numerator + (1 - self._momentum) * value
            self._denominator = self._momentum * self._denominator + (1 - self._momentum)
        def value(self):
            return self._numerator / self._denominator

    def select_action(policy):
        m = Categorical(policy())
        action = m.sample()
        return m.log_prob(action), action.cpu().tolist()

    def main(policy, optimizer, nas_bench, budget):
        baseline = ExponentialMovingAverage(0.9)
        total_costs, trace = 0, []
        while total_costs < budget:
            log_prob, action = select_action(policy)
            reward, cost_time = train_and_eval(policy.generate_arch(action), nas_bench)
            trace.append((reward, action))
            total_costs += cost_time
            baseline.update(reward)
            policy_loss = (-log_prob * (reward - baseline.value())).sum()
            optimizer.zero_grad()
            policy_loss.backward()
            optimizer.step()
    """


def test_a_reward_that_only_scales_the_log_probability_is_not_a_graph():
    assert findings(REINFORCE) == []


def test_a_reward_computed_from_the_policy_s_entropy_carries_its_graph():
    source = REINFORCE.replace(
        "reward, cost_time = train_and_eval(policy.generate_arch(action), nas_bench)",
        "accuracy, cost_time = train_and_eval(policy.generate_arch(action), nas_bench)\n"
        "            reward = accuracy + 0.01 * policy.entropy_head(log_prob)")
    assert (27, "ML101") in findings(source)  # trace.append((reward, action))


# ----- a module wrapped in DataParallel runs the wrapped class's forward (another module's) -------
def test_a_data_parallel_wrapper_returns_what_the_wrapped_forward_returns(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "cap/__init__.py": "",
        "cap/loss_wrapper.py": """
            import numpy as np
            import torch

            class LossWrapper(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.model = torch.nn.Linear(8, 3)

                def forward(self, feats, labels):
                    out = {}
                    loss = torch.nn.functional.cross_entropy(self.model(feats), labels)
                    reward = torch.from_numpy(np.ones(3)).to(feats)
                    out["loss"] = loss
                    out["reward"] = reward.mean()
                    return out
            """,
        "cap/train.py": """
            import torch
            from cap.loss_wrapper import LossWrapper

            def train(loader, optimizer):
                lw_model = LossWrapper()
                dp_lw_model = torch.nn.DataParallel(lw_model)
                histories = {"loss_history": {}}
                for iteration, (feats, labels) in enumerate(loader):
                    optimizer.zero_grad()
                    model_out = dp_lw_model(feats, labels)
                    loss = model_out["loss"].mean()
                    loss.backward()
                    optimizer.step()
                    histories["loss_history"][iteration] = model_out["reward"].mean()
            """,
    })
    assert [code for _, code in project_findings(tmp_path, "cap/train.py") if code == "ML101"] == []
    (tmp_path / "cap/train.py").write_text((tmp_path / "cap/train.py").read_text().replace(
        'model_out["reward"].mean()', 'model_out["loss"].mean()'))
    assert [code for _, code in project_findings(tmp_path, "cap/train.py") if code == "ML101"] == ["ML101"]


def test_what_a_module_call_returns_is_an_output_whatever_its_name():
    source = """
        import torch

        def train(lw_model, loader, optimizer):
            histories = {}
            total = 0
            for iteration, (feats, labels) in enumerate(loader):
                optimizer.zero_grad()
                model_out = lw_model(feats, labels)
                loss = model_out["loss"]
                loss.backward()
                optimizer.step()
                histories[iteration] = model_out["reward"].item()
                total += loss
        """
    assert findings(source) == [(14, "ML101")]  # total += loss; no ML109 on 'model_out' kept per run



# ----- a call named like a model is a function when the project defines one of that name -------
def test_a_method_of_another_module_named_like_a_teacher_is_not_a_module(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "nas/__init__.py": "",
        "nas/board.py": """
            import torch

            class PrioritizedBoard:
                def __init__(self):
                    self.prioritized = []

                def select_teacher(self, model, cand):
                    scores = [model.meta(c) for c in self.prioritized]
                    return scores[0] if scores else torch.ones(()), cand
            """,
        "nas/train.py": """
            import torch
            import torch.nn.functional as F

            def train_epoch(model, loader, optimizer, prioritized_board):
                for x, y in loader:
                    meta_value, teacher_cand = prioritized_board.select_teacher(model, 3)
                    output = model(x)
                    loss = meta_value * F.cross_entropy(output, y)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            """,
    })
    assert project_findings(tmp_path, "nas/train.py") == []


def test_a_method_of_the_accelerator_named_like_a_model_is_not_a_module():
    source = """
        import torch
        from accelerate import Accelerator

        def train(cldm, swinir, loader, diffusion, lr):
            accelerator = Accelerator()
            opt = torch.optim.AdamW(cldm.controlnet.parameters(), lr=lr)
            swinir.eval()
            cldm, opt, loader = accelerator.prepare(cldm, opt, loader)
            pure_cldm: ControlLDM = accelerator.unwrap_model(cldm)
            for gt, lq in loader:
                with torch.no_grad():
                    cond = pure_cldm.prepare_condition(swinir(lq))
                loss = diffusion.p_losses(cldm, gt, cond)
                opt.zero_grad()
                accelerator.backward(loss)
                opt.step()
        """
    assert findings(source) == []


# ----- a decorator of the project, reached through a star import, that wraps the call in no_grad ---
def test_a_no_grad_wrapper_decorator_reached_through_a_star_import(tmp_path):
    write(tmp_path, {
        "utils/__init__.py": "from utils.experiment import *\n",
        "utils/experiment.py": """
            import torch

            def make_nograd_func(func):
                def wrapper(*f_args, **f_kwargs):
                    with torch.no_grad():
                        ret = func(*f_args, **f_kwargs)
                    return ret
                return wrapper

            def make_timed_func(func):
                def wrapper(*f_args, **f_kwargs):
                    return func(*f_args, **f_kwargs)
                return wrapper
            """,
        "prediction.py": """
            import torch
            import torch.nn as nn
            from utils import *

            model = nn.Linear(4, 2)

            @make_nograd_func
            def test_sample(sample):
                model.eval()
                disp_ests = model(sample)
                return disp_ests[-1]
            """,
    })
    assert project_findings(tmp_path, "prediction.py") == []
    (tmp_path / "prediction.py").write_text((tmp_path / "prediction.py").read_text().replace(
        "@make_nograd_func", "@make_timed_func"))
    assert project_findings(tmp_path, "prediction.py") == [(10, "ML201")]


# ----- outputs read only detached or as numbers: near-misses of ML201's sixth evidence ------------
def test_outputs_read_down_to_numbers_near_misses():
    probe = """
        import torch

        def make_heads(common_cnn, MLP, input_shape):
            cnn_out = common_cnn(torch.ones(input_shape))
            mlp = torch.nn.Linear(cnn_out.shape[-1], 512)
            mlp_out = mlp(cnn_out)
            return torch.nn.Linear(mlp_out.shape[-1], 6)
        """
    assert findings(probe) == []  # a shape probe on made-up inputs
    frames = """
        import torch
        import pandas as pd

        def top_speakers(df, n):
            total = df.groupby("client_id")["n_frames"].agg(["sum"])
            top = total.head(n)
            return set(top.index.tolist())
        """
    assert findings(frames) == []  # DataFrame.head, a module only by its name
    evaluate = """
        import torch

        def evaluate(model, loader, loss_fn):
            loss = 0.0
            for graph, label in loader:
                logits = model(graph)
                loss += loss_fn(logits, label).item()
            return loss
        """
    assert findings(evaluate) == [(7, "ML201")]
    assert findings("import torch\n" + textwrap.dedent(evaluate).replace(
        "def evaluate", "@torch.no_grad()\ndef evaluate")) == []



# ----- an episode's rollout kept for the update that ends the episode (A3C, REINFORCE) -----------
ROLLOUT = """
    import torch

    class Worker:
        def __init__(self, model, optimizer, env):
            self.model, self.optimizer, self.environment = model, optimizer, env

        def run(self, episodes):
            for ep_ix in range(episodes):
                state = self.environment.reset()
                done = False
                self.log_probs = []
                while not done:
                    log_prob = self.model(torch.as_tensor(state)).log_softmax(-1)[0]
                    state, reward, done, _ = self.environment.step(0)
                    self.log_probs.append(log_prob)
                self.update()

        def update(self):
            loss = -torch.cat(self.log_probs).sum()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
    """


def test_an_episode_rollout_started_afresh_by_the_updating_loop_is_one_step():
    assert findings(ROLLOUT) == []
    # kept across episodes (never started afresh), it grows with every episode
    assert (15, "ML101") in findings(ROLLOUT.replace("                self.log_probs = []\n", "").replace(
        "self.model, self.optimizer, self.environment = model, optimizer, env",
        "self.model, self.optimizer, self.environment, self.log_probs = model, optimizer, env, []"))


# ----- a module in eval mode returns what its forward returns when self.training is False --------
def test_a_detector_in_eval_mode_returns_predictions_made_under_no_grad():
    source = """
        import torch
        import torch.nn as nn

        class VoxelNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(8, 8)

            def forward(self, example):
                preds = self.body(example["voxels"])
                if self.training:
                    return {"loss": preds.pow(2).mean()}
                with torch.no_grad():
                    res = self.predict(example, preds)
                return res

            def predict(self, example, preds):
                return [{"box": preds.sigmoid()}]

        def evaluate(loader):
            net = VoxelNet()
            net.eval()
            detections = []
            for example in loader:
                detections += net(example)
            return detections
        """
    # the forward's body still runs with grad on (ML201); the kept predictions carry no graph
    assert findings(source) == [(26, "ML201")]
    assert (26, "ML101") in findings(source.replace("net.eval()", "net.train()"))


def test_a_model_built_by_a_classmethod_of_the_project_is_of_that_class(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "bert/__init__.py": "",
        "bert/modeling.py": """
            import torch
            from torch.nn import CrossEntropyLoss

            class PreTrained(torch.nn.Module):
                @classmethod
                def from_pretrained(cls, path):
                    return cls()

            class BertForQA(PreTrained):
                def __init__(self):
                    super().__init__()
                    self.qa = torch.nn.Linear(8, 2)

                def forward(self, x, positions=None):
                    logits = self.qa(x)
                    if positions is not None:
                        return CrossEntropyLoss()(logits, positions)
                    return logits
            """,
        "run_qa.py": """
            import torch
            from bert.modeling import BertForQA

            def main(loader, path):
                model = BertForQA.from_pretrained(path)
                model = torch.nn.DataParallel(model)
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                for x, y in loader:
                    loss = model(x, y).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            """,
    })
    result = check_paths([str(tmp_path / "run_qa.py")], Config(), use_cache=False)
    assert [(f.code, f.severity) for f in result.findings] == [("ML206", "info")]


def test_the_output_of_a_module_of_another_module_carries_a_graph_into_a_perceptual_loss(tmp_path):
    write(tmp_path, {
        "models.py": """
            import torch.nn as nn

            class Generator(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Linear(8, 8)

                def forward(self, x):
                    return self.body(x)

            class FeatureExtractor(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.features = nn.Linear(8, 4)

                def forward(self, x):
                    return self.features(x)
            """,
        "train.py": """
            import torch
            from models import *

            generator = Generator()
            feature_extractor = FeatureExtractor()
            feature_extractor.eval()
            optimizer_G = torch.optim.Adam(generator.parameters())

            def train_step(imgs_lr, real_features):
                gen_hr = generator(imgs_lr)
                gen_features = feature_extractor(gen_hr)
                loss = (gen_features - real_features).abs().mean()
                optimizer_G.zero_grad()
                loss.backward()
                optimizer_G.step()
            """,
    })
    # the generator is trained through the eval-mode feature extractor: not "a model not trained"
    assert project_findings(tmp_path, "train.py") == []


# ----- a momentum target frozen by a helper of another module ------------------------------------------
_MOMENTUM_TRAINING = """
    import copy
    import torch
    from torch import nn
    from proj import utils

    class MSN(nn.Module):
        def __init__(self, backbone):
            super().__init__()
            self.backbone = backbone
            self.anchor_backbone = copy.deepcopy(backbone)
            {freeze}

    model = MSN(nn.Linear(8, 8))
    optimizer = torch.optim.AdamW(model.anchor_backbone.parameters(), lr=1e-4)
    for x, y in loader:
        utils.update_momentum(model.anchor_backbone, model.backbone, 0.99)
        target = model.backbone(x)
        anchor = model.anchor_backbone(y)
        loss = torch.nn.functional.mse_loss(anchor, target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
"""
_UTILS = """
    import torch

    def deactivate_requires_grad(module):
        for param in module.parameters():
            param.requires_grad = False

    @torch.no_grad()
    def update_momentum(model, model_ema, m):
        for ema, p in zip(model_ema.parameters(), model.parameters()):
            ema.data = ema.data * m + p.data * (1.0 - m)
"""


def test_a_target_network_frozen_by_a_helper_of_another_module_records_no_graph(tmp_path):
    """Every parameter of the momentum target has requires_grad False (a helper of another module
    sets it): its forward records nothing, so running it with grad on wastes nothing (ML201 quiet);
    the same target left trainable but in no optimizer is reported."""
    write(tmp_path / "frozen", {
        "pyproject.toml": "",
        "proj/__init__.py": "",
        "proj/utils.py": _UTILS,
        "proj/train.py": _MOMENTUM_TRAINING.replace("{freeze}", "utils.deactivate_requires_grad(self.backbone)"),
    })
    assert ("ML201" not in [code for _, code in project_findings(tmp_path / "frozen", "proj/train.py")])
    write(tmp_path / "trainable", {
        "pyproject.toml": "",
        "proj/__init__.py": "",
        "proj/utils.py": _UTILS,
        "proj/train.py": _MOMENTUM_TRAINING.replace("{freeze}", "pass"),
    })
    assert (17, "ML201") in project_findings(tmp_path / "trainable", "proj/train.py")


def test_a_distributed_load_known_only_by_its_name_is_a_warning():
    """Every rank loads without map_location; where the load is copied into the model and the
    program writes its checkpoints from the GPU the chain is complete (error); where only the
    file's name says it is a checkpoint (what it holds is used by code not seen here) it is a
    warning. So too where nothing in the program saves GPU tensors: the file (a pretrained
    download, another package's output) may hold CPU tensors, and the finding says so."""
    source = """
        import torch
        import torch.distributed as dist

        def resume(model, searcher, args):
            dist.init_process_group("nccl")
            model.load_state_dict(torch.load(args.weights))
            state = torch.load(args.search_checkpoint)
            searcher.restore(state)

        def save(model, path):
            torch.save(model.state_dict(), path)
    """
    found = check_source(textwrap.dedent(source), "train.py", default_codes())
    assert sorted((f.line, f.code, f.severity) for f in found) == [(7, "ML203", "error"), (8, "ML203", "warning")]
    unsaved = textwrap.dedent(source).replace("torch.save(model.state_dict(), path)", "pass")
    found = check_source(unsaved, "train.py", default_codes())
    assert sorted((f.line, f.code, f.severity) for f in found) == [(7, "ML203", "warning"), (8, "ML203", "warning")]
    assert all("nothing here saves GPU tensors" in f.help for f in found)
    moved = textwrap.dedent(source).replace("model.state_dict()", "{k: v.cpu() for k, v in model.state_dict().items()}")
    assert [f.code for f in check_source(moved, "train.py", default_codes())] == []


_PER_ENVIRONMENT_GRADIENTS = """
    import torch
    import torch.nn.functional as F
    from torch import autograd

    class IGA(torch.nn.Module):
        def update(self, minibatches):
            total_loss = 0
            grads = []
            for x, y in minibatches:
                env_loss = F.cross_entropy(self.network(x), y)
                total_loss += env_loss
                env_grad = autograd.grad(env_loss, self.network.parameters(), create_graph=True)
                grads.append(env_grad)
            mean_loss = total_loss / len(minibatches)
            mean_grad = autograd.grad(mean_loss, self.network.parameters(), retain_graph=True)
            penalty = 0
            for grad in grads:
                for g, mean_g in zip(grad, mean_grad):
                    penalty += (g - mean_g).pow(2).sum()
            objective = mean_loss + penalty
            self.optimizer.zero_grad()
            {backward}
            self.optimizer.step()
"""


def test_per_part_gradients_read_by_the_loss_backpropagated_after_the_loop_are_one_step():
    """Each environment's gradient (create_graph) is kept to build a penalty that the step
    backpropagates after the loop: one step's graphs, freed by it (ML101 quiet). Kept on the object
    (every update's), or never read by what is backpropagated, they are reported."""
    quiet = _PER_ENVIRONMENT_GRADIENTS.replace("{backward}", "objective.backward()")
    assert [f.code for f in check_source(textwrap.dedent(quiet), "algorithms.py", default_codes())] == []
    kept = quiet.replace("grads = []", "self.grads = []").replace("grads.append", "self.grads.append") \
        .replace("for grad in grads", "for grad in self.grads")
    found = check_source(textwrap.dedent(kept), "algorithms.py", default_codes())
    assert [(f.line, f.code) for f in found] == [(14, "ML101")]
    unread = _PER_ENVIRONMENT_GRADIENTS.replace("{backward}", "mean_loss.backward()")
    found = check_source(textwrap.dedent(unread), "algorithms.py", default_codes())
    assert [(f.line, f.code) for f in found] == [(14, "ML101")]


_INVERSE_HVP = """
    import torch
    import torch.nn.functional as F
    from torch import autograd

    def neumann(v, model, batch):
        def hvp(y, w, v):
            first = autograd.grad(y, w, retain_graph=True, create_graph=True)
            first = torch.nn.utils.parameters_to_vector(first)
            second = autograd.grad(first @ v, w, create_graph=True)
            return torch.nn.utils.parameters_to_vector(second)

        v = v.detach()
        estimate = v
        model.eval()
        for i in range(steps):
            loss = F.cross_entropy(model(batch[0]), batch[1])
            hv = hvp(loss, model.weight, v.detach())
            v -= hv
            {after}
            estimate = (v + estimate).detach()
        model.train()
        return estimate
"""


def test_an_accumulator_rebound_without_its_graph_later_in_the_iteration_keeps_nothing():
    """``v -= hv`` then ``v = v.detach()`` in the same iteration: the graph never reaches the next
    one (ML101 quiet); without the detach it does. The forward in eval mode feeds a helper that
    differentiates its argument (autograd.grad): grad is needed there (ML201 quiet)."""
    detached = _INVERSE_HVP.replace("{after}", "v = v.detach()")
    assert [f.code for f in check_source(textwrap.dedent(detached), "trm.py", default_codes())] == []
    kept = _INVERSE_HVP.replace("{after}", "pass")
    assert [(f.line, f.code) for f in check_source(textwrap.dedent(kept), "trm.py", default_codes())] == [
        (19, "ML101")]


def test_a_helper_of_another_module_that_differentiates_its_argument_needs_grad(tmp_path):
    """The helper runs autograd.grad on what it is handed (its summary says so by position): a
    forward in eval mode whose loss goes to it needs grad (ML201 quiet); handed to a helper that
    only reads it, the same forward is reported."""
    helper = """
        import torch

        def hvp(y, w, v):
            first = torch.autograd.grad(y, w, create_graph=True)[0]
            return torch.autograd.grad((first * v).sum(), w)[0]

        def norm_of(y, w, v):
            return y.norm() + w.norm() + v.norm()
    """
    caller = """
        import torch.nn.functional as F
        from proj.utils import {helper}

        def influence(model, loader, v):
            model.eval()
            out = []
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                out.append({helper}(loss, model.weight, v).detach())
            return out
    """
    for helper_name, expected in (("hvp", []), ("norm_of", [(8, "ML201")])):
        root = tmp_path / helper_name
        write(root, {
            "pyproject.toml": "",
            "proj/__init__.py": "",
            "proj/utils.py": textwrap.dedent(helper),
            "proj/train.py": textwrap.dedent(caller.replace("{helper}", helper_name)),
        })
        assert [hit for hit in project_findings(root, "proj/train.py") if hit[1] == "ML201"] == expected


_SPAWNED_TRAINING = """
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

    def train_worker(gpu, ngpus):
        torch.cuda.set_device(gpu)
        dist.init_process_group("nccl", rank=gpu, world_size=ngpus)
        model = make_model().cuda(gpu)
        {worker_load}
        torch.save(model.state_dict(), "final.pt")

    def load_trained_model():
        mp.spawn(train_worker, nprocs=torch.cuda.device_count(), args=(torch.cuda.device_count(),))
        model = make_model()
        model.load_state_dict(torch.load("final.pt"))
        return model

    if __name__ == "__main__":
        model = load_trained_model()
"""


def test_a_load_only_the_process_that_spawns_the_ranks_runs_is_not_every_ranks():
    """mp.spawn starts the ranks in ``train_worker``; the load after it runs in the parent, once:
    not "every rank loads onto cuda:0". The same load inside the spawned worker is."""
    parent = _SPAWNED_TRAINING.replace("{worker_load}", "pass")
    found = check_source(textwrap.dedent(parent), "train.py", default_codes())
    assert [f.code for f in found if f.code == "ML203" and f.severity == "error"] == []
    worker = _SPAWNED_TRAINING.replace("{worker_load}", 'model.load_state_dict(torch.load("init.pt"))')
    found = check_source(textwrap.dedent(worker), "train.py", default_codes())
    assert [(f.line, f.severity) for f in found if f.code == "ML203"] == [(10, "error")]


def test_state_read_with_a_default_of_none_is_fed_back_on_some_paths_only():
    """``last_state = result.get("state", None)`` from a policy memlint cannot see: the key may be
    absent (a feed-forward policy hands back None), so the chain is only possible: a warning that
    says so, not an error. Read by key from that policy, still a warning (what it returns is not
    seen); fed back through a torch.nn recurrent cell, an error."""
    source = """
        import torch

        class Collector:
            def __init__(self, policy, env):
                self.policy = policy
                self.env = env

            def collect(self, obs):
                last_state = None
                actions = []
                while len(actions) < 10:
                    result = self.policy(obs, last_state)
                    actions.append(int(result["act"]))
                    obs = self.env.step(actions[-1])
                    last_state = {read}
                return actions
    """
    maybe = check_source(textwrap.dedent(source.replace("{read}", 'result.get("state", None)')), "c.py",
                         default_codes())
    assert [(f.line, f.code, f.severity) for f in maybe] == [(16, "ML102", "warning")]
    assert "on some paths" in maybe[0].message
    # read by key, the graph is still only presumed: the policy's class is not seen here
    by_key = check_source(textwrap.dedent(source.replace("{read}", 'result["state"]')), "c.py", default_codes())
    assert [(f.line, f.code, f.severity) for f in by_key] == [(16, "ML102", "warning")]
    assert "is not seen here" in by_key[0].help
    # a torch.nn recurrent cell's state carries the graph: an error
    cell = source.replace("self.policy = policy", "self.policy = torch.nn.GRUCell(4, 4)").replace(
        "result = self.policy(obs, last_state)", "result = {'state': self.policy(obs, last_state), 'act': 0}")
    cell = cell.replace("{read}", "self.policy(obs, last_state)")
    surely = check_source(textwrap.dedent(cell), "c.py", default_codes())
    assert [(f.code, f.severity) for f in surely] == [("ML102", "error")]


def test_an_optimizer_step_is_known_by_what_the_name_was_bound_to():
    """``pertopt.step()`` steps an optimizer because ``pertopt = torch.optim.SGD(...)``, whatever the
    name says: the function trains ``proxy``, so ``net``, in no optimizer and only a loss's
    detached target, runs with grad on for nothing (ML201). Bound to something else, the same
    name steps nothing known, and the function is not a training step."""
    source = """
        import torch
        import torch.nn.functional as F

        def perturb(net, proxy, X, steps):
            target = F.softmax(net(X), dim=-1).detach()
            pertopt = {built}
            for _ in range(steps):
                pertopt.zero_grad()
                loss = F.kl_div(F.log_softmax(proxy(X), dim=1), target)
                loss.backward()
                pertopt.step()
    """
    optimizer = source.replace("{built}", "torch.optim.SGD(proxy.parameters(), lr=0.1)")
    found = check_source(textwrap.dedent(optimizer), "perturb.py", default_codes())
    assert [(f.line, f.code) for f in found] == [(6, "ML201")]
    other = source.replace("{built}", "make_stepper(proxy)")
    found = check_source(textwrap.dedent(other), "perturb.py", default_codes())
    assert [(f.line, f.code) for f in found] == []


_RESUME_HELPER = """
    import torch
    import torchvision

    def resume_checkpoint(model, path):
        checkpoint = torch.load(path)
        model.load_state_dict(checkpoint["state_dict"])
        return checkpoint.get("epoch", 0)

    def main(path):
        model = torchvision.models.resnet50()
        {before}
        start = resume_checkpoint(model, path)
        {after}
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""


def test_a_resume_helper_whose_callers_moved_the_model_loads_beside_it():
    """The helper restores a model its caller already moved to the GPU: a GPU-saved checkpoint is
    a second copy beside the weights while it loads (ML203's hint, info). Called with the model
    still on the CPU (moved after the resume), it is not."""
    moved = _RESUME_HELPER.replace("{before}", "model = model.cuda()").replace("{after}", "pass")
    found = check_source(textwrap.dedent(moved), "train.py", default_codes())
    assert [(f.line, f.code, f.severity) for f in found] == [(6, "ML203", "info")]
    later = _RESUME_HELPER.replace("{before}", "pass").replace("{after}", "model = model.cuda()")
    found = check_source(textwrap.dedent(later), "train.py", default_codes())
    assert [(f.line, f.code) for f in found] == []


_RESTORE_METHOD = """
    import torch
    import torch.nn as nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(1024, 1024)

        def restore_weights(self, path):
            state_dict = torch.load(path)
            self.load_state_dict(state_dict)

    def build(path):
        model = Encoder(){before}
        model.restore_weights(path)
        {after}
        return model
"""


def test_a_restore_method_called_on_a_model_its_caller_moved_loads_beside_it():
    """``self.load_state_dict(torch.load(path))`` in a method that every call in view runs on a
    model already on the GPU: the hint (info). Run before the move, nothing."""
    moved = _RESTORE_METHOD.replace("{before}", ".cuda()").replace("{after}", "pass")
    found = check_source(textwrap.dedent(moved), "encoder.py", default_codes())
    assert [(f.line, f.code, f.severity) for f in found] == [(11, "ML203", "info")]
    later = _RESTORE_METHOD.replace("{before}", "").replace("{after}", "model = model.cuda()")
    assert [f.code for f in check_source(textwrap.dedent(later), "encoder.py", default_codes())] == []



def test_a_class_s_own_register_hook_method_is_not_pytorch_s(tmp_path):
    """``self.register_hook(hook, name)`` in an algorithm whose base (another module of the
    project) defines ``register_hook`` for its own hook list: not a tensor hook (ML107 quiet). On a
    module, ``self.register_forward_hook`` in a loop is still PyTorch's."""
    write(tmp_path, {
        "pyproject.toml": "",
        "semi/__init__.py": "",
        "semi/base.py": """
            class AlgorithmBase:
                def __init__(self):
                    self.hooks = {}

                def register_hook(self, hook, name=None):
                    self.hooks[name] = hook
        """,
        "semi/multi.py": """
            import torch
            from semi.base import AlgorithmBase

            class MultiMatch(AlgorithmBase):
                def set_hooks(self, heads):
                    for i in range(heads):
                        self.register_hook(torch.nn.Identity(), f"MaskingHook{i}")
        """,
    })
    assert [hit for hit in project_findings(tmp_path, "semi/multi.py") if hit[1] == "ML107"] == []


def test_lists_emptied_together_every_n_steps_in_the_training_loop_are_bounded():
    """``loss_n, pred, label = [], [], []`` every 100 steps inside the training loop empties each
    list as its own assignment would (ML101 quiet); never emptied, ``pred`` keeps every step's
    logits with their graphs."""
    source = """
        import torch

        def train(model, pairs, opt, num_batch):
            for epoch in range(10):
                loss_n, pred, label = [], [], []
                for i in range(num_batch):
                    x, l = pairs[i]
                    opt.zero_grad()
                    logits, loss = model(x, l)
                    loss_n.append(loss.item())
                    label.append(l)
                    pred.extend(logits)
                    if i % 100 == 0 and i != 0:
                        acc = torch.stack(pred).max(1)[1].eq(torch.cat(label)).float().mean().item()
                        print(acc)
                        {reset}
                    loss.backward()
                    opt.step()
    """
    reset = source.replace("{reset}", "loss_n, pred, label = [], [], []")
    assert [f.code for f in check_source(textwrap.dedent(reset), "hin2vec.py", default_codes())] == []
    kept = source.replace("{reset}", "pass")
    assert "ML101" in [f.code for f in check_source(textwrap.dedent(kept), "hin2vec.py", default_codes())]


def test_an_optimizer_built_from_a_list_of_parameter_groups_holds_each_group():
    """``Adam([{"params": model.parameters()}, {"params": nsloss.parameters()}])`` holds ``model``:
    it is trained, not "a loss target in no optimizer" (ML201 quiet)."""
    source = """
        import torch

        def train(model, nsloss, batches, epochs):
            optimizer = torch.optim.Adam({groups}, lr=1e-4)
            for epoch in range(epochs):
                for data in batches:
                    optimizer.zero_grad()
                    embs = model(data[0])
                    loss = nsloss(data[0], embs, data[1])
                    loss.backward()
                    optimizer.step()
    """
    both = source.replace("{groups}", '[{"params": model.parameters()}, {"params": nsloss.parameters()}]')
    assert [f.code for f in check_source(textwrap.dedent(both), "gatne.py", default_codes())] == []


def test_a_branch_a_constant_turns_off_is_not_walked():
    """``parallel = False; if parallel: ...``, ``if False:``, ``if 0:``: code that never runs yields
    no finding and no fact; the same code with the constant turned on is reported."""
    source = """
        import torch
        from torch import nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.W = nn.Linear(4, 4)
                parallel = {parallel}
                if parallel:
                    self.W = nn.DataParallel(self.W)

        def train(model, loader, opt):
            total = 0
            debug = {debug}
            for x, y in loader:
                loss = model(x).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
                if debug:
                    total += loss
                if False:
                    total += loss
            return total
    """
    off = source.format(parallel="False", debug="0")
    assert findings(off) == []
    on = source.format(parallel="True", debug="1")
    assert findings(on) == [(11, "ML206"), (22, "ML101")]


def test_a_name_bound_more_than_once_is_not_a_constant():
    """``debug = False`` rebound later (or a parameter, a loop target, a ``global``): the test depends
    on the run, so the branch is walked and reported."""
    source = """
        import torch

        def train(model, loader, opt, verbose):
            total = 0
            debug = False
            if verbose:
                debug = True
            for x, y in loader:
                loss = model(x).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
                if debug:
                    total += loss
            return total
    """
    assert findings(source) == [(15, "ML101")]


def test_a_timing_loop_in_a_main_block_on_random_inputs_is_quiet():
    """A model file's ``__main__`` benchmark: warm-up and timed loops of ``y = net(x)`` on
    ``torch.randn`` inputs whose outputs nobody reads, one graph alive at a time (ML201 quiet); the
    same loop saving each output is a sampling loop (reported)."""
    source = """
        import time
        import torch
        from torch import nn

        if __name__ == "__main__":
            net = nn.Conv2d(8, 8, 3).cuda()
            net.eval()
            x = torch.randn(4, 8, 32, 32).cuda()
            for i in range(10):
                y = net(x)
                {use}
            print(time.time())
    """
    assert findings(source.format(use="pass")) == []
    assert findings(source.format(use='torch.save(y, f"out_{i}.pt")')) == [(11, "ML201")]


def test_a_module_whose_optimizer_is_handed_in_is_not_called_untrained():
    """``self.actor_optimizer = actor_optimizer`` (built by the caller) and stepped: whether it holds
    the actor is unknown, so "a loss target only, in no optimizer" has no evidence (ML201 quiet);
    without that optimizer the class's own optimizers are all read, and the actor is in none."""
    source = """
        import torch
        import torch.nn.functional as F

        class SAC:
            def __init__(self, actor, critic, actor_optimizer):
                self.actor = actor
                self.critic = critic
                self.actor_optimizer = actor_optimizer
                self.critic_optimizer = torch.optim.Adam(critic.parameters(), lr=3e-4)

            def train(self, observations):
                new_actions = self.actor(observations)
                policy_loss = F.mse_loss(self.critic(observations), new_actions)
                {zero}
                self.critic_optimizer.zero_grad()
                policy_loss.backward()
                {step}
                self.critic_optimizer.step()
    """
    handed_in = source.format(zero="self.actor_optimizer.zero_grad()", step="self.actor_optimizer.step()")
    assert findings(handed_in) == []
    assert findings(source.format(zero="pass", step="pass")) == [(13, "ML201")]


def test_a_loss_helper_of_the_module_takes_its_arguments_in_its_own_order():
    """``self.calc_loss(targets, v_res, l_res)``: a loss function of this module whose first
    argument is the targets; torch's (input, target) order does not say the model's outputs are
    targets, so the trained model is not "a loss target only" (ML201 quiet). A torch criterion
    called the same way keeps torch's order (reported)."""
    source = """
        import torch
        import torch.nn.functional as F

        class System:
            def __init__(self, model, head):
                self.model = model
                self.head = head
                self.optimizer = torch.optim.Adam(head.parameters())

            def calc_loss(self, targets, *results):
                return sum(F.cross_entropy(r, targets) for r in results)

            def training_step(self, images, targets):
                out = self.model(images)
                loss = {loss}
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
    """
    assert findings(source.format(loss="self.calc_loss(targets, out) + self.head(images).sum()")) == []
    assert findings(source.format(loss="F.mse_loss(self.head(images), out)")) == [(15, "ML201")]


def test_a_feature_bank_the_model_runs_on_after_the_loop_stays_on_the_device():
    """Image features collected over a loader and then fed to the model again (re-ranking) are kept
    on the device on purpose (ML207 quiet); the same features only concatenated and returned are
    the growth ML207 reports."""
    source = """
        import torch

        @torch.no_grad()
        def evaluate(model, data_loader, text_feats, device):
            image_feats = []
            for image, _ in data_loader:
                image_feats.append(model.visual_encoder(image.to(device)))
            image_feats = torch.cat(image_feats)
            {after}
    """
    reranked = "return [model.itm_head(image_feats[i], text_feats).cpu() for i in range(len(image_feats))]"
    assert findings(source.format(after=reranked)) == []
    assert findings(source.format(after="return image_feats")) == [(8, "ML207")]


def test_data_parallel_handed_to_a_function_of_another_module_is_judged_by_what_that_function_does(tmp_path):
    """A script wraps the model in DataParallel and hands it to ``validate`` of another module,
    which runs it under ``no_grad`` and never steps an optimizer: inference only (ML206 quiet), at
    the top level of the script as in a function. Handed to ``train_one_epoch``, which
    backpropagates, it is a training run on DataParallel (reported, in both places)."""
    write(tmp_path, {
        "pyproject.toml": "",
        "proj/__init__.py": "",
        "proj/engine.py": """
            import torch

            def validate(loader, model):
                model.eval()
                correct = 0
                with torch.no_grad():
                    for x, y in loader:
                        correct += (model(x.cuda()).argmax(1) == y.cuda()).sum().item()
                return correct

            def train_one_epoch(loader, model, optimizer):
                for x, y in loader:
                    loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
        """,
        "proj/evaluate.py": """
            import torch
            from proj.engine import validate

            def main(model, loader):
                model = torch.nn.DataParallel(model.cuda())
                print("accuracy", validate(loader, model))

            if __name__ == "__main__":
                net = torch.nn.DataParallel(torch.nn.Linear(3, 3).cuda())
                print(validate([], net))
        """,
        "proj/train.py": """
            import torch
            from proj.engine import train_one_epoch

            def main(model, loader, optimizer):
                model = torch.nn.DataParallel(model.cuda())
                for epoch in range(10):
                    train_one_epoch(loader, model, optimizer)

            if __name__ == "__main__":
                net = torch.nn.DataParallel(torch.nn.Linear(3, 3).cuda())
                train_one_epoch([], net, torch.optim.SGD(net.parameters(), lr=0.1))
        """,
    })
    assert project_findings(tmp_path, "proj/evaluate.py") == []
    assert project_findings(tmp_path, "proj/train.py") == [(5, "ML206"), (10, "ML206")]


def test_an_evaluation_block_after_the_backward_pass_is_told_by_order_not_by_names():
    """A sampling block at the end of a training iteration reuses the training's names (``fake``)
    in eval mode; the next iteration binds them again before its own backward pass, so nothing
    from the block is backpropagated (ML201 reports it). Near-misses: the block's output feeding
    the next iteration's loss before it is rebound (carried over: backpropagated), and a backward
    pass after the block in the same iteration (both quiet)."""
    source = """
        import torch

        def train(netG, loader, opt, every):
            for step, (z, real) in enumerate(loader):
                netG.train()
                {carried}
                fake = netG(z)
                loss = (fake - real).abs().mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                if step % every == 0:
                    netG.eval()
                    fake = netG(z)
                    torch.save(fake.detach().cpu(), f"sample_{{step}}.pt")
                    {after}
    """
    assert findings(source.format(carried="pass", after="pass")) == [(15, "ML201")]
    carried = "loss_prev = fake.mean() if step else 0"
    assert findings(source.format(carried=carried, after="pass").replace(
        "loss = (fake - real).abs().mean()", "loss = (fake - real).abs().mean() + loss_prev")) == []
    assert findings(source.format(carried="pass", after="fake.mean().backward()")) == []


def test_a_definition_nothing_in_the_project_can_run_yields_no_finding(tmp_path):
    """``networks_other.py`` is imported by the project only for ``init_weights``; its
    ``ResnetGenerator`` (DataParallel in ``forward``) is built only by ``define_G``, which nothing
    calls: that code never runs (ML206 quiet there). The same class named by a training script,
    or by a configuration file (``_target_``), runs (reported)."""
    write(tmp_path, {
        "pyproject.toml": "",
        "nets/__init__.py": "",
        "nets/networks_other.py": """
            import torch
            from torch import nn

            def init_weights(net):
                for p in net.parameters():
                    nn.init.normal_(p)

            def define_G(gpu_ids):
                return ResnetGenerator(gpu_ids)

            class ResnetGenerator(nn.Module):
                def __init__(self, gpu_ids):
                    super(ResnetGenerator, self).__init__()
                    self.gpu_ids = gpu_ids
                    self.model = nn.Linear(4, 4)

                def forward(self, x):
                    if self.gpu_ids:
                        return nn.parallel.data_parallel(self.model, x, self.gpu_ids)
                    return self.model(x)
        """,
        "nets/unet.py": """
            from torch import nn
            from nets.networks_other import init_weights

            class UNet(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(1, 1, 3)
                    init_weights(self)
        """,
    })
    assert project_findings(tmp_path, "nets/networks_other.py") == []
    (tmp_path / "train.py").write_text("from nets.networks_other import define_G\nnet = define_G([0, 1])\n")
    assert project_findings(tmp_path, "nets/networks_other.py") == [(19, "ML206")]
    (tmp_path / "train.py").unlink()
    (tmp_path / "config.yaml").write_text("model:\n  _target_: nets.networks_other.ResnetGenerator\n")
    assert project_findings(tmp_path, "nets/networks_other.py") == [(19, "ML206")]


def test_a_module_its_project_imports_whole_or_no_one_imports_keeps_its_findings(tmp_path):
    """``import nets.zoo as zoo`` (then ``getattr(zoo, args.arch)``), or a module nobody imports
    (a script, a library's entry point): an unnamed definition may still run (reported)."""
    files = {
        "pyproject.toml": "",
        "nets/__init__.py": "",
        "nets/zoo.py": """
            from torch import nn

            class Wide(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.model = nn.DataParallel(nn.Linear(4, 4))
        """,
    }
    write(tmp_path, files)
    assert project_findings(tmp_path, "nets/zoo.py") == [(6, "ML206")]  # nobody imports it
    (tmp_path / "train.py").write_text("import sys\nimport nets.zoo as zoo\nnet = getattr(zoo, sys.argv[1])()\n")
    assert project_findings(tmp_path, "nets/zoo.py") == [(6, "ML206")]


def test_a_definition_a_star_import_hands_to_a_script_that_names_it_only_in_a_comment_never_runs(tmp_path):
    """``from train import *`` in a script that looks nothing up by name: what it uses shows as
    a name in its code. A definition whose only other mention is a comment
    (``# train_graph_completion(args)``) never runs; a name in code, or a ``getattr`` in the
    importer, keeps its findings."""
    write(tmp_path, {
        "pyproject.toml": "",
        "train.py": """
            import torch
            from torch import nn

            def run():
                return nn.Linear(4, 4)

            class Wide(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.model = nn.DataParallel(nn.Linear(4, 4))
        """,
        "main.py": """
            from train import *

            if __name__ == "__main__":
                net = run()
                # net = Wide()
        """,
    })
    assert project_findings(tmp_path, "train.py") == []
    (tmp_path / "main.py").write_text("from train import *\n\nif __name__ == '__main__':\n    net = Wide()\n")
    assert project_findings(tmp_path, "train.py") == [(10, "ML206")]
    (tmp_path / "main.py").write_text(
        "import sys\nfrom train import *\n\nif __name__ == '__main__':\n    net = globals()[sys.argv[1]]()\n")
    assert project_findings(tmp_path, "train.py") == [(10, "ML206")]


_VENDORED = {
    "train.py": """
        import torch
        # from modules.bn import InPlaceABN
        from model import Net

        if __name__ == "__main__":
            net = Net()
    """,
    "model.py": "from torch import nn\n\nclass Net(nn.Module):\n    pass\n",
    "modules/__init__.py": "from .functions import Stat\n",
    "modules/functions.py": """
        import torch
        from torch import nn

        class Stat(nn.Module):
            def __init__(self):
                super().__init__()
                self.model = nn.DataParallel(nn.Linear(4, 4))
    """,
}


def test_a_package_no_module_outside_it_imports_never_runs_in_a_repository_not_packaged(tmp_path):
    """Vendored code left in a research repository (its only import commented out): what it
    would do if it ran is not a finding; an import from a script, a notebook naming the package,
    a program inside the package, or a packaged project (its users are elsewhere) bring it back."""
    write(tmp_path, _VENDORED)
    assert project_findings(tmp_path, "modules/functions.py") == []
    (tmp_path / "demo.ipynb").write_text('{"cells": [{"source": ["from modules import Stat"]}]}')
    assert project_findings(tmp_path, "modules/functions.py") == [(7, "ML206")]
    (tmp_path / "demo.ipynb").unlink()
    (tmp_path / "modules" / "selftest.py").write_text("if __name__ == '__main__':\n    print(1)\n")
    assert project_findings(tmp_path, "modules/functions.py") == [(7, "ML206")]
    (tmp_path / "modules" / "selftest.py").unlink()
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='x')\n")
    assert project_findings(tmp_path, "modules/functions.py") == [(7, "ML206")]
    (tmp_path / "setup.py").unlink()
    assert project_findings(tmp_path, "modules/functions.py") == []
    # a library whose packaging files are missing: no program of its own runs it, its users are elsewhere
    (tmp_path / "train.py").unlink()
    (tmp_path / "model.py").unlink()
    assert project_findings(tmp_path, "modules/functions.py") == [(7, "ML206")]


def test_a_subpackage_no_module_outside_it_imports_never_runs(tmp_path):
    """The same for a subpackage of a package the scripts do import (``lib/models/dcn``, a
    vendored extension nothing outside it imports): its own package is imported, the subpackage
    is not. An import of the subpackage from the package around it brings it back."""
    write(tmp_path, {
        "train.py": """
            import torch
            from lib.models.net import Net

            if __name__ == "__main__":
                net = Net()
        """,
        "lib/__init__.py": "",
        "lib/models/__init__.py": "",
        "lib/models/net.py": "from torch import nn\n\nclass Net(nn.Module):\n    pass\n",
        "lib/models/dcn/__init__.py": "from .functions import Stat\n",
        "lib/models/dcn/functions.py": _VENDORED["modules/functions.py"],
    })
    assert project_findings(tmp_path, "lib/models/dcn/functions.py") == []
    (tmp_path / "lib/config.py").write_text("from lib.models import (\n    net,\n    dcn,\n)\n")
    assert project_findings(tmp_path, "lib/models/dcn/functions.py") == [(7, "ML206")]
    (tmp_path / "lib/config.py").unlink()
    (tmp_path / "lib/models/net.py").write_text(
        "from torch import nn\nfrom .dcn import Stat\n\nclass Net(nn.Module):\n    pass\n")
    assert project_findings(tmp_path, "lib/models/dcn/functions.py") == [(7, "ML206")]


def test_a_package_nobody_imports_is_checked_again_when_a_script_starts_to_import_it(tmp_path):
    write(tmp_path, _VENDORED)

    def cached_findings() -> list[tuple[int, str]]:
        result = check_paths([str(tmp_path / "modules" / "functions.py")], Config(), use_cache=True)
        return sorted((f.line, f.code) for f in result.findings)

    assert cached_findings() == []
    assert cached_findings() == []  # from the cache
    (tmp_path / "train.py").write_text("from modules.functions import Stat\nstat = Stat()\n")
    assert cached_findings() == [(7, "ML206")]


def test_an_unreachable_definition_is_checked_again_when_another_module_starts_to_name_it(tmp_path):
    """The "nothing can run it" answer reads every file of the project: the cached result of the
    module is not reused once a new script names the class."""
    write(tmp_path, {
        "pyproject.toml": "",
        "nets/__init__.py": "",
        "nets/extra.py": """
            from torch import nn

            def init_weights(net):
                pass

            class Wide(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.model = nn.DataParallel(nn.Linear(4, 4))
        """,
        "nets/unet.py": "from nets.extra import init_weights\n",
    })

    def cached_findings() -> list[tuple[int, str]]:
        result = check_paths([str(tmp_path / "nets" / "extra.py")], Config(), use_cache=True)
        return sorted((f.line, f.code) for f in result.findings)

    assert cached_findings() == []
    assert cached_findings() == []  # from the cache
    (tmp_path / "train.py").write_text("from nets.extra import Wide\nnet = Wide()\n")
    assert cached_findings() == [(9, "ML206")]


def test_a_script_that_only_imports_torch_distributed_runs_one_process():
    """An inference script with ``import torch.distributed as dist`` that it never uses (or only
    asks ``dist.is_initialized()``) runs one process: no "every rank" error (ML203); the same
    script reading its rank is a program of one process per GPU (error)."""
    source = """
        import torch
        import torch.distributed as dist
        from model import Net

        def main(path):
            model = Net().cuda()
            checkpoint = torch.load(path)
            model.load_state_dict(checkpoint["model_state"])
            {use}

        if __name__ == "__main__":
            main("best.pt")
    """
    for use in ("pass", "print(dist.is_initialized())"):
        severities = [f.severity for f in check_source(textwrap.dedent(source.format(use=use)), "inference.py",
                                                       default_codes())]
        assert "error" not in severities
    ranked = [f.severity for f in check_source(textwrap.dedent(source.format(
        use="print(dist.get_rank()); torch.save(model.state_dict(), 'last.pt')")), "inference.py", default_codes())]
    assert ranked == ["error"]


def test_state_rebuilt_by_a_no_grad_method_of_the_class_carries_no_graph():
    """``time_p, p_model = self.cal_time_p_and_p_model(logits, time_p, p_model)`` where that
    method is ``@torch.no_grad()``: what it returns decides, not its arguments (ML102 quiet); the
    same method with grad on chains every step's graph through the state (reported)."""
    source = """
        import torch

        class FreeMatch:
            def __init__(self, model, optimizer):
                self.model = model
                self.optimizer = optimizer

            def train(self, loader):
                p_model = None
                for x, y in loader:
                    logits = self.model(x)
                    p_model = self.update_p_model(logits, p_model)
                    loss = torch.nn.functional.cross_entropy(logits, y)
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()

            {decorator}
            def update_p_model(self, logits, p_model):
                prob = torch.softmax(logits, dim=1).mean(0)
                if p_model is None:
                    return prob
                return p_model * 0.999 + prob * 0.001
    """
    assert findings(source.format(decorator="@torch.no_grad()")) == []
    assert findings(source.format(decorator="")) == [(13, "ML102")]


def test_a_running_sum_scaled_by_a_configuration_value_the_loss_was_scaled_by_has_no_graph():
    """``loss /= __C.GRAD_ACCU_STEPS`` then ``loss_sum += loss.cpu().data.numpy() *
    __C.GRAD_ACCU_STEPS``: the configuration value the loss was divided by flows into the loss,
    not the other way; an attribute of a parameter or of a configuration namespace carries no graph
    (ML101 quiet). The loss itself summed is reported."""
    source = """
        import torch

        def train(__C, net, loader, optim, loss_fn):
            loss_sum = 0
            for x, y in loader:
                loss = loss_fn(net(x), y)
                loss /= __C.GRAD_ACCU_STEPS
                loss.backward()
                loss_sum += {kept} * __C.GRAD_ACCU_STEPS
                optim.step()
    """
    assert findings(source.format(kept="loss.cpu().data.numpy()")) == []
    assert findings(source.format(kept="loss")) == [(10, "ML101")]


def test_a_loss_handed_to_a_scaler_with_the_optimizer_may_be_backpropagated_there():
    """``loss_scaler(loss, optimizer, parameters=model.parameters())`` (timm's NativeScaler runs
    the backward pass and the step): the forward before it is training, even where an earlier
    evaluation left the model in eval mode (ML201 quiet); without that call nothing trains it and
    the eval-mode forward is reported."""
    source = """
        import torch

        model = build()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        model.eval()
        with torch.no_grad():
            for target, input_ in val_loader:
                print(criterion(model(input_), target).item())
        for target, input_ in loader:
            optimizer.zero_grad()
            restored = model(input_.cuda())
            loss = criterion(restored, target.cuda())
            {step}
    """
    assert findings(source.format(step="loss_scaler(loss, optimizer, parameters=model.parameters())")) == []
    assert findings(source.format(step="print(loss.item())")) == [(12, "ML201")]


def test_a_model_rewrapped_under_its_own_name_through_star_imports(tmp_path):
    """``model = DataParallel(model)`` keeps the class ``model`` held (``Darknet``, reached through
    ``from models import *``, which has ``torch`` from ``from helpers import *``): the parts its
    ``forward`` returns stay apart, so the per-loss numbers rebuilt with ``torch.Tensor`` carry no
    graph (ML101 quiet), while the loss itself kept in the same running mean is reported. The
    script imports no torch package itself: its ``torch.`` names come through the star imports."""
    write(tmp_path, {
        "pyproject.toml": "",
        "mot/helpers.py": """
            import torch
            import torch.nn.functional as F

            def smooth(x):
                return F.avg_pool1d(x, 3)
            """,
        "mot/models.py": """
            import torch.nn as nn

            from helpers import *

            class Darknet(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])
                    self.loss_names = ["box", "conf"]

                def forward(self, x, targets=None):
                    losses = {}
                    output = []
                    for layer in self.layers:
                        x = layer(x)
                        output.append(x)
                    if targets is not None:
                        for name in self.loss_names:
                            losses[name] = (x - targets).pow(2).mean()
                        total = sum(losses.values())
                        return total, torch.Tensor([v.item() for v in losses.values()]).cuda()
                    return torch.cat(output, 1)
            """,
        "mot/train.py": """
            from collections import defaultdict

            from models import *

            def train(loader, epochs):
                model = Darknet()
                model.cuda().train()
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                model = torch.nn.DataParallel(model)
                running = defaultdict(float)
                for epoch in range(epochs):
                    for i, (imgs, targets) in enumerate(loader):
                        loss, components = model(imgs.cuda(), targets.cuda())
                        components = torch.mean(components.view(-1, 2), dim=0)
                        loss.backward()
                        optimizer.step()
                        optimizer.zero_grad()
                        for k, name in enumerate(model.module.loss_names):
                            running[name] = (running[name] * i + components[k]) / (i + 1)
            """,
    })
    assert [code for _, code in project_findings(tmp_path, "mot/train.py") if code == "ML101"] == []
    train = tmp_path / "mot/train.py"
    train.write_text(train.read_text().replace("+ components[k]) / (i + 1)", "+ loss) / (i + 1)"))
    assert (19, "ML101") in project_findings(tmp_path, "mot/train.py")


def test_a_parameterless_metric_module_around_a_custom_function_on_numpy_inputs(tmp_path):
    """A Chamfer-distance module of the project (no parameters; its forward narrows its inputs,
    ``xyz1 = xyz1[mask].unsqueeze(0)``, and runs a ``torch.autograd.Function``) applied to arrays
    loaded from disk gives plain numbers: collecting them is quiet. Applied to a model's output it
    carries the model's graph, and collecting that is reported."""
    write(tmp_path, {
        "pyproject.toml": "",
        "pc/__init__.py": "",
        "pc/chamfer.py": """
            import torch

            import chamfer_ext

            class ChamferFunction(torch.autograd.Function):
                @staticmethod
                def forward(ctx, xyz1, xyz2):
                    dist1, dist2 = chamfer_ext.forward(xyz1, xyz2)
                    ctx.save_for_backward(xyz1, xyz2)
                    return dist1, dist2

                @staticmethod
                def backward(ctx, grad1, grad2):
                    return chamfer_ext.backward(*ctx.saved_tensors, grad1, grad2)

            class ChamferDistance(torch.nn.Module):
                def __init__(self, ignore_zeros=False):
                    super().__init__()
                    self.ignore_zeros = ignore_zeros

                def forward(self, xyz1, xyz2):
                    if xyz1.size(0) == 1 and self.ignore_zeros:
                        xyz1 = xyz1[torch.sum(xyz1, dim=2).ne(0)].unsqueeze(dim=0)
                        xyz2 = xyz2[torch.sum(xyz2, dim=2).ne(0)].unsqueeze(dim=0)
                    dist1, dist2 = ChamferFunction.apply(xyz1, xyz2)
                    return torch.mean(dist1) + torch.mean(dist2)
            """,
        "pc/metric.py": """
            import numpy as np
            import torch

            from pc.chamfer import ChamferDistance

            def fidelity(samples, net):
                criterion = ChamferDistance(ignore_zeros=True)
                metric = []
                for path in samples:
                    partial = torch.from_numpy(np.load(path + "/input.npy")).unsqueeze(0).cuda()
                    pred = torch.from_numpy(np.load(path + "/pred.npy")).unsqueeze(0).cuda()
                    metric.append(criterion({first}, pred))
                return sum(metric) / len(metric)
            """,
    })
    metric = tmp_path / "pc/metric.py"
    text = metric.read_text()
    metric.write_text(text.replace("{first}", "partial"))
    assert [code for _, code in project_findings(tmp_path, "pc/metric.py") if code == "ML101"] == []
    metric.write_text(text.replace("{first}", "net(partial)"))
    assert [code for _, code in project_findings(tmp_path, "pc/metric.py") if code == "ML101"] == ["ML101"]


def test_pseudo_labels_written_into_a_preallocated_tensor_rebound_on_the_device():
    """``selected = torch.ones(n, dtype=torch.long) * -1`` moved with ``selected = selected.cuda()``
    is still a tensor the function allocated: writing per-sample slots of it overwrites them, nothing
    grows (ML101 quiet, even for a value with a graph). Into a dict, the same store under each batch's
    indices is a new key per step and is reported."""
    source = """
        import torch

        def train(model, loader, optimizer, n):
            selected = {holder}
            for idx, x in loader:
                logits = model(x)
                loss = logits.logsumexp(-1).mean()
                loss.backward()
                optimizer.step()
                selected[idx] = logits.max(-1)[0]
    """
    holder = "torch.ones((n,), dtype=torch.long) * -1\n            selected = selected.cuda(0)"
    assert findings(source.format(holder=holder)) == []
    assert findings(source.format(holder="{}")) == [(11, "ML101")]


def test_a_loss_kept_on_the_agent_started_again_at_zero_and_backpropagated_whole():
    """An agent's ``rollout()`` adds each episode's loss to ``self.loss``; ``train()`` sets it back
    to ``0`` before each rollout and backpropagates it whole after: one update's graph, freed by it
    (ML101 quiet). Never started again and only printed, the sum keeps every rollout's graph and is
    reported."""
    source = """
        import torch

        class Agent:
            def __init__(self, policy, optimizer):
                self.policy = policy
                self.optimizer = optimizer
                self.loss = 0

            def rollout(self, obs):
                logits = self.policy(obs)
                self.loss += logits.logsumexp(-1).mean()

            def train(self, env, n_iters):
                for _ in range(n_iters):
                    self.optimizer.zero_grad()
                    {reset}
                    self.rollout(env.reset())
                    {use}
                    self.optimizer.step()
    """
    assert findings(source.format(reset="self.loss = 0", use="self.loss.backward()")) == []
    assert findings(source.format(reset="pass", use="print(self.loss.item())")) == [(12, "ML101")]


def test_an_offset_advanced_by_command_line_values_carries_no_graph(tmp_path):
    """``args = parser.parse_args()`` is a namespace of command-line values: an offset into the
    corpus advanced by a length computed from them (``i += seq_len``) carries no graph, even though
    the batch it selects (through helpers of another module handed ``args``) is backpropagated
    (ML102 quiet); the loss summed the same way is reported."""
    write(tmp_path, {
        "pyproject.toml": "",
        "utils.py": """
            def load():
                return None

            def batchify(data, bsz, args):
                data = data.narrow(0, 0, data.size(0) // bsz * bsz).view(bsz, -1).t().contiguous()
                if args.cuda:
                    data = data.cuda()
                return data

            def get_batch(source, i, args, seq_len=None):
                seq_len = min(seq_len if seq_len else args.bptt, len(source) - 1 - i)
                return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)
            """,
        "train.py": """
            import argparse

            import numpy as np
            import torch
            from utils import batchify, get_batch, load

            parser = argparse.ArgumentParser()
            parser.add_argument("--bptt", type=int, default=70)
            args = parser.parse_args()
            corpus = load()
            model = torch.nn.LSTM(8, 8)
            criterion = torch.nn.CrossEntropyLoss()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train_data = batchify(corpus.train, 10, args)

            def train():
                i, total = 0, 0
                while i < train_data.size(0) - 2:
                    bptt = args.bptt if np.random.random() < 0.95 else args.bptt / 2.
                    seq_len = max(5, int(np.random.normal(bptt, 5)))
                    seq_len = min(seq_len, args.bptt + 10)
                    data, targets = get_batch(train_data, i, args, seq_len=seq_len)
                    output, hidden = model(data)
                    loss = criterion(output.view(-1, 8), targets)
                    loss.backward()
                    optimizer.step()
                    total += loss.item()
                    i += seq_len
            """,
    })
    assert project_findings(tmp_path, "train.py") == []
    train = tmp_path / "train.py"
    train.write_text(train.read_text().replace("total += loss.item()", "total += loss"))
    assert [code for _, code in project_findings(tmp_path, "train.py")] == ["ML101"]


def test_a_function_named_like_a_model_from_a_star_import_is_not_a_module(tmp_path):
    """``save_model(args, model)`` reached through ``from utils import *`` is the project's function,
    not a module called on the data: a statement calling it in a loop over the loader records no
    graph (ML201 quiet). Calling the model itself there, its output thrown away, is reported."""
    write(tmp_path, {
        "pyproject.toml": "",
        "utils.py": """
            import torch

            def save_model(args, model, name=""):
                torch.save(model, f"{args.out}/{name}.pt")
            """,
        "train.py": """
            import torch
            from utils import *

            def snapshot_each_batch(args, loader, model):
                model.train()
                for i, batch in enumerate(loader):
                    {call}
            """,
    })
    train = tmp_path / "train.py"
    text = train.read_text()
    train.write_text(text.replace("{call}", "save_model(args, model, name=str(i))"))
    assert project_findings(tmp_path, "train.py") == []
    train.write_text(text.replace("{call}", "model(batch)"))
    assert project_findings(tmp_path, "train.py") == [(7, "ML201")]


def test_a_helper_returning_one_loss_on_one_path_and_a_tuple_on_another(tmp_path):
    """``consistency_loss`` of another module returns ``F.mse_loss(...)`` for ``name == 'L2'`` and
    ``(loss, mask, select, labels, p_model)`` for ``'ce'``: the caller unpacking five names gets the
    tuple's parts (one tensor does not unpack into five), so ``p_model`` rebuilt from detached
    probabilities each step is not a chain (ML102 quiet). Rebuilt from the strong logits' graph,
    it is."""
    write(tmp_path, {
        "pyproject.toml": "",
        "semi/__init__.py": "",
        "semi/train_utils.py": """
            import torch
            import torch.nn.functional as F

            def ce_loss(logits, targets, use_hard_labels=True, reduction="none"):
                if use_hard_labels:
                    return F.nll_loss(F.log_softmax(logits, dim=-1), targets, reduction=reduction)
                return torch.sum(-targets * F.log_softmax(logits, dim=-1), dim=1)
            """,
        "semi/utils.py": """
            import torch
            import torch.nn.functional as F

            from semi.train_utils import ce_loss

            def consistency_loss(logits_s, logits_w, p_model, name="ce", T=1.0, use_hard_labels=True):
                logits_w = logits_w.detach()
                if name == "L2":
                    return F.mse_loss(logits_s, logits_w, reduction="mean")
                pseudo_label = torch.softmax(logits_w, dim=-1)
                p_model = p_model * 0.999 + torch.mean({source}, dim=0) * 0.001
                max_probs, max_idx = torch.max(pseudo_label, dim=-1)
                mask = max_probs.ge(0.95).float()
                select = max_probs.ge(0.95).long()
                if use_hard_labels:
                    masked_loss = ce_loss(logits_s, max_idx, use_hard_labels, reduction="none") * mask
                else:
                    masked_loss = ce_loss(logits_s, torch.softmax(logits_w / T, dim=-1), use_hard_labels) * mask
                return masked_loss.mean(), mask.mean(), select, max_idx.long(), p_model
            """,
        "semi/train.py": """
            import torch
            from semi.utils import consistency_loss

            def train(model, loader, optimizer, num_classes):
                p_model = torch.ones(num_classes) / num_classes
                for x_w, x_s in loader:
                    logits_w, logits_s = model(x_w), model(x_s)
                    unsup_loss, mask, select, pseudo_lb, p_model = consistency_loss(
                        logits_s, logits_w, p_model, "ce", 0.5)
                    optimizer.zero_grad()
                    unsup_loss.backward()
                    optimizer.step()
            """,
    })
    utils = tmp_path / "semi/utils.py"
    text = utils.read_text()
    utils.write_text(text.replace("{source}", "pseudo_label.detach()"))
    assert project_findings(tmp_path, "semi/train.py") == []
    utils.write_text(text.replace("{source}", "torch.softmax(logits_s, dim=-1)"))
    assert [code for _, code in project_findings(tmp_path, "semi/train.py")] == ["ML102"]


def test_a_value_that_only_reaches_a_backpropagated_loss_is_a_warning():
    """What an object memlint cannot read returns (``sampler.draw(batch)``) and only feeds the loss
    is presumed to carry a graph: kept across steps it is reported as a warning naming that
    presumption (a batch or a label reaches a loss as well as an output does). A value that is
    backpropagated itself (``helper.loss(...)``, then ``.backward()`` on it) is shown to carry a
    graph: an error."""
    source = """
        import torch

        def train(model, loader, optimizer, sampler, helper):
            kept = []
            for batch in loader:
                feats = sampler.draw(batch)
                loss = helper.loss(model, feats)
                loss.backward()
                optimizer.step()
                kept.append({kept})
    """
    from memlint.static.source_check import check_source
    from memlint.catalogue import default_codes

    def severities(kept):
        found = check_source(textwrap.dedent(source.format(kept=kept)), "train.py", default_codes())
        return [(f.code, f.severity, "presumed" in f.help) for f in found]

    assert severities("feats") == [("ML101", "warning", True)]
    assert severities("loss") == [("ML101", "error", False)]


def test_a_script_s_function_it_never_calls_is_not_checked(tmp_path):
    """A program outside any package (it parses the command line at the top level) that no module
    imports runs only what it calls: a leftover evaluation function it never calls is not reported
    (ML201 quiet there), the one it calls is. The same module inside a package may be imported by
    its users: both are reported."""
    script = """
        import argparse

        import torch

        parser = argparse.ArgumentParser()
        args = parser.parse_args()

        def evaluate(model, loader):
            model.eval()
            hits = []
            for x, y in loader:
                hits.append(model(x))
            return hits

        def evaluate_restarts(model, loader):
            model.eval()
            hits = []
            for x, y in loader:
                hits.append(model(x))
            return hits

        model = torch.load(args.ckpt, map_location="cpu")
        print(len(evaluate(model, torch.load(args.data, map_location="cpu"))))
    """
    write(tmp_path, {"pyproject.toml": "", "eval-adv.py": script, "train.py": "import torch\n"})
    assert [line for line, code in project_findings(tmp_path, "eval-adv.py") if code == "ML201"] == [12]
    write(tmp_path / "pkg", {"__init__.py": "", "evaluation.py": script})
    assert [line for line, code in project_findings(tmp_path, "pkg/evaluation.py") if code == "ML201"] == [12, 19]


def test_a_name_bound_to_a_fresh_model_after_the_evaluated_one_was_deleted():
    """``net.eval()`` then ``del net`` and ``net = Model()``: the name holds another module, in its
    own (training) mode, so a shape check on it is not an eval-mode forward (ML201 quiet). Rebound
    from itself (``net = net.cuda()``), it is the same module, still in eval mode: reported."""
    source = """
        import torch

        def main(build, teacher_path):
            net = build()
            net.load_state_dict(torch.load(teacher_path, map_location="cpu"))
            net.eval()
            {rebind}
            logits = net(torch.randn(2, 3, 32, 32))
            print(len(logits))
    """
    assert findings(source.format(rebind="del net\n            net = build()")) == []
    assert [code for _, code in findings(source.format(rebind="net = net.cuda()"))] == ["ML201"]


def test_2_a_forward_fed_a_volatile_variable_is_legacy_no_grad():
    """``Variable(x, volatile=True)`` is the no-grad of PyTorch before 0.4: nothing computed from
    it records a graph there (0.4 ignores the flag). Where the code may run on such a version
    (it reads ``loss.data[0]``, 0.3's idiom), an evaluation fed one, directly or through names
    computed from it (an encoder's output handed to the decoder), is not reported; the same loop
    with ``requires_grad=False`` inputs is, and so is the volatile one in code that needs 0.4 or
    later (``.item()``), where the flag does nothing."""
    source = """
        import torch
        from torch.autograd import Variable

        def validate(model, encoder, decoder, loader):
            model.eval()
            encoder.eval()
            decoder.eval()
            losses = []
            for data, target in loader:
                data = Variable(data, {flag})
                logits = encoder(data)
                edges = torch.softmax(logits, -1)
                out = decoder(data, edges)
                losses.append(out.data[0])
                out2 = model(Variable(target, {flag}))
                losses.append(out2.data[0])
            return losses
    """
    assert [code for _, code in findings(source.format(flag="volatile=True")) if code == "ML201"] == []
    assert [code for _, code in findings(source.format(flag="volatile=not training")) if code == "ML201"] == []
    reported = [line for line, code in findings(source.format(flag="requires_grad=False")) if code == "ML201"]
    assert reported == [12, 14, 16]  # encoder, decoder, model
    modern = source.format(flag="volatile=True").replace(".data[0]", ".item()")
    assert [line for line, code in findings(modern) if code == "ML201"] == [12, 14, 16]


def test_2_a_forward_fed_only_the_output_of_a_volatile_forward_is_legacy_no_grad():
    """In PyTorch before 0.4 volatility propagates: a module's output computed from a volatile
    ``Variable`` is volatile too, so a classifier fed only the feature extractor's output (bound
    in a tuple assignment beside a non-volatile label) records no graph either. Not so where the
    code needs 0.4 (``.item()``), nor when the feature came from a non-volatile input."""
    source = """
        import torch
        import torch.nn.functional as F
        from torch.autograd import Variable

        def test(G, C1, loader):
            G.eval()
            C1.eval()
            loss = 0
            for img, label in loader:
                img, label = img.cuda(), label.long().cuda()
                img, label = Variable(img, {flag}), Variable(label)
                feat = G(img)
                output = C1(feat)
                loss += F.nll_loss(output, label).data[0]
            return loss
    """
    assert [line for line, code in findings(source.format(flag="volatile=True")) if code == "ML201"] == []
    assert [line for line, code in findings(source.format(flag="requires_grad=False"))
            if code == "ML201"] == [13, 14]
    modern = source.format(flag="volatile=True").replace(".data[0]", ".item()")
    assert [line for line, code in findings(modern) if code == "ML201"] == [13, 14]
    # 0.3's other scalar read, through numpy (an IndexError on a 0-d array since 0.4), beside
    # numpy's own item(), which says nothing of the torch version
    numpy_read = textwrap.dedent(source.format(flag="volatile=True")).replace(
        ".data[0]", ".data.cpu().numpy()[0]") + "\n\ndef count(m):\n    return np.prod(m.size()).item()\n"
    assert [line for line, code in findings(numpy_read) if code == "ML201"] == []


@pytest.mark.parametrize("visible, device_ids, reported", [
    ("','.join(map(str, gpus))", "[i for i in range(len(gpus))]", False),
    ("'0'", "None", False),
    ("','.join(str(g) for g in gpus)", "None", False),
    ("'0,1'", "None", True),
    ("os.environ.get('GPUS', '0')", "None", True),
    ("os.environ.get('GPUS', '0')", "list(range(len(gpus)))", False),
])
def test_6_data_parallel_in_a_program_that_sees_one_gpu(visible, device_ids, reported):
    """A script that makes one GPU visible before anything runs (``CUDA_VISIBLE_DEVICES`` set to
    one device written out, or to the join of a one-element list) and wraps its model over the
    devices of that list: DataParallel only calls the module, nothing is scattered (ML206
    quiet). Two devices written out, or a value read from the environment, is reported."""
    source = f"""
        import os
        gpus = [1]
        os.environ["CUDA_VISIBLE_DEVICES"] = {visible}
        import torch
        import torch.nn as nn

        class Trainer:
            def __init__(self, model):
                self.model = nn.DataParallel(model.cuda(), device_ids={device_ids})
                self.optimizer = torch.optim.Adam(self.model.parameters())

            def train(self, loader):
                for x, y in loader:
                    loss = nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
    """
    found = [code for _, code in findings(source) if code == "ML206"]
    assert found == (["ML206"] if reported else [])
    if not reported and device_ids != "None":
        two = source.replace("gpus = [1]", "gpus = [0, 1]")
        assert [code for _, code in findings(two) if code == "ML206"] == ["ML206"]


_RUNNING_MEAN_CUT_BY_A_METHOD = """
import torch
from torch import nn


class Client:
    def __init__(self, model, loader, momentum=0.1):
        self.model = model
        self.loader = loader
        self.momentum = momentum
        self.running_mean = torch.zeros(16)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train(self):
        for x, y in self.loader:
            rep = self.model.base(x)
            running_mean = torch.mean(rep, dim=0)
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * running_mean
            reg_loss = torch.mean(self.running_mean ** 2)
            loss = nn.functional.cross_entropy(self.model.head(rep), y) + reg_loss
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.detach_running()

    def detach_running(self):
        self.running_mean.detach_()
"""


@pytest.mark.parametrize("body, reported", [
    ("self.running_mean.detach_()", False),
    ("self.running_mean = self.running_mean.detach()", False),
    ("print(self.running_mean)", True),
    ("if self.momentum > 0.5:\n            self.running_mean.detach_()", True),
])
def test_3_state_a_method_of_the_class_detaches_every_iteration(body, reported):
    """A running statistic updated from itself each step is cut from its graph by a method of
    the class the loop calls every iteration (``self.detach_running()``, whose body is
    ``self.running_mean.detach_()``): no chain (ML102 quiet). A method that only reads it, or
    detaches it only in a branch, leaves the chain."""
    source = _RUNNING_MEAN_CUT_BY_A_METHOD.replace("self.running_mean.detach_()", body)
    assert [line for line, code in findings(source) if code == "ML102"] == ([18] if reported else [])


def test_6_a_global_teacher_wrapper_the_functions_run_only_under_no_grad():
    """A script's teacher, put in eval mode and wrapped at the top level, that its functions call
    only under ``no_grad`` (in ``train`` and in ``test``, a function of the file that backpropagates
    nothing) gathers no loss and no gradient: ML206 quiet. The student wrapped beside it, trained by
    ``train``, is reported, also when an earlier model of that name was put in eval mode and
    deleted (``net.eval(); del net``: the new ``net`` is in training mode)."""
    source = """
        import torch
        import torch.nn as nn

        net = build(arch)
        net.eval()
        print(count_flops(net))
        del net
        net = build(arch).cuda()
        net = nn.DataParallel(net)
        tnet = build(tarch).cuda()
        tnet.load_state_dict(torch.load(path, map_location="cpu"))
        tnet.eval()
        tnet = nn.DataParallel(tnet)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)

        def correct(output, target):
            return (output.argmax(1) == target).sum().item()

        def train(loader):
            net.train()
            for x, y in loader:
                with torch.no_grad():
                    t_logits = tnet(x)
                loss = kd_loss(net(x), t_logits, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

        def test(model, loader):
            model.eval()
            hits = 0
            with torch.no_grad():
                for x, y in loader:
                    hits += correct(model(x), y)
            return hits

        if __name__ == "__main__":
            print(test(tnet, loader))
            for epoch in range(10):
                train(loader)
    """
    assert [line for line, code in findings(source) if code == "ML206"] == [10]
    with_grad = source.replace("                with torch.no_grad():\n                    t_logits = tnet(x)",
                               "                t_logits = tnet(x)")
    assert with_grad != source
    assert [line for line, code in findings(with_grad) if code == "ML206"] == [10]  # eval mode, never trained
    tuned = source.replace("print(test(tnet, loader))", "finetune(tnet, loader)").replace(
        "        def correct(", """        def finetune(model, loader):
            opt = torch.optim.SGD(model.parameters(), lr=0.01)
            for x, y in loader:
                opt.zero_grad()
                nn.functional.cross_entropy(model(x), y).backward()
                opt.step()

        def correct(""")
    assert tuned.count("finetune") == 2
    assert [line for line, code in findings(tuned) if code == "ML206"] == [10, 14]  # handed to a function that trains it


def test_6_a_parameterless_torch_layer_on_inputs_of_unknown_origin():
    """``nn.AdaptiveAvgPool2d`` owns no parameter (scripts/tensor_api.py lists the torch.nn layers
    that own none): pooling a caller's tensors in a loop records a graph only if they carry one,
    which this function cannot tell, so ML201 stays quiet. A layer with parameters built here and
    never trained (``nn.Linear``) is still reported."""
    source = """
        import torch
        import torch.nn as nn

        def pooled_similarity(image_outputs, audio_outputs, nframes):
            pool = {layer}
            pooled = []
            for idx in range(image_outputs.size(0)):
                pooled.append(pool(audio_outputs[idx][:, :, 0:nframes[idx]]).unsqueeze(0))
            return torch.mm(image_outputs, torch.cat(pooled).t())
    """
    assert [code for _, code in findings(source.format(layer="nn.AdaptiveAvgPool2d((1, 1))")) if code == "ML201"] == []
    assert [code for _, code in findings(source.format(layer="nn.Linear(64, 64)")) if code == "ML201"] == ["ML201"]


def test_6_a_local_wrapper_only_read_through_module_is_never_run():
    """``DataParallel`` built only to read a ``module.``-prefixed state dict, whose ``.module`` parts
    are then kept (``self.v = wrapped.module.v``): the wrapper's forward never runs (ML206 quiet).
    Called, handed on or returned, it is reported."""
    source = """
        import torch
        import torch.nn as nn

        class Tagger(nn.Module):
            def __init__(self, path):
                super().__init__()
                sd = torch.load(path, map_location="cpu")
                audio_model = Backbone()
                audio_model = torch.nn.DataParallel(audio_model)
                audio_model.load_state_dict(sd, strict=False)
                self.v = audio_model.module.v
                {use}
    """
    assert [code for _, code in findings(source.format(use="")) if code == "ML206"] == []
    for use in ("self.net = audio_model", "print(audio_model(torch.zeros(1, 3)))", "register(audio_model)"):
        assert [line for line, code in findings(source.format(use=use)) if code == "ML206"] == [10], use


def test_5_a_method_that_steps_its_optimizer_once_runs_per_step():
    """``optimize_parameters`` steps an optimizer outside any loop of its own: each call is one
    training step, whatever its name. A history pool it feeds the generator's output (the pool's
    ``query`` appends its argument) then keeps one graph per step (ML101). The generator is a
    parameter of ``__init__`` kept on ``self``; ``Adam(netG_A.parameters())`` shows it is a module.
    Near-miss: the pool fed ``fake_B.detach()``."""
    source = """
        import torch

        class ImagePool:
            def __init__(self, size):
                self.images = []

            def query(self, images):
                for image in images:
                    self.images.append(torch.unsqueeze(image, 0))
                return images

        class CycleGAN:
            def __init__(self, netG_A, netD_A, device="cuda"):
                self.netG_A = netG_A.to(device)
                self.netD_A = netD_A.to(device)
                self.pool = ImagePool(50)
                self.optimizer_G = torch.optim.Adam(netG_A.parameters(), lr=2e-4)

            def optimize_parameters(self, real_A):
                fake_B = self.netG_A(real_A)
                pooled = self.pool.query({fed})
                loss = self.netD_A(fake_B).mean() + self.netD_A(pooled).mean()
                self.optimizer_G.zero_grad()
                loss.backward()
                self.optimizer_G.step()
    """
    assert [(line, code) for line, code in findings(source.format(fed="fake_B"))] == [(22, "ML101")]
    assert findings(source.format(fed="fake_B.detach()")) == []


# Every rank of a DDP program loads a checkpoint without map_location (ML203, unless the project's
# savers write CPU state).
_RANK_LOADS_A_CHECKPOINT = """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    def main(model, path, local_rank):
        dist.init_process_group("nccl")
        torch.cuda.set_device(local_rank)
        model.load_state_dict(torch.load(path))
        model = DDP(model.cuda(), device_ids=[local_rank])
        return model
"""


@pytest.mark.parametrize("saved, severity", [
    ("examples", "warning"),  # a dataset cache: no evidence the checkpoints hold GPU tensors
    ("{'examples': examples, 'vocab': vocab}", "warning"),
    ("model.state_dict()", "error"),
    ("{'model': model.module.state_dict(), 'epoch': epoch}", "error"),
    ("model", "error"),
])
def test_4_every_rank_loads_onto_cuda0_is_an_error_when_the_project_saves_gpu_state(tmp_path, saved, severity):
    """Every rank's ``torch.load`` without ``map_location`` is an error when the project writes
    a model's or an optimizer's state from the GPU (in another module here); a project that
    saves only other things (a dataset cache) gives no evidence of what the loaded file holds: a
    warning."""
    saver = f"""
        import torch
        from torch import nn

        def save(model: nn.Module, examples, vocab, epoch, path):
            torch.save({saved}, path)
    """
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/train.py": _RANK_LOADS_A_CHECKPOINT,
                     "pkg/io.py": saver})
    result = check_paths([str(tmp_path / "pkg/train.py")], Config(), use_cache=False)
    assert [(f.code, f.severity) for f in result.findings if f.code == "ML203"] == [("ML203", severity)]


def test_4_checkpoints_the_project_writes_from_the_cpu(tmp_path):
    """Every ``torch.save`` of the project writes state moved to the CPU (a dict of ``v.cpu()``, or
    a model moved with ``model.cpu()`` first, in another module): a rank's ``torch.load`` of them
    restores CPU tensors, so ML203 stays quiet. One saver of the project writing the model's own
    state (device tensors, as far as can be told) brings the finding back."""
    loader = _RANK_LOADS_A_CHECKPOINT
    saver = """
        import torch

        def save_state(model, path):
            state = {k: v.cpu() for k, v in model.state_dict().items()}
            torch.save(state, path)

        def save_model(model, path):
            device = next(model.parameters()).device
            model.cpu()
            torch.save(model.state_dict(), path)
            model.to(device)

        def save_network(network, path, gpu_ids):
            torch.save(network.cpu().state_dict(), path)
            if gpu_ids:
                network.cuda(gpu_ids[0])

        class Features(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(3, 8, 3)

        def convert(weights, path):
            features = Features()
            features.conv.weight.data.copy_(weights)
            torch.save(features.state_dict(), path)
    """
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/train.py": loader, "pkg/io.py": saver})
    assert [code for _, code in project_findings(tmp_path, "pkg/train.py") if code == "ML203"] == []
    # a module the project cannot parse, whose text never reaches torch.save, changes nothing
    write(tmp_path, {"pkg/broken.py": "def save_results(x):\n    if x:\n    return x\n"})
    assert [code for _, code in project_findings(tmp_path, "pkg/train.py") if code == "ML203"] == []
    # a module built on the CPU but moved before it is saved writes device tensors
    write(tmp_path, {"pkg/io2.py": saver.replace("features = Features()", "features = Features()\n            features.cuda()")})
    assert [code for _, code in project_findings(tmp_path, "pkg/train.py") if code == "ML203"] == ["ML203"]
    (tmp_path / "pkg/io2.py").unlink()
    write(tmp_path, {"pkg/broken.py": "import torch\ndef save_results(x):\n    if x:\n    torch.save(x, 'p')\n"})
    assert [code for _, code in project_findings(tmp_path, "pkg/train.py") if code == "ML203"] == ["ML203"]
    (tmp_path / "pkg/broken.py").unlink()
    write(tmp_path, {"pkg/io.py": saver + "\n        def save_raw(model, path):\n            torch.save(model.state_dict(), path)\n"})
    compile((tmp_path / "pkg/io.py").read_text(), "io.py", "exec")
    assert [code for _, code in project_findings(tmp_path, "pkg/train.py") if code == "ML203"] == ["ML203"]


@pytest.mark.parametrize("weights, quiet", [
    ("OrderedDict([[k.split('module.')[-1], v.cpu()] for k, v in state_dict.items()])", True),
    ("dict((k, v.cpu()) for k, v in state_dict.items())", True),
    ("OrderedDict([[k.split('module.')[-1], v] for k, v in state_dict.items()])", False),
])
def test_4_checkpoints_written_as_pairs_moved_to_the_cpu(tmp_path, weights, quiet):
    """A state dict rebuilt from (key, value) pairs whose values are moved to the CPU
    (``OrderedDict([[k, v.cpu()] for k, v in state_dict.items()])``) is CPU state: a rank's load
    of it restores no device tensor. The same pairs without ``.cpu()`` are the model's own."""
    saver = f"""
        from collections import OrderedDict
        import torch

        def save_model(model, path):
            state_dict = model.state_dict()
            weights = {weights}
            torch.save(weights, path)
    """
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/train.py": _RANK_LOADS_A_CHECKPOINT,
                     "pkg/io.py": saver})
    expected = [] if quiet else ["ML203"]
    assert [code for _, code in project_findings(tmp_path, "pkg/train.py") if code == "ML203"] == expected


def test_3_a_sampling_loop_over_timesteps_it_made_hands_its_sequence_back():
    """A sampler that walks timesteps it makes (``steps = (1 + torch.arange(0, T, k)).flip(0)``),
    runs a helper of the file that runs the model, and returns every step's log-probabilities to
    its caller builds one episode's sequence, like a ``for t in range(T)`` decoder: not an
    accumulation (ML101 quiet)."""
    source = """
        import torch

        class Sampler:
            def __init__(self, num_timesteps):
                self.num_timesteps = num_timesteps
                self.history = []

            def sample_with_logprob(self, xt, t, model):
                out = model(xt, t)
                return out, torch.log_softmax(out, -1)

            def sample_loop(self, noise, model, ddim_timesteps=20):
                xt = noise
                all_log_probs = []
                steps = (1 + torch.arange(0, self.num_timesteps, self.num_timesteps // ddim_timesteps)).flip(0)
                for step in steps:
                    t = torch.full((noise.size(0),), step, dtype=torch.long)
                    xt, log_prob = self.sample_with_logprob(xt, t, model)
                    {keep}
                return xt, all_log_probs
    """
    assert [code for _, code in findings(source.format(keep="all_log_probs.append(log_prob)")) if code == "ML101"] == []


def test_4_accelerate_sets_each_process_s_device():
    """Building an ``Accelerator`` (or accelerate's ``PartialState``) sets each process's CUDA
    device, as ``accelerate launch`` runs one process per GPU: a process group started afterwards
    for a labelling pass opens no context on GPU 0 (ML301 quiet). Without it, reported."""
    source = """
        import torch
        import torch.distributed as dist
        from accelerate import Accelerator

        def label(samples, model):
            {build}
            if not dist.is_initialized():
                dist.init_process_group(backend="nccl")
            model = model.cuda()
            return [model(x.cuda()) for x in samples]
    """
    assert [code for _, code in findings(source.format(build="accelerator = Accelerator()"))] == []
    assert [code for _, code in findings(source.format(build="accelerator = None"))] == ["ML301"]


def test_6_a_collate_function_only_main_process_loaders_run():
    """A ``collate_fn`` that moves the batch with ``.cuda()`` runs in the main process when every
    DataLoader of the module handed it starts no workers (no ``num_workers``): no worker opens a
    CUDA context (ML204 quiet). With ``num_workers=4`` it is reported."""
    source = """
        import torch

        def collate_fn(data):
            seqs = torch.stack([d[0] for d in data])
            labels = torch.tensor([d[1] for d in data])
            if torch.cuda.is_available():
                seqs = seqs.cuda()
                labels = labels.cuda()
            return seqs, labels

        def get_loader(dataset, batch_size):
            return torch.utils.data.DataLoader(dataset=dataset, batch_size=batch_size, collate_fn=collate_fn{workers})
    """
    assert [code for _, code in findings(source.format(workers=""))] == []
    assert [code for _, code in findings(source.format(workers=", num_workers=4"))] == ["ML204", "ML204"]


def test_2_a_criterion_class_wrapping_a_torch_criterion_handed_to_it(tmp_path):
    """A class that stores the object handed to its ``__init__`` and calls it (``FocalLoss(loss_fcn)``)
    holds only what it was given: wrapped around ``nn.BCEWithLogitsLoss`` it is a criterion, and
    what it is fed decides (ML201 quiet; the loss goes back to a caller that backpropagates it).
    The same kind of class wrapped around a pretrained network is a frozen model run with grad
    on: reported."""
    write(tmp_path, {
        ".git/HEAD": "ref: refs/heads/main\n",
        "criteria.py": """
            import torch
            import torch.nn as nn
            import torchvision

            class FocalLoss(nn.Module):
                def __init__(self, loss_fcn, gamma=1.5):
                    super().__init__()
                    self.loss_fcn = loss_fcn
                    self.gamma = gamma
                    self.reduction = loss_fcn.reduction
                    self.loss_fcn.reduction = "none"

                def forward(self, pred, true):
                    loss = self.loss_fcn(pred, true)
                    p = torch.sigmoid(pred)
                    return (loss * (1.0 - p) ** self.gamma).mean()

            def compute_loss(p, targets, model):
                device = targets.device
                lcls, lobj = torch.zeros(1, device=device), torch.zeros(1, device=device)
                h = model.hyp
                BCEcls = nn.BCEWithLogitsLoss(pos_weight=torch.Tensor([h["cls_pw"]])).to(device)
                BCEobj = nn.BCEWithLogitsLoss(pos_weight=torch.Tensor([h["obj_pw"]])).to(device)
                g = h["fl_gamma"]
                if g > 0:
                    BCEcls, BCEobj = FocalLoss(BCEcls, g), FocalLoss(BCEobj, g)
                for i, pi in enumerate(p):
                    tobj = torch.zeros_like(pi[..., 0], device=device)
                    lcls += BCEcls(pi[..., 5:], targets)
                    lobj += BCEobj(pi[..., 4], tobj)
                loss = lobj + lcls
                return loss, torch.cat((lobj, lcls, loss)).detach()

            def feature_distance(loader):
                net = FocalLoss(torchvision.models.resnet18(pretrained=True))
                kept = []
                for x, y in loader:
                    kept.append(net(x, y))
                return kept
        """,
        "train.py": """
            from criteria import compute_loss, feature_distance

            def train(model, loader, optimizer):
                for imgs, targets in loader:
                    loss, items = compute_loss(model(imgs), targets, model)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                return feature_distance(loader)
        """,
    })
    assert [f for f in project_findings(tmp_path, "criteria.py") if f[1] == "ML201"] == [(38, "ML201")]


def test_2_a_network_its_constructor_freezes_handed_down_through_parameters(tmp_path):
    """pytorch-fid's ``InceptionV3`` freezes every parameter in ``__init__`` unless built with
    ``requires_grad=True``: built with the default and handed through two functions' parameters
    to the one that runs it in eval mode, its forward on data records no graph (ML201 quiet).
    Built with ``requires_grad=True``, the same forward keeps activations: reported. So is the
    default one when another module importing this one may hand ``get_activations`` another model."""
    write(tmp_path, {
        ".git/HEAD": "ref: refs/heads/main\n",
        "inception.py": """
            import torch.nn as nn

            class InceptionV3(nn.Module):
                def __init__(self, output_blocks, resize_input=True, requires_grad=False):
                    super().__init__()
                    self.blocks = nn.ModuleList([nn.Conv2d(3, 8, 3) for _ in output_blocks])
                    for param in self.parameters():
                        param.requires_grad = requires_grad

                def forward(self, x):
                    return [block(x) for block in self.blocks]
        """,
        "fid_score.py": """
            import numpy as np
            import torch
            from inception import InceptionV3

            def get_activations(images, model, batch_size=50):
                model.eval()
                pred_arr = []
                for start in range(0, len(images), batch_size):
                    batch = torch.from_numpy(images[start:start + batch_size]).cuda()
                    pred = model(batch)[0]
                    pred_arr.append(pred.cpu().data.numpy().reshape(batch_size, -1))
                return np.concatenate(pred_arr)

            def activation_statistics(images, model):
                act = get_activations(images, model)
                return np.mean(act, axis=0), np.cov(act, rowvar=False)

            def fid_given_paths(first, second):
                model = InceptionV3([3]{grad})
                model.cuda()
                m1, s1 = activation_statistics(np.load(first), model)
                m2, s2 = activation_statistics(np.load(second), model)
                return float(((m1 - m2) ** 2).sum())
        """,
    })
    # another file with a function of the same name (TensorFlow's copy) does not call this one
    write(tmp_path, {"tf_fid.py": "def get_activations(images, sess):\n    return sess.run(images)\n"})
    text = (tmp_path / "fid_score.py").read_text()
    (tmp_path / "fid_score.py").write_text(text.replace("{grad}", ""))
    assert [f for f in project_findings(tmp_path, "fid_score.py") if f[1] == "ML201"] == []
    (tmp_path / "fid_score.py").write_text(text.replace("{grad}", ", requires_grad=True"))
    assert [f for f in project_findings(tmp_path, "fid_score.py") if f[1] == "ML201"] == [(10, "ML201")]
    (tmp_path / "fid_score.py").write_text(text.replace("{grad}", ""))
    write(tmp_path, {"features.py": "import fid_score\n\ndef features(images, net):\n"
                                    "    return fid_score.get_activations(images, net)\n"})
    assert [f for f in project_findings(tmp_path, "fid_score.py") if f[1] == "ML201"] == [(10, "ML201")]


def test_3_an_attribute_made_a_fresh_list_earlier_in_the_same_call():
    """``self.transition = []`` a line before ``self.transition.extend([log_prob, value])`` in the
    same call (in the branch that trains): the list holds this call's values only, and the update backpropagates them before
    the next call makes another (ML101 quiet). The same extend with the list made fresh only in
    ``__init__`` keeps every call's graphs: reported."""
    source = """
        import torch

        class A2CAgent:
            def __init__(self, actor, critic, optimizer):
                self.actor, self.critic, self.optimizer = actor, critic, optimizer
                self.is_test = False
                self.transition = []

            def select_action(self, state):
                action, dist = self.actor(state)
                if self.is_test:
                    action = dist.mean
                else:
                    value = self.critic(state)
                    log_prob = dist.log_prob(action).sum(dim=-1)
                    {reset}
                    self.transition.extend([log_prob, value])
                return action

            def step(self, env, action):
                next_state, reward, done, info = env.step(action.detach().cpu().numpy())
                if not self.is_test:
                    self.transition.extend([next_state, reward, done])
                return next_state, reward, done

            def train(self, env, learner, episodes):
                for episode in range(episodes):
                    state, done = env.reset(), False
                    while not done:
                        action = self.select_action(torch.as_tensor(state))
                        state, reward, done = self.step(env, action)
                        policy_loss, value_loss = learner.update_model(self.transition)
    """
    assert [code for _, code in findings(source.format(reset="self.transition = []"))] == []
    assert [code for _, code in findings(source.format(reset="pass"))] == ["ML101"]


def test_4_a_reference_model_frozen_by_a_method_of_another_module(tmp_path):
    """``self.ref_model.freeze_all()``, where every ``freeze_all`` the project defines (in the
    network's module) sets ``requires_grad = False`` on each of its own parameters: the frozen
    reference model records no graph on images that need none (ML201 quiet). A project whose
    ``freeze_all`` freezes only the backbone, or does nothing to gradients, brings it back."""
    network = """
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = nn.Linear(8, 8)
                self.head = nn.Linear(8, 2)

            def forward(self, x):
                return self.head(self.backbone(x))

            def freeze_all(self):
                for param in self.{params}():
                    param.requires_grad = False
    """
    approach = """
        import copy
        import torch

        class Approach:
            def __init__(self, model, device):
                self.model = model
                self.device = device
                self.ref_model = None
                self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

            def post_train_process(self):
                self.ref_model = copy.deepcopy(self.model)
                self.ref_model.eval()
                self.ref_model.freeze_all()

            def train_epoch(self, loader):
                self.model.train()
                for images, targets in loader:
                    images = images.to(self.device)
                    outputs = self.model(images)
                    ref_outputs = self.ref_model(images)
                    loss = torch.nn.functional.mse_loss(outputs, ref_outputs) + outputs.sum()
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
    """

    def ml201(params: str) -> list[int]:
        write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/network.py": network.format(params=params),
                         "pkg/approach.py": approach})
        return [line for line, code in project_findings(tmp_path, "pkg/approach.py") if code == "ML201"]

    assert ml201("parameters") == []
    assert ml201("backbone.parameters") == [21]


_EVALUATE_WITH_RANKS = """
import torch
import torch.distributed as dist


def evaluate(net, path):
    dist.init_process_group("nccl")
    net.load_state_dict(torch.load(path))
    return net
"""


def test_ml203_checkpoints_written_by_the_scripts_beside_the_loader_hold_cpu_state(tmp_path):
    """``net.cpu()`` then ``state = net.module.state_dict() if hasattr(net, "module") else
    net.state_dict()`` saves CPU tensors; when the scripts in the loader's folder save only such
    state, the checkpoint every rank loads is not on cuda:0, even if another part of the project
    saves device state."""
    write(tmp_path, {
        "pyproject.toml": "",
        "old/evaluate.py": _EVALUATE_WITH_RANKS,
        "old/train.py": """
            import torch

            def train(net, path):
                net.cpu()
                state = net.module.state_dict() if hasattr(net, "module") else net.state_dict()
                torch.save(state, path)
        """,
        "tools/train.py": """
            import torch

            def train(net, path):
                torch.save(net.state_dict(), path)
        """,
    })
    assert project_findings(tmp_path, "old/evaluate.py") == []
    # near miss: the script beside it saves the state where the model is (the GPU)
    (tmp_path / "old" / "train.py").write_text(
        "import torch\n\ndef train(net, path):\n    torch.save(net.state_dict(), path)\n")
    assert project_findings(tmp_path, "old/evaluate.py") == [(7, "ML203")]


_RECURRENT_ACTOR = """
import torch
from torch import nn


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor_rnn_hidden = None
        self.fc = nn.Linear(4, 8)
        self.actor_rnn = nn.GRU(8, 8, batch_first=True)

    def actor(self, s):
        output, self.actor_rnn_hidden = self.actor_rnn(self.fc(s), self.actor_rnn_hidden)
        return output


class PPO:
    def __init__(self):
        self.ac = ActorCritic()
        self.optimizer = torch.optim.Adam(self.ac.parameters())

    def reset_rnn_hidden(self):
        self.ac.actor_rnn_hidden = None

    def train(self, batches):
        for s, a in batches:
            self.reset_rnn_hidden()
            loss = self.ac.actor(s).sum()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
"""


def test_recurrent_state_reset_through_the_object_that_holds_the_module_is_cut():
    """``self.ac.actor_rnn_hidden = None`` in the agent resets the actor's state (an attribute
    of an object the agent holds, not of the agent itself)."""
    assert [code for _, code in findings(_RECURRENT_ACTOR) if code == "ML102"] == []
    kept = _RECURRENT_ACTOR.replace("        self.ac.actor_rnn_hidden = None\n", "        pass\n")
    assert [code for _, code in findings(kept) if code == "ML102"] == ["ML102"]


_DEVICE_COMPARED = """
import torch
from torch.nn import DataParallel


class Runner:
    def __init__(self, n_gpu, name):
        self.n_gpu = n_gpu
        self.device = torch.device(name)

    def build(self, net):
        if self.n_gpu > 1 and self.device == 'cuda':
            net = DataParallel(net)
        return net.to(self.device)


def build(net, n_gpu):
    device = torch.device("cuda")
    if device == "cuda" and n_gpu > 1:
        net = DataParallel(net)
    return net
"""


def test_a_torch_device_compared_with_a_string_never_matches():
    """``torch.device("cuda") == "cuda"`` is False: a branch behind it never runs, for a local bound
    once to a ``torch.device`` and for ``self.device`` that every method sets to one. A string
    device, ``device.type == "cuda"``, or an attribute also set to a string still run."""
    assert [code for _, code in findings(_DEVICE_COMPARED) if code == "ML206"] == []
    as_text = _DEVICE_COMPARED.replace('device = torch.device("cuda")', 'device = "cuda"')
    assert [line for line, code in findings(as_text) if code == "ML206"] == [20]
    by_type = _DEVICE_COMPARED.replace("self.device == 'cuda'", "self.device.type == 'cuda'")
    assert [line for line, code in findings(by_type) if code == "ML206"] == [13]
    also_text = _DEVICE_COMPARED.replace("        return net.to(self.device)\n",
                                         "        self.device = 'cuda'\n        return net.to(self.device)\n")
    assert [line for line, code in findings(also_text) if code == "ML206"] == [13]


def test_a_loss_without_parameters_wrapped_in_data_parallel_is_not_flagged(tmp_path):
    """``nn.DataParallel(emdModule().cuda())`` of a loss class (another module of the project) that
    makes no parameter: it spreads the loss's work over the GPUs; no weights are replicated, no
    gradients gathered. The same wrapper around a class that makes a layer is flagged."""
    write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'x'\n",
        "losses.py": """
            import torch
            from torch import nn
            class emdModule(nn.Module):
                def __init__(self, eps=0.005):
                    super().__init__()
                    self.eps = eps
                def forward(self, a, b):
                    return torch.cdist(a, b).min(-1).values.mean()
            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(3, 3)
                def forward(self, a, b):
                    return (self.fc(a) - b).pow(2).mean()
        """,
        "loss_util.py": """
            import torch
            from losses import emdModule, Head
            class Completionloss:
                def __init__(self):
                    self.emd = torch.nn.DataParallel(emdModule().cuda()).cuda()
                def __call__(self, pred, gt):
                    return self.emd(pred, gt).mean()
        """,
    })
    assert [code for _, code in project_findings(tmp_path, "loss_util.py") if code == "ML206"] == []
    text = (tmp_path / "loss_util.py").read_text().replace("DataParallel(emdModule()", "DataParallel(Head()")
    (tmp_path / "loss_util.py").write_text(text)
    assert [line for line, code in project_findings(tmp_path, "loss_util.py") if code == "ML206"] == [5]


_NAN_PATH = """
import torch


class Trainer:
    def _train_epoch(self, loader):
        total = None
        for x in loader:
            loss = self.model(x).mean()
            if torch.isnan(loss):
                return loss, None
            loss.backward()
            total = loss.item() if total is None else total + loss.item()
        return total, None

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            train_loss, _ = self._train_epoch(loader)
            if torch.is_tensor(train_loss):
                break
            self.history[epoch] = train_loss
"""


def test_a_tensor_guard_that_leaves_narrows_the_value_to_no_tensor():
    """``if torch.is_tensor(train_loss): break`` (the NaN path hands back the loss): after it,
    ``train_loss`` is a number. Without the guard the kept loss is reported."""
    assert [code for _, code in findings(_NAN_PATH) if code == "ML101"] == []
    unguarded = _NAN_PATH.replace("            if torch.is_tensor(train_loss):\n                break\n", "")
    assert [line for line, code in findings(unguarded) if code == "ML101"] == [19]
    not_leaving = _NAN_PATH.replace("                break\n", "                print('nan')\n")
    assert [line for line, code in findings(not_leaving) if code == "ML101"] == [21]


_OTHER_SLOTS = """
import torch


class Trainer:
    def run_training_batch(self, batch):
        all_log_metrics = []
        task = self.get_task()
        for opt_idx, optimizer in enumerate(self.optimizers):
            output = task.training_step(batch, opt_idx)
            loss = output['loss']
            log_metrics = output['tb_log']
            loss = loss / self.accumulate_grad_batches
            loss.backward()
            optimizer.step()
            all_log_metrics.append(log_metrics)
        return all_log_metrics

    def train(self, loader):
        for batch in loader:
            self.run_training_batch(batch)
"""


def test_other_slots_of_an_output_backpropagated_by_one_slot_are_not_evidence():
    """``loss = output['loss']; loss = loss / k; loss.backward()``: only that slot is shown to
    carry a graph; ``log_metrics = output['tb_log']`` (through a name) is not. The slot that is
    backpropagated, kept per step, is reported."""
    assert [code for _, code in findings(_OTHER_SLOTS) if code == "ML101"] == []
    # (kept on the object across steps: a list local to the call holds one step's, one per optimizer)
    same_slot = _OTHER_SLOTS.replace("log_metrics = output['tb_log']", "log_metrics = output['loss']").replace(
        "        all_log_metrics = []\n", "").replace("all_log_metrics.append", "self.all_log_metrics.append").replace(
        "return all_log_metrics", "return self.all_log_metrics")
    assert [line for line, code in findings(same_slot) if code == "ML101"] == [15]


_DRY_RUN = """
import torch


def build(loader, device):
    base_net = torch.nn.Sequential(torch.nn.LazyLinear(64), torch.nn.ReLU(), torch.nn.LazyLinear(10))
    # run a dummy batch to initialise the lazy modules
    for batch in loader:
        base_net.forward(batch[0])
        break
    return base_net.to(device)


def train(model, loader, optimizer):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_a_loop_that_breaks_after_its_first_iteration_runs_once():
    """``for batch in loader: net(batch); break``: a dry run on one batch (lazy modules), not a
    pass over the data. Without the ``break`` (or with a ``continue`` that can skip it) it is one."""
    assert [code for _, code in findings(_DRY_RUN) if code == "ML201"] == []
    whole = _DRY_RUN.replace("        break\n", "")
    assert [line for line, code in findings(whole) if code == "ML201"] == [9]
    skipping = _DRY_RUN.replace("    for batch in loader:\n", "    for batch in loader:\n        if batch is None:\n"
                                "            continue\n")
    assert [line for line, code in findings(skipping) if code == "ML201"] == [11]


_LOSS_TO_NUMBER = """
import numpy as np
import torch


def train(model, optimizer, loss_fn, train_loader, params):
    loss_epoch = np.zeros(len(train_loader))
    for i, (train_batch, labels_batch) in enumerate(train_loader):
        optimizer.zero_grad()
        loss = torch.zeros(1, device=params.device)
        for t in range(params.train_window):
            mu, sigma = model(train_batch[t])
            loss += loss_fn(mu, sigma, labels_batch[t])
        loss.backward()
        optimizer.step()
        loss = loss.item() / params.train_window
        loss_epoch[i] = loss
    return loss_epoch
"""


def test_a_name_rebound_to_its_own_value_as_a_number_carries_no_graph():
    """``loss = loss.item() / params.train_window`` after ``loss.backward()``: the name now holds
    a number, however unknown the divisor; storing it keeps nothing. Rebound to the tensor
    itself, scaled, it is reported."""
    assert [code for _, code in findings(_LOSS_TO_NUMBER) if code == "ML101"] == []
    # kept in a dict (a numpy array would convert it to a number)
    scaled = _LOSS_TO_NUMBER.replace("loss.item() / params.train_window", "loss / params.train_window") \
        .replace("np.zeros(len(train_loader))", "{}")
    assert [line for line, code in findings(scaled) if code == "ML101"] == [17]


_ABSTRACT_FORWARD = """
import abc

import torch
import torch.nn.functional as F
from torch import nn


class ContinualLearner(nn.Module, metaclass=abc.ABCMeta):
    @abc.abstractmethod
    def forward(self, x):
        pass

    def estimate_fisher(self, data_loader):
        est = {n: p.detach().clone().zero_() for n, p in self.named_parameters()}
        self.eval()
        for x, y in data_loader:
            output = self(x)
            for label_index in range(output.shape[1]):
                nll = F.cross_entropy(output, torch.LongTensor([label_index]))
                self.zero_grad()
                nll.backward(retain_graph=label_index + 1 < output.shape[1])
                for n, p in self.named_parameters():
                    est[n] += p.grad.detach() ** 2
        self.train()
        return est
"""


def test_an_abstract_forward_says_nothing_of_what_a_module_call_returns():
    """``self(x)`` in a base class whose ``forward`` is abstract runs a subclass's forward: its
    output carries a graph (the Fisher estimate backpropagates it), not the stub's None. ML201
    (eval mode, grad on) stays quiet because the output is backpropagated."""
    assert [code for _, code in findings(_ABSTRACT_FORWARD) if code == "ML201"] == []
    unused = _ABSTRACT_FORWARD.replace("                nll.backward(retain_graph=label_index + 1 < output.shape[1])\n", "")
    unused = unused.replace("                    est[n] += p.grad.detach() ** 2\n", "                    est[n] += nll.item()\n")
    assert [line for line, code in findings(unused) if code == "ML201"] == [18]


_TRUE_OR = """
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.candidate_k_cache = None

    def forward(self, x, candidate_x, is_train):
        if True or is_train or self.candidate_k_cache is None:
            candidate_k = self.enc(candidate_x)
            self.candidate_k_cache = candidate_k
        else:
            candidate_k = self.candidate_k_cache
        k = self.enc(x)
        if is_train:
            candidate_k = torch.cat([k, candidate_k])
        return k @ candidate_k.T
"""


def test_a_literal_that_decides_by_short_circuit_and_a_local_rebound_by_a_join():
    """``if True or is_train ...:`` always takes its body (Python stops at ``True``): the ``else``
    that reads the cached encoding never runs. Without the literal, the cached value is joined
    into a local (``candidate_k = torch.cat([k, candidate_k])``): a new tensor bound to the
    local, the attribute unchanged, dropped when forward returns. Stored back into the attribute,
    the join grows on every call, and that is reported."""
    assert [code for _, code in findings(_TRUE_OR) if code == "ML101"] == []
    cached = _TRUE_OR.replace("if True or is_train or", "if is_train or")
    assert [code for _, code in findings(cached) if code == "ML101"] == []
    kept = cached.replace("            candidate_k = torch.cat([k, candidate_k])\n",
                          "            self.candidate_k_cache = torch.cat([k, self.candidate_k_cache])\n")
    assert [line for line, code in findings(kept) if code == "ML101"] == [20]


_CONFIG_GLOBAL = """
import argparse

import torch
from tqdm import tqdm


def criterion(out_1, out_2, tau_plus, batch_size):
    out = torch.cat([out_1, out_2], dim=0)
    N = batch_size * 2 - 2
    return (out.sum() / N).mean()


def train(net, data_loader, train_optimizer):
    net.train()
    total_loss, total_num, train_bar = 0.0, 0, tqdm(data_loader)
    for pos_1, pos_2, target in train_bar:
        feature_1, out_1 = net(pos_1)
        feature_2, out_2 = net(pos_2)
        loss = criterion(out_1, out_2, tau_plus, batch_size)
        train_optimizer.zero_grad()
        loss.backward()
        train_optimizer.step()
        total_num += batch_size
        total_loss += loss.item() * batch_size
    return total_loss / total_num


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", default=256, type=int)
    args = parser.parse_args()
    tau_plus = args.tau_plus
    batch_size, epochs = args.batch_size, args.epochs
"""


def test_a_global_read_from_the_command_line_carries_no_graph():
    """``batch_size, epochs = args.batch_size, args.epochs`` under ``__main__`` (walked after the
    functions that read it): a number the loss is computed with, not a graph, so counting it per
    step keeps nothing. Bound to a parameter instead, what is counted carries its graph."""
    assert [code for _, code in findings(_CONFIG_GLOBAL) if code == "ML101"] == []
    scale = _CONFIG_GLOBAL.replace("batch_size, epochs = args.batch_size, args.epochs",
                                   "batch_size, epochs = torch.nn.Parameter(torch.ones(())), args.epochs")
    assert [line for line, code in findings(scale) if code == "ML101"] == [24, 25]


_ROWS_OF_ONE_STEP = """
import torch
from torch import nn


class Conv(nn.Module):
    def __init__(self, sk, rm):
        super().__init__()
        self.model_sk = sk
        self.model_rm = rm

    def generate(self, roles, context, n):
        generated_response = []
        former = None
        hidden_all = []
        for i in range(n):
            hidden_all = []
            context_iters = context.unsqueeze(1)
            for turn, it in enumerate(context_iters):
                outputs = self.model_sk(it, former) if roles[turn] == 0 else self.model_rm(it, former)
                last, former = outputs.logits, outputs.past_key_values
                hidden_all.append(last)
            preds = torch.cat(hidden_all, dim=0)[:, -1, :].argmax(dim=-1)
            context = preds.unsqueeze(1)
            generated_response.append(preds)
        return torch.stack(generated_response, dim=1)
"""


def test_a_loop_over_the_rows_of_one_tensor_runs_no_steps():
    """``for turn, it in enumerate(context.unsqueeze(1))`` (through a local): the rows of one
    decoding step's input, one per batch item; a list emptied at every decoding step holds one
    step's outputs. Over a loader the parameter hands in, the inner loop runs steps, and the list
    kept through it is reported."""
    assert [code for _, code in findings(_ROWS_OF_ONE_STEP) if code == "ML101"] == []
    batches = _ROWS_OF_ONE_STEP.replace("enumerate(context_iters)", "enumerate(loader)").replace(
        "def generate(self, roles, context, n):", "def generate(self, roles, context, n, loader):")
    assert [line for line, code in findings(batches) if code == "ML101"] == [22]


def test_a_state_dict_whose_slots_are_moved_to_the_cpu_one_by_one_is_a_cpu_save(tmp_path):
    """``for key in state.keys(): state[key] = state[key].cpu()`` before ``torch.save(state, ...)``
    (the project's only saver): its checkpoints hold CPU tensors, so a rank's load without
    ``map_location`` puts nothing on GPU 0. Without the loop the load is reported."""
    loader = _RANK_LOADS_A_CHECKPOINT
    saver = """
        import torch

        def save_model(model, filename):
            model_state = model.state_dict()
            for key in model_state.keys():  # always save it to the CPU
                model_state[key] = model_state[key].cpu()
            torch.save(model_state, filename)
    """
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/train.py": loader, "pkg/io.py": saver})
    assert [code for _, code in project_findings(tmp_path, "pkg/train.py") if code == "ML203"] == []
    write(tmp_path, {"pkg/io.py": saver.replace("model_state[key] = model_state[key].cpu()", "pass")})
    assert [code for _, code in project_findings(tmp_path, "pkg/train.py") if code == "ML203"] == ["ML203"]


def test_a_state_dict_whose_items_are_moved_to_the_cpu_one_by_one_is_a_cpu_save(tmp_path):
    """``for key, param in state.items(): state[key] = param.cpu()`` (BasicSR's ``save_network``)."""
    saver = """
        import torch

        def save_network(net, path):
            state_dict = net.state_dict()
            for key, param in state_dict.items():
                state_dict[key] = param.cpu()
            torch.save(state_dict, path)
    """
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/train.py": _RANK_LOADS_A_CHECKPOINT,
                     "pkg/io.py": saver})
    assert [code for _, code in project_findings(tmp_path, "pkg/train.py") if code == "ML203"] == []
    write(tmp_path, {"pkg/io.py": saver.replace("state_dict[key] = param.cpu()", "state_dict[key] = param")})
    assert [code for _, code in project_findings(tmp_path, "pkg/train.py") if code == "ML203"] == ["ML203"]

# ----- code that raises before the flagged line runs ---------------------------------------------
def test_a_name_bound_nowhere_stops_the_rest_of_its_block(tmp_path):
    """``os.listdir(sw_path)`` with ``sw_path`` defined nowhere raises NameError: the load after it
    in the same branch never runs. After a name that is bound, or one read only on a path that
    may not be taken (``'runs' or sw_path``), it is still reported."""
    template = """
        import os
        import torch
        from model import Net

        model = Net().cuda()
        if os.environ.get("RESUME"):
            {first}
            saved = [name for name in os.listdir({folder}) if name.endswith(".ckpt")]
            {last}
            model.load_state_dict(state["model"])
    """
    load = 'state = torch.load("last.ckpt")'

    def found(**parts) -> list[tuple[int, str]]:
        write(tmp_path, {"model.py": "from torch import nn\n\nclass Net(nn.Module):\n    pass\n",
                         "train.py": template.format(**parts)})
        return project_findings(tmp_path, "train.py")

    assert found(first="pass", folder="sw_path", last=load) == []
    assert found(first="sw_path = 'runs'", folder="sw_path", last=load) == [(9, "ML203")]
    # a name only a branch reads (``a or sw_path``) is no certain NameError
    assert found(first="pass", folder="'runs' or sw_path", last=load) == [(9, "ML203")]
    # a file joined to no other module of a project (a snippet, a script being written): not read
    assert findings(template.format(first="pass", folder="sw_path", last=load)) == [(10, "ML203")]


def test_a_star_import_of_the_project_is_read_for_the_names_it_brings(tmp_path):
    """``from utils import *`` of a project module that binds ``sw_path``: no NameError; of one that
    does not: the rest of the block never runs; of a module outside the project: unknown."""
    main = """
        import os
        import torch
        from utils import *

        model = make_model().cuda()
        if os.environ.get("RESUME"):
            saved = os.listdir(sw_path)
            state = torch.load(os.path.join(sw_path, saved[-1]))
            model.load_state_dict(state)
    """
    write(tmp_path, {"train.py": main, "utils.py": "def make_model():\n    pass\n"})
    assert project_findings(tmp_path, "train.py") == []
    write(tmp_path, {"utils.py": "sw_path = 'runs'\n\ndef make_model():\n    pass\n"})
    assert project_findings(tmp_path, "train.py") == [(8, "ML203")]
    write(tmp_path, {"utils.py": "from .paths import *\n\ndef make_model():\n    pass\n",
                     "paths.py": "sw_path = 'runs'\n"})
    # ``.paths`` from a module outside any package cannot be resolved: unknown, so reported
    assert project_findings(tmp_path, "train.py") == [(8, "ML203")]
    write(tmp_path, {"train.py": main.replace("from utils import *", "from torchvision.models import *")})
    assert project_findings(tmp_path, "train.py") == [(8, "ML203")]


def test_a_class_whose_init_always_raises_never_runs_its_methods(tmp_path):
    """``GINConv`` imported nowhere (its import commented out): ``__init__`` raises NameError, so no
    instance exists and ``relocate`` never wraps anything; a subclass of it in the module, or the
    import restored, bring the finding back."""
    source = """
        import torch
        from torch import nn
        {import_line}

        class DeepGraphConv(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.conv1 = GINConv(nn.Linear(dim, dim))
                self.head = nn.Linear(dim, 2)

            def relocate(self):
                if torch.cuda.device_count() > 1:
                    self.conv1 = nn.DataParallel(self.conv1, device_ids=list(range(torch.cuda.device_count())))
        {subclass}
    """

    def found(**parts) -> list[tuple[int, str]]:
        write(tmp_path, {"models/__init__.py": "", "models/dgcn.py": source.format(**parts),
                         "main.py": "from models.dgcn import DeepGraphConv\n\nDeepGraphConv(8).relocate()\n"})
        return project_findings(tmp_path, "models/dgcn.py")

    assert found(import_line="# from torch_geometric.nn import GINConv", subclass="") == []
    assert found(import_line="from torch_geometric.nn import GINConv", subclass="") == [(13, "ML206")]
    subclass = ("\n        class Other(DeepGraphConv):\n            def __init__(self):\n"
                "                nn.Module.__init__(self)\n")
    assert found(import_line="# none", subclass=subclass) == [(13, "ML206")]


def test_a_call_that_cannot_fit_its_callee_stops_the_script(tmp_path):
    """``Net()`` whose ``__init__`` calls ``Encoder(num_features, dim)`` without the third argument
    its signature requires raises TypeError: the evaluation after it in the script never runs,
    though another module's ``test`` is named like it. With the argument passed, it is reported."""
    gin = """
        import torch
        from torch import nn

        class Encoder(nn.Module):
            def __init__(self, num_features, dim, num_gc_layers):
                super().__init__()
                self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(num_gc_layers))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = Encoder(8, 16{extra})
                self.fc = nn.Linear(16, 2)

        def test(model, loader):
            model.eval()
            correct = 0
            for data, target in loader:
                output = model(data)
                correct += int((output.argmax(1) == target).sum().item())
            return correct

        if __name__ == "__main__":
            model = Net()
            for epoch in range(10):
                print(test(model, []))
    """
    write(tmp_path, {
        "gin.py": gin.format(extra=""),
        "deepinfomax.py": "from gin import Encoder\n\ndef test():\n    return Encoder\n",
    })
    assert project_findings(tmp_path, "gin.py") == []
    write(tmp_path, {"gin.py": gin.format(extra=", 3")})
    assert project_findings(tmp_path, "gin.py") == [(19, "ML201")]
    # another module that takes ``test`` from gin may run it
    write(tmp_path, {"gin.py": gin.format(extra=""), "run.py": "from gin import test\nprint(test(None, []))\n"})
    assert project_findings(tmp_path, "gin.py") == [(19, "ML201")]


def test_a_module_of_a_package_nothing_imports_never_runs(tmp_path):
    """A ``networks_other.py`` left beside the networks the scripts import: nothing can run what it
    defines. An import of it, a configuration file naming it, a dynamic import anywhere in the
    project, or its own ``__main__`` bring the finding back."""
    write(tmp_path, {
        "train.py": "from module.networks import Net\n\nif __name__ == '__main__':\n    Net()\n",
        "module/__init__.py": "",
        "module/networks.py": "from torch import nn\n\nclass Net(nn.Module):\n    pass\n",
        "module/networks_other.py": """
            from torch import nn

            class ResnetGenerator(nn.Module):
                def __init__(self, gpu_ids):
                    super().__init__()
                    self.model = nn.Linear(4, 4)
                    if gpu_ids:
                        self.model = nn.DataParallel(self.model, gpu_ids)
        """,
    })
    assert project_findings(tmp_path, "module/networks_other.py") == []
    write(tmp_path, {"eval.py": "from module.networks_other import ResnetGenerator\n\nnet = ResnetGenerator([0, 1])\n"})
    assert project_findings(tmp_path, "module/networks_other.py") == [(8, "ML206")]
    (tmp_path / "eval.py").unlink()
    write(tmp_path, {"run.sh": "python -c 'import module.networks_other'\n"})
    assert project_findings(tmp_path, "module/networks_other.py") == [(8, "ML206")]
    (tmp_path / "run.sh").unlink()
    write(tmp_path, {"hub.py": "import importlib\n\ndef load(name):\n    return importlib.import_module(name)\n"})
    assert project_findings(tmp_path, "module/networks_other.py") == [(8, "ML206")]
    (tmp_path / "hub.py").unlink()
    assert project_findings(tmp_path, "module/networks_other.py") == []
    (tmp_path / "pyproject.toml").write_text("")
    assert project_findings(tmp_path, "module/networks_other.py") == [(8, "ML206")]
    # no program outside the package: a library whose packaging files are missing, used elsewhere
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "train.py").unlink()
    write(tmp_path, {"module/cli.py": "from module.networks import Net\n\nif __name__ == '__main__':\n    Net()\n"})
    assert project_findings(tmp_path, "module/networks_other.py") == [(8, "ML206")]


def test_a_call_method_whose_instances_another_module_calls_only_under_no_grad(tmp_path):
    """``RLExtractor.__call__`` runs its network with grad on, but the only instance the project
    makes is a local of ``decode()`` that calls it inside ``with torch.no_grad():``: no graph is
    recorded. Called outside the block, or handed to other code (whose calls are unknown), it is
    reported."""
    decoding = """
        import torch

        class RLExtractor:
            def __init__(self, path):
                self._net = torch.load(path, map_location="cpu")

            def __call__(self, article):
                self._net.eval()
                indices = self._net(article)
                return indices.tolist()
    """
    decode = """
        import torch
        from decoding import RLExtractor

        def decode(path, articles):
            extractor = RLExtractor(path)
            results = []
            {block}
            return results
    """
    inside = "with torch.no_grad():\n                for article in articles:\n                    results.append(extractor(article))"
    outside = "for article in articles:\n                results.append(extractor(article))"
    handed = "with torch.no_grad():\n                results.append(run(extractor, articles))"
    write(tmp_path, {"decoding.py": decoding, "decode.py": decode.format(block=inside)})
    assert project_findings(tmp_path, "decoding.py") == []
    write(tmp_path, {"decode.py": decode.format(block=outside)})
    assert project_findings(tmp_path, "decoding.py") == [(9, "ML201")]
    write(tmp_path, {"decode.py": decode.format(block=handed)})
    assert project_findings(tmp_path, "decoding.py") == [(9, "ML201")]


def test_data_parallel_whose_output_is_backpropagated_as_it_comes_out_computes_the_loss_in_forward():
    """``loss, acc = audio_model(a, v)`` then ``loss.sum().backward()``: the wrapped ``forward``
    computes the loss (what the class does is read from the training code, not from its name), so
    only the replicas' losses are gathered: info about speed. A criterion applied to the output
    outside ``forward`` keeps the warning."""
    source = """
        import torch
        from torch import nn
        from models import CAVMAE

        def train(args, loader):
            audio_model = CAVMAE()
            audio_model = nn.DataParallel(audio_model)
            audio_model = audio_model.cuda()
            optimizer = torch.optim.Adam(audio_model.parameters())
            for a, v, y in loader:
                {step}
                optimizer.zero_grad()
                loss.sum().backward()
                optimizer.step()
    """
    severity = {f.code: f.severity for f in check_source(textwrap.dedent(source.format(
        step="loss, acc = audio_model(a.cuda(), v.cuda())")), "train.py", default_codes())}
    assert severity == {"ML206": "info"}
    severity = {f.code: f.severity for f in check_source(textwrap.dedent(source.format(
        step="out = audio_model(a.cuda(), v.cuda()); loss = nn.functional.cross_entropy(out, y.cuda())")),
        "train.py", default_codes())}
    assert severity == {"ML206": "warning"}


def test_a_branch_behind_a_constructor_flag_no_construction_changes_never_runs(tmp_path):
    """``if self.iter_opt: ... else: loss.backward(retain_graph=True)`` with ``iter_opt=True`` by
    default, stored once by ``__init__``, and the only construction in the repository leaving it
    at that default: the ``else`` branch never runs. A construction passing the flag (by keyword
    or position), another assignment of the attribute, a subclass, or a packaged project (whose
    users construct it elsewhere) bring the finding back."""
    model = """
        import torch

        class Goggle:
            def __init__(self, net, epochs=10, iter_opt=True):
                self.net = net
                self.epochs = epochs
                self.iter_opt = iter_opt
                self.optimiser = torch.optim.Adam(net.parameters())

            def fit(self, loader):
                for data in loader:
                    if self.iter_opt:
                        loss = self.net(data).mean()
                        loss.backward()
                    else:
                        loss = self.net(data).mean()
                        loss.backward(retain_graph=True)
                    self.optimiser.step()
    """
    write(tmp_path, {"goggle.py": model, "main.py": "from goggle import Goggle\n\nGoggle(None, epochs=5).fit([])\n"})
    assert project_findings(tmp_path, "goggle.py") == []
    (tmp_path / "main.py").unlink()
    others = ["from goggle import Goggle\n\nargs = ()\nGoggle(None, iter_opt=False).fit([])\n",
              "from goggle import Goggle\n\nGoggle(None, 5, False).fit([])\n",
              "from goggle import Goggle\n\nargs = ()\nGoggle(*args).fit([])\n",
              "from goggle import Goggle\n\nmodel = Goggle(None)\nmodel.iter_opt = False\nmodel.fit([])\n",
              "from goggle import Goggle\n\nclass Other(Goggle):\n    pass\n\nOther(None).fit([])\n",
              "from goggle import Goggle\n\nmodel = Goggle.__new__(Goggle)\nmodel.fit([])\n"]
    for number, other in enumerate(others):  # a new file each time: the project's file listing changes
        write(tmp_path, {f"main{number}.py": other})
        assert project_findings(tmp_path, "goggle.py") == [(17, "ML103")], other
        (tmp_path / f"main{number}.py").unlink()
    write(tmp_path, {"main.py": "from goggle import Goggle\n\nGoggle(None).fit([])\n", "pyproject.toml": ""})
    assert project_findings(tmp_path, "goggle.py") == [(17, "ML103")]


def test_a_module_of_the_project_without_parameters_passes_on_only_what_its_inputs_carry(tmp_path):
    """A hand-written Dice loss (no parameters, in another module) fed one-hot maps of a detached
    prediction returns no graph, so the running weights rebuilt from it each call chain nothing
    (ML102 quiet)."""
    loss = """
        import torch
        from torch import nn

        class SoftDiceLoss(nn.Module):
            def __init__(self, smooth=1.0):
                super().__init__()
                self.smooth = smooth

            def forward(self, x, y):
                inter = (x * y).sum(0)
                return (2 * inter + self.smooth) / (x.sum(0) + y.sum(0) + self.smooth)
    """
    train = """
        import torch
        from loss import SoftDiceLoss

        class DiffDW:
            def __init__(self, num_cls):
                self.dice_func = SoftDiceLoss(smooth=1e-8)
                self.dice_weight = torch.ones(num_cls).cuda()

            def cal_weights(self, pred, label):
                x_onehot = torch.zeros(pred.shape).cuda()
                x_onehot.scatter_(1, torch.argmax(pred, dim=1, keepdim=True), 1)
                y_onehot = torch.zeros(pred.shape).cuda()
                y_onehot.scatter_(1, label, 1)
                cur_dice = self.dice_func({first}, y_onehot)
                self.dice_weight = 0.9 * self.dice_weight + 0.1 * (1.0 - cur_dice)
                return self.dice_weight

        def main(model, loader, optimizer):
            diffdw = DiffDW(4)
            for image, label in loader:
                output = model(image)
                weight = diffdw.cal_weights(output, label)
                loss = (output * weight).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    """
    write(tmp_path, {"loss.py": loss, "train.py": train.format(first="x_onehot")})
    assert project_findings(tmp_path, "train.py") == []
    # (a loss given a layer to run: test_a_loss_of_the_project_given_no_module_holds_no_parameters)


def test_a_loss_written_into_a_numpy_array_keeps_no_graph():
    """``record = np.zeros(n)`` then ``record[i] = loss``: numpy stores a number in a preallocated
    slot; no graph is kept and nothing grows. The same write into a dict keeps every step's graph."""
    source = """
        import numpy as np
        import torch.nn.functional as F

        def train(model, loader, optimizer, n):
            record = {made}
            for i, (x, y) in enumerate(loader):
                loss = F.cross_entropy(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                record[i] = loss
            return record
    """
    assert findings(source.format(made="np.zeros((n,))")) == []
    assert [code for _, code in findings(source.format(made="{}"))] == ["ML101"]


def test_what_follows_an_unconditional_raise_never_runs():
    """A ``raise`` statement ends its block in any file: the accumulation after it never runs.
    Behind an ``if``, the raise leaves the rest reachable, and it is reported."""
    source = """
        import torch.nn.functional as F

        def train(model, loader, optimizer):
            total = 0
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
                {raise_line}
                total += loss
            return total
    """
    assert findings(source.format(raise_line='raise RuntimeError("training is not supported here")')) == []
    guarded = 'if not loss.isfinite(): raise RuntimeError("diverged")'
    assert [code for _, code in findings(source.format(raise_line=guarded))] == ["ML101"]


def test_a_loss_of_the_project_given_no_module_holds_no_parameters(tmp_path):
    """``SoftDiceLoss(smooth=1e-8)`` whose ``__init__`` keeps an ``apply_nonlin=None`` it calls when
    given: built without it, the loss holds no parameter, and one-hot inputs give no graph (ML102
    quiet). Built with a layer, its output is the layer's graph: reported."""
    write(tmp_path, {
        "loss.py": """
            from torch import nn

            class SoftDiceLoss(nn.Module):
                def __init__(self, apply_nonlin=None, smooth=1.0):
                    super().__init__()
                    self.apply_nonlin = apply_nonlin
                    self.smooth = smooth

                def forward(self, x, y):
                    if self.apply_nonlin is not None:
                        x = self.apply_nonlin(x)
                    return (2 * (x * y).sum(0) + self.smooth) / (x.sum(0) + y.sum(0) + self.smooth)
        """,
        "train.py": """
            import torch
            from torch import nn
            from loss import SoftDiceLoss

            class Weights:
                def __init__(self, num_cls):
                    self.dice_func = SoftDiceLoss({given}smooth=1e-8)
                    self.dice_weight = torch.ones(num_cls).cuda()

                def update(self, pred, label):
                    x_onehot = torch.zeros(pred.shape).cuda()
                    x_onehot.scatter_(1, torch.argmax(pred, dim=1, keepdim=True), 1)
                    cur_dice = self.dice_func(x_onehot, label)
                    self.dice_weight = 0.9 * self.dice_weight + 0.1 * (1.0 - cur_dice)
                    return self.dice_weight

            def main(model, loader, optimizer):
                weights = Weights(4)
                for image, label in loader:
                    output = model(image)
                    loss = (output * weights.update(output.detach(), label)).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
        """.replace("{given}", ""),
    })
    assert [code for _, code in project_findings(tmp_path, "train.py") if code == "ML102"] == []
    train = tmp_path / "train.py"
    train.write_text(train.read_text().replace("SoftDiceLoss(smooth=1e-8)", "SoftDiceLoss(nn.Linear(4, 4), smooth=1e-8)"))
    assert [code for _, code in project_findings(tmp_path, "train.py") if code == "ML102"] == ["ML102"]


# ----- 2. what an environment returns for an action read down to a number carries no graph --------
# (the networks live in another module: the update's loss is known only once its forward is)
ACTOR_WORKER = """
    import torch
    import torch.multiprocessing as mp
    from torch.distributions import Categorical

    from models import PolicyNetwork


    class Worker(mp.Process):
        def __init__(self, env, optimizer):
            super().__init__()
            self.env = env
            self.network = PolicyNetwork(4, 2)
            self.optimizer = optimizer

        def get_action(self, state):
            with torch.no_grad():
                logits = self.network.forward(torch.FloatTensor(state))
            return Categorical(logits=logits).sample().cpu().detach().item()

        def compute_loss(self, trajectory):
            states = torch.FloatTensor([step[0] for step in trajectory])
            rewards = torch.FloatTensor([step[2] for step in trajectory])
            return -(self.network.forward(states).sum(-1) * rewards).mean()

        def update(self, trajectory):
            loss = self.compute_loss(trajectory)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

        def run(self, episodes):
            state = self.env.reset()
            trajectory = []
            episode_reward = 0
            for episode in range(episodes):
                action = self.get_action(state)
                next_state, reward, done, _ = self.env.step(action)
                trajectory.append([state, action, reward, next_state, done])
                episode_reward += reward
                if done:
                    print(episode_reward)
                    self.update(trajectory)
                    trajectory = []
                    episode_reward = 0
                    state = self.env.reset()
                else:
                    state = next_state
"""
POLICY_NETWORK = """
    from torch import nn


    class PolicyNetwork(nn.Module):
        def __init__(self, inputs, actions):
            super().__init__()
            self.layer = nn.Linear(inputs, actions)

        def forward(self, state):
            return self.layer(state)
"""


def test_what_an_environment_returns_for_a_number_carries_no_graph(tmp_path):
    write(tmp_path, {"worker.py": ACTOR_WORKER, "models.py": POLICY_NETWORK})
    assert project_findings(tmp_path, "worker.py") == []


def test_a_reward_the_update_computes_from_the_network_is_still_a_graph(tmp_path):
    # the same loop keeping what a forward of the network computed (the value, not the reward)
    source = ACTOR_WORKER.replace("episode_reward += reward",
                                  "episode_reward += self.network.forward(torch.FloatTensor(state)).max()")
    write(tmp_path, {"worker.py": source, "models.py": POLICY_NETWORK})
    assert (39, "ML101") in project_findings(tmp_path, "worker.py")


# ----- a branch of a shared function that only calls under no_grad take -------------------------
# (``marginal`` is True only where evaluation runs under no_grad; training calls it with the default)
SHARED_TEST = """
    import torch


    def test_classifier(model, loader, marginal=False):
        model.eval()
        errors = []
        for images, labels in loader:
            if marginal:
                outputs = 0
                for turn in range(4):
                    outputs = outputs + model(torch.rot90(images, turn, (2, 3))) / 4.0
            else:
                outputs = model(images)
            errors.append((outputs.argmax(1) != labels).float().mean().item())
        model.train()
        return sum(errors) / len(errors)
"""
SHARED_TRAIN = """
    import torch

    from evals import test_classifier


    def train(model, loader, test_loader, optimizer, epochs):
        for epoch in range(epochs):
            for images, labels in loader:
                loss = torch.nn.functional.cross_entropy(model(images), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            print(epoch, test_classifier(model, test_loader))
"""
SHARED_EVAL = """
    import torch

    from evals import test_classifier


    def main(model, test_loader):
        with torch.no_grad():
            print(test_classifier(model, test_loader, marginal=True))
"""


def test_a_branch_only_the_no_grad_calls_of_other_modules_take(tmp_path):
    write(tmp_path, {"evals.py": SHARED_TEST, "train.py": SHARED_TRAIN, "eval.py": SHARED_EVAL})
    # the else branch runs in training's call, with grad on: reported; the marginal one is not
    assert project_findings(tmp_path, "evals.py") == [(13, "ML201")]


def test_a_branch_a_call_with_grad_on_takes_is_reported(tmp_path):
    train = SHARED_TRAIN.replace("test_classifier(model, test_loader)", "test_classifier(model, test_loader, True)")
    write(tmp_path, {"evals.py": SHARED_TEST, "train.py": train, "eval.py": SHARED_EVAL})
    # (and now no call takes the else branch with grad on)
    assert project_findings(tmp_path, "evals.py") == [(11, "ML201")]


def test_a_branch_a_call_with_grad_on_may_take_is_reported(tmp_path):
    # a flag that is no literal, or a function handed on to be called unseen: either branch may run
    train = SHARED_TRAIN.replace("test_classifier(model, test_loader)",
                                 "test_classifier(model, test_loader, marginal=epoch > 3)")
    write(tmp_path, {"evals.py": SHARED_TEST, "train.py": train, "eval.py": SHARED_EVAL})
    assert (11, "ML201") in project_findings(tmp_path, "evals.py")
    handed = SHARED_TRAIN + "\n\ndef evaluate_later(callbacks):\n    callbacks.append(test_classifier)\n"
    write(tmp_path, {"evals.py": SHARED_TEST, "train.py": handed, "eval.py": SHARED_EVAL})
    assert (11, "ML201") in project_findings(tmp_path, "evals.py")


def test_a_branch_only_the_no_grad_calls_of_the_same_module_take():
    source = textwrap.dedent(SHARED_TEST) + textwrap.dedent("""


        def train(model, loader, test_loader, optimizer):
            for images, labels in loader:
                loss = torch.nn.functional.cross_entropy(model(images), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            print(test_classifier(model, test_loader))
            with torch.no_grad():
                print(test_classifier(model, test_loader, marginal=True))
    """)
    assert findings(source) == [(14, "ML201")]
    assert findings(source.replace("print(test_classifier(model, test_loader))",
                                   "print(test_classifier(model, test_loader, marginal=True))")) == [(12, "ML201")]
    assert findings(source.replace("print(test_classifier(model, test_loader))",
                                   "print(test_classifier(model, test_loader, marginal=len(loader) > 1))")) \
        == [(12, "ML201"), (14, "ML201")]


# ----- 6. a file the project writes holding a run's arguments, read back without map_location -----
RUN_ARGS = """
    from dataclasses import dataclass, field
    from typing import Optional


    @dataclass
    class DataArguments:
        dataset_name: Optional[str] = field(default="nq")
        max_seq_length: int = 128
        use_less_data: bool = False
"""
EXPERIMENT = """
    import os

    import torch

    from run_args import DataArguments


    class Experiment:
        def __init__(self, data_args: DataArguments, model, output_dir):
            self.data_args = data_args
            self.model = model
            self.output_dir = output_dir

        def train(self):
            torch.save(self.data_args, os.path.join(self.output_dir, "data_args.bin"))
"""
ANALYZE = """
    import os

    import torch


    def load_experiment(checkpoint):
        local_rank = int(os.environ["LOCAL_RANK"])
        data_args = torch.load(os.path.join(checkpoint, "data_args.bin"))
        return data_args, local_rank
"""


def test_a_run_s_arguments_the_project_saves_under_that_name_hold_no_device_tensor(tmp_path):
    write(tmp_path, {"run_args.py": RUN_ARGS, "experiment.py": EXPERIMENT, "analyze.py": ANALYZE})
    assert project_findings(tmp_path, "analyze.py") == []


def test_a_file_name_the_project_also_saves_a_model_under_is_still_reported(tmp_path):
    experiment = EXPERIMENT + (
        "\n    def save_weights(self):\n"
        "        torch.save(self.model.state_dict(), os.path.join(self.output_dir, 'data_args.bin'))\n")
    write(tmp_path, {"run_args.py": RUN_ARGS, "experiment.py": experiment, "analyze.py": ANALYZE})
    assert project_findings(tmp_path, "analyze.py") == [(8, "ML203")]


def test_a_dataclass_with_a_tensor_field_or_another_file_name_is_still_reported(tmp_path):
    with_tensor = RUN_ARGS.replace("use_less_data: bool = False", "class_weights: torch.Tensor = None")
    write(tmp_path, {"run_args.py": with_tensor, "experiment.py": EXPERIMENT, "analyze.py": ANALYZE})
    assert project_findings(tmp_path, "analyze.py") == [(8, "ML203")]
    write(tmp_path, {"run_args.py": RUN_ARGS, "experiment.py": EXPERIMENT,
                     "analyze.py": ANALYZE.replace("data_args.bin", "model_args.bin")})
    assert project_findings(tmp_path, "analyze.py") == [(8, "ML203")]


def test_a_parsed_command_line_saved_by_the_script_holds_no_device_tensor(tmp_path):
    script = """
        import argparse
        import os

        import torch


        def main(model):
            parser = argparse.ArgumentParser()
            parser.add_argument("--out", default="runs")
            args = parser.parse_args()
            torch.save(args, os.path.join(args.out, "run_state.pt"))


        def load_run(folder):
            local_rank = int(os.environ["LOCAL_RANK"])
            saved = torch.load(os.path.join(folder, "run_state.pt"))
            return saved, local_rank
    """
    write(tmp_path, {"train.py": script})
    assert project_findings(tmp_path, "train.py") == []
    write(tmp_path, {"train.py": script.replace("torch.save(args,", "torch.save({'args': args, 'model': model.state_dict()},")})
    assert project_findings(tmp_path, "train.py") == [(16, "ML203")]


# ----- a helper that calls torch.distributed in a project where nothing launches ranks -----------
DIST_HELPERS = """
    import os

    import torch
    import torch.distributed as dist


    def dist_gather(opts, x):
        if opts.distributed:
            parts = [torch.zeros_like(x) for _ in range(opts.world_size)]
            dist.all_gather(parts, x)
            x = torch.cat(parts, 0)
        return x


    def load_checkpoint(logdir):
        model_state = torch.load(os.path.join(logdir, "last.model"))
        optim_state = torch.load(os.path.join(logdir, "last.optim"))
        return model_state, optim_state
"""
SINGLE_PROCESS_MAIN = """
    import sys

    import torch

    from helpers import load_checkpoint


    def main(rank, opts):
        model_state, optim_state = load_checkpoint(opts.logdir)
        return model_state, optim_state


    if __name__ == "__main__":
        opts = object()
        if torch.cuda.device_count() > 1:
            print("several GPUs are not supported", file=sys.stderr)
        else:
            main(0, opts)
"""


def test_a_distributed_helper_in_a_project_that_launches_no_ranks_is_one_process(tmp_path):
    write(tmp_path, {"helpers.py": DIST_HELPERS, "main.py": SINGLE_PROCESS_MAIN})
    assert [code for _, code in project_findings(tmp_path, "helpers.py")].count("ML203") == 0


def test_a_distributed_helper_in_a_project_that_starts_a_process_group_loads_on_every_rank(tmp_path):
    launching = SINGLE_PROCESS_MAIN.replace(
        "            main(0, opts)",
        "            torch.distributed.init_process_group('nccl')\n            main(0, opts)")
    write(tmp_path, {"helpers.py": DIST_HELPERS, "main.py": launching})
    assert [code for _, code in project_findings(tmp_path, "helpers.py")].count("ML203") == 2


# ----- what a module computes is no configuration value, even from data and a module object -------
ADVERSARIAL_SEGMENTATION = """
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden = nn.Linear(8, 8)
            self.fc = nn.Linear(8, 2)

        def forward(self, x, image):
            return self.fc(torch.relu(self.hidden(x + image)))


    if __name__ == "__main__":
        model = nn.Linear(8, 8).cuda()
        D = Discriminator().cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        Dopt = torch.optim.Adam(D.parameters())
        loader = torch.utils.data.DataLoader(torch.randn(64, 8), batch_size=4)
        for sampled_batch in loader:
            volume_batch, label_batch = sampled_batch["image"], sampled_batch["label"]
            volume_batch, label_batch = volume_batch.cuda(), label_batch.cuda()
            target = torch.tensor([1, 1, 0, 0]).cuda()
            model.train()
            D.eval()
            outputs = model(volume_batch)
            supervised_loss = F.mse_loss(outputs, label_batch)
            d_outputs = D(outputs[2:], volume_batch[2:])
            loss = supervised_loss + 0.1 * F.cross_entropy(d_outputs, target[:2])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            model.eval()
            D.train()
            with torch.no_grad():
                outputs = model(volume_batch)
            d_outputs = D(outputs, volume_batch)
            d_loss = F.cross_entropy(d_outputs, target)
            Dopt.zero_grad()
            d_loss.backward()
            Dopt.step()
"""


def test_a_discriminator_in_eval_mode_whose_output_the_generator_loss_backpropagates():
    assert findings(ADVERSARIAL_SEGMENTATION) == []


def test_a_discriminator_in_eval_mode_read_only_for_a_number_is_still_reported():
    # the same loop, the discriminator no longer trained and its output only printed
    source = ADVERSARIAL_SEGMENTATION.split("            model.eval()")[0].replace(
        "loss = supervised_loss + 0.1 * F.cross_entropy(d_outputs, target[:2])",
        "loss = supervised_loss\n            print(F.cross_entropy(d_outputs, target[:2]).item())")
    assert findings(source) == [(31, "ML201")]


# ----- 2. a helper that hands an array back as it is and converts a tensor: no graph on any path ---
TO_NUMPY_LOOP = """
    import numpy as np
    import torch


    def to_numpy(x):
        if type(x) == np.ndarray:
            return x
        return x.data.numpy()


    def train(model, loader, optimizer):
        losses = []
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(to_numpy(loss))
        return losses
"""


def test_a_helper_returning_its_argument_only_when_it_is_an_array_returns_no_graph():
    assert findings(TO_NUMPY_LOOP) == []
    assert findings(TO_NUMPY_LOOP.replace("type(x) == np.ndarray", "isinstance(x, (np.ndarray, float))")) == []


def test_a_helper_returning_its_argument_when_it_is_a_list_may_return_a_graph():
    assert findings(TO_NUMPY_LOOP.replace("type(x) == np.ndarray", "isinstance(x, list)")) == [(19, "ML101")]


# ----- 5. a loop over the terms of one loss: a loss module is no model ------------------------------
PER_ITERATION_LOSSES = """
    import torch
    from torch import nn


    def compute_losses(pred_transforms, target):
        losses = {}
        num_iter = len(pred_transforms)
        criterion = nn.MSELoss()
        for i in range(num_iter):
            losses["mse_{}".format(i)] = criterion(pred_transforms[i], target)
        total = [losses[k] * 0.5 ** (num_iter - j - 1) for j, k in enumerate(losses)]
        losses["total"] = torch.sum(torch.stack(total), dim=0)
        return losses


    def train(model, loader, optimizer):
        for data, target in loader:
            optimizer.zero_grad()
            losses = compute_losses(model(data), target)
            losses["total"].backward()
            optimizer.step()
"""


def test_per_iteration_terms_of_one_loss_stored_under_their_keys_are_no_accumulation():
    assert findings(PER_ITERATION_LOSSES) == []


def test_a_loop_over_batches_storing_each_loss_under_a_new_key_is_reported():
    source = PER_ITERATION_LOSSES.replace(
        """            losses = compute_losses(model(data), target)
            losses["total"].backward()""",
        """            losses = compute_losses(model(data), target)
            history[len(history)] = losses["total"]
            losses["total"].backward()""").replace(
        "    def train(model, loader, optimizer):\\n", "    history = {}\\n\\n\\n    def train(model, loader, optimizer):\\n")
    assert any(code == "ML101" for _, code in findings(source))


# ----- 3/5. the whole loader as one step: the loss summed over it is backpropagated once after it --
FULL_BATCH_STEP = """
    import torch


    def train(att_net, classifier, loader, optimizer, epochs):
        for epoch in range(epochs):
            edge_weights = torch.tensor([])
            total_loss, batches = 0, 0
            for graph in loader:
                batches += 1
                edge_weight, rep = att_net(graph)
                loss = torch.nn.functional.cross_entropy(classifier(rep), graph.y)
                total_loss += loss
                edge_weights = torch.cat([edge_weights, edge_weight])
            total_loss /= batches
            optimizer.zero_grad()
            total_loss.backward()
            optimizer.step()
            print(epoch, edge_weights.mean().item())
"""


def test_a_loader_gathered_into_one_step_backpropagated_after_it_keeps_one_step():
    assert findings(FULL_BATCH_STEP) == []


def test_the_same_holders_kept_across_per_batch_steps_are_reported():
    per_batch = FULL_BATCH_STEP.replace(
        """                edge_weights = torch.cat([edge_weights, edge_weight])
            total_loss /= batches
            optimizer.zero_grad()
            total_loss.backward()
            optimizer.step()""",
        """                edge_weights = torch.cat([edge_weights, edge_weight])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()""")
    assert findings(per_batch) == [(13, "ML101"), (14, "ML101")]


def test_outputs_gathered_by_a_loop_without_backward_beside_a_training_loop_are_reported():
    # an evaluation loop in the epoch, then the training loop: the backward goes through what the
    # training loop bound, not what the evaluation loop keeps
    source = '''
        import torch


        def train(model, loader, val_loader, optimizer, epochs):
            for epoch in range(epochs):
                val_outputs = []
                for x, y in val_loader:
                    val_outputs.append(model(x))
                for x, y in loader:
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                print(epoch, torch.cat(val_outputs).mean().item())
    '''
    assert (9, "ML101") in findings(source) or (9, "ML207") in findings(source)


# ----- 5. a loop over the discriminators of one step, each with its own optimizer ------------------
MULTI_DISCRIMINATOR_STEP = """
    import torch


    def train(net_g, nets_d, optimizers_d, optimizer_g, loader, epochs):
        for epoch in range(epochs):
            for imgs, noise in loader:
                fake_imgs = net_g(noise)
                err_d_total = 0
                for i in range(len(nets_d)):
                    nets_d[i].zero_grad()
                    err_d = torch.nn.functional.softplus(nets_d[i](fake_imgs[i].detach()) - nets_d[i](imgs[i])).mean()
                    err_d.backward()
                    optimizers_d[i].step()
                    err_d_total += err_d
                err_g = sum(-nets_d[i](fake_imgs[i]).mean() for i in range(len(nets_d)))
                optimizer_g.zero_grad()
                err_g.backward()
                optimizer_g.step()
                print(err_d_total.item())
"""


def test_a_loop_stepping_each_discriminator_s_optimizer_in_turn_is_within_one_step():
    assert findings(MULTI_DISCRIMINATOR_STEP) == []


def test_a_data_loop_alternating_optimizers_by_a_computed_index_still_runs_steps():
    source = '''
        import torch


        def train(model, loader, optimizers):
            total = 0
            for i, (x, y) in enumerate(loader):
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                optimizers[i % 2].step()
                total += loss
            return total.item()
    '''
    assert findings(source) == [(11, "ML101")]


# ----- 6. a DataParallel wrapper read for an attribute of the wrapped model: it never steps --------
WRAPPED_THEN_READ = """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(8, 8)
            self.fc = nn.Linear(8, 2)

        def forward(self, x):
            return self.fc(self.encoder(x))


    class Trainer:
        def __init__(self, args, loader):
            self.args = args
            self.loader = loader
            self.model = Net()
            if args.num_gpu > 1:
                self.model = nn.DataParallel(self.model, list(range(args.num_gpu)))
            self.model = self.model.cuda()
            if args.mode == "pre_train":
                self.optimizer = torch.optim.SGD(self.model.encoder.parameters(), lr=args.lr)
            else:
                self.optimizer = torch.optim.SGD([{"params": self.model.encoder.parameters()},
                                                  {"params": self.model.fc.parameters()}], lr=args.lr)

        def train(self):
            for x, y in self.loader:
                loss = nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
"""


def test_a_wrapper_read_for_the_wrapped_model_s_submodule_on_every_path_never_steps():
    assert findings(WRAPPED_THEN_READ) == []


def test_a_wrapper_read_only_through_module_or_on_one_path_is_reported():
    through_module = WRAPPED_THEN_READ.replace("self.model.encoder.parameters()", "self.model.module.encoder.parameters()")
    assert [code for _, code in findings(through_module)] == ["ML206"]
    one_path = WRAPPED_THEN_READ.replace(
        '''                self.optimizer = torch.optim.SGD([{"params": self.model.encoder.parameters()},
                                                  {"params": self.model.fc.parameters()}], lr=args.lr)''',
        '''                self.optimizer = torch.optim.SGD(self.model.parameters(), lr=args.lr)''')
    assert [code for _, code in findings(one_path)] == ["ML206"]


# ----- 4. a model of another module whose forward takes gradients itself (MAML's inner loop) -------
META_MODEL = """
    import torch
    from torch import nn


    class MetaModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(8, 8)
            self.base = nn.Linear(8, 5)

        def forward(self, inputs):
            shot, query = inputs
            return self.meta_forward(shot, query)

        def meta_forward(self, shot, query):
            weights = list(self.base.parameters())
            loss = self.base(self.encoder(shot)).logsumexp(-1).mean()
            grads = torch.autograd.grad(loss, weights)
            fast = [w - 0.1 * g for w, g in zip(weights, grads)]
            return nn.functional.linear(self.encoder(query), fast[0], fast[1])
"""
META_EVAL = """
    import torch

    from meta_model import MetaModel


    def evaluate(loader):
        model = MetaModel().cuda()
        model.eval()
        accs = []
        for shot, query, label in loader:
            logits = model((shot, query))
            accs.append((logits.argmax(1) == label).float().mean().item())
        return sum(accs) / len(accs)
"""


def test_a_model_of_another_module_whose_forward_takes_gradients_needs_grad_on(tmp_path):
    write(tmp_path, {"meta_model.py": META_MODEL, "evaluate.py": META_EVAL})
    assert project_findings(tmp_path, "evaluate.py") == []
    plain = META_MODEL.replace("return self.meta_forward(shot, query)", "return self.base(self.encoder(query))")
    write(tmp_path, {"meta_model.py": plain, "evaluate.py": META_EVAL})
    assert project_findings(tmp_path, "evaluate.py") == [(11, "ML201")]


# ----- a module of a folder below the root (no __init__.py) that nothing imports never runs -------
UNUSED_COPY = """
    import warnings

    import torch

    warnings.filterwarnings("ignore")


    def init_net(net, gpu_ids):
        if len(gpu_ids) > 0:
            net.to(gpu_ids[0])
            net = torch.nn.DataParallel(net, gpu_ids)
        return net
"""
TRAIN_SCRIPT = """
    import argparse

    import torch

    from networks import define_net


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--epochs", type=int, default=1)
        args = parser.parse_args()
        net = define_net()
"""
NETWORKS = """
    import torch


    def define_net():
        return torch.nn.Linear(8, 2)
"""


def test_a_module_of_a_folder_below_the_root_that_nothing_imports_never_runs(tmp_path):
    (tmp_path / ".git").mkdir()  # the repository's root
    write(tmp_path, {"core/utils_models.py": UNUSED_COPY, "train.py": TRAIN_SCRIPT, "networks.py": NETWORKS})
    assert project_findings(tmp_path, "core/utils_models.py") == []


def test_such_a_module_that_a_script_imports_or_that_runs_itself_keeps_its_findings(tmp_path):
    (tmp_path / ".git").mkdir()
    importing = TRAIN_SCRIPT.replace("from networks import define_net",
                                     "from networks import define_net\n    from core.utils_models import init_net")
    write(tmp_path, {"core/utils_models.py": UNUSED_COPY, "train.py": importing, "networks.py": NETWORKS})
    assert [code for _, code in project_findings(tmp_path, "core/utils_models.py")] == ["ML206"]
    running = UNUSED_COPY + "\n    init_net(torch.nn.Linear(8, 2), [0, 1])\n"
    write(tmp_path, {"core/utils_models.py": running, "train.py": TRAIN_SCRIPT, "networks.py": NETWORKS})
    assert [code for _, code in project_findings(tmp_path, "core/utils_models.py")] == ["ML206"]


# ----- a shape probe whose output nobody reads (a FLOP counter's forward on an empty tensor) --------
SHAPE_PROBE = """
    import torch


    def get_model_complexity_info(model, input_res, channel=3):
        batch = torch.FloatTensor(1, channel, *input_res)
        model.eval()
        out = model(batch)
        flops = sum(getattr(m, "__flops__", 0) for m in model.modules())
        return flops
"""


def test_a_shape_probe_on_a_made_up_batch_whose_output_nobody_reads():
    assert findings(SHAPE_PROBE) == []


def test_a_probe_that_returns_what_the_model_made_is_reported():
    source = SHAPE_PROBE.replace("return flops", "return flops, out")
    assert findings(source) == [(8, "ML201")]


# ----- what the code converts with .numpy() without moving it is on the CPU (ML207) ----------------
CAT_THEN_NUMPY = """
    import torch


    def test(model, loader):
        model = model.cuda()
        model.eval()
        y_preds = torch.FloatTensor([])
        with torch.no_grad():
            for x, y in loader:
                outputs = model(x.cuda())
                y_preds = torch.cat([y_preds, outputs], dim=1)
        y_preds = torch.transpose(y_preds, 0, 1)
        return y_preds.detach().numpy()
"""


def test_outputs_joined_into_what_the_code_converts_with_numpy_unmoved_are_on_the_cpu():
    assert findings(CAT_THEN_NUMPY) == []


def test_outputs_joined_then_moved_before_numpy_are_kept_on_the_device():
    assert findings(CAT_THEN_NUMPY.replace("y_preds.detach().numpy()", "y_preds.detach().cpu().numpy()")) \
        == [(12, "ML207")]


# ----- 5. a step function's result moved on the way (``.to(device)``) is still what the caller
# backpropagates: the samples of one forward it stacked into it are that graph's own ---------------
MC_SAMPLES = """
    import torch


    class Appr:
        def __init__(self, model, samples, device):
            self.model = model
            self.samples = samples
            self.device = device
            self.optimizer = torch.optim.Adam(model.parameters())

        def elbo_loss(self, input, target, t):
            predictions = []
            for i in range(self.samples):
                predictions.append(self.model(input, sample=True)[t])
                self.prior_log(t)
            outputs = torch.stack(predictions, dim=0).to(self.device)
            return torch.nn.functional.nll_loss(outputs.mean(0), target, reduction="sum")

        def train_epoch(self, t, loader):
            for images, targets in loader:
                loss = self.elbo_loss(images, targets, t).to(self.device)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
"""


def test_samples_stacked_into_a_loss_the_caller_backpropagates_after_moving_it():
    assert findings(MC_SAMPLES) == []


def test_samples_kept_on_the_object_grow_with_every_call():
    source = MC_SAMPLES.replace(
        "                predictions.append(self.model(input, sample=True)[t])",
        "                self.kept.append(self.model(input, sample=True)[t])\n"
        "                predictions.append(self.kept[-1])")
    assert "ML101" in [code for _, code in findings(source)]


# ----- 3. an attribute rebuilt from this call's values before it is added to ------------------------
REBUILT_EACH_FORWARD = """
    import torch
    from torch import nn


    class Recommender(nn.Module):
        def __init__(self, users, dim):
            super().__init__()
            self.user_emb = nn.Embedding(users, dim)
            self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(2)])
            self.transform = nn.Linear(dim, dim)

        def forward(self, adjacency):
            embeddings = [self.user_emb.weight]
            for layer in self.layers:
                embeddings.append(layer(adjacency @ embeddings[-1]))
            self.user_embedding = torch.stack(embeddings, dim=1)
            self.user_embedding = torch.mean(self.user_embedding, dim=1)
            self.user_embedding = self.user_embedding + self.transform(self.user_embedding)
            return self.user_embedding
"""


def test_an_attribute_rebuilt_from_this_call_s_values_before_it_is_added_to():
    assert findings(REBUILT_EACH_FORWARD) == []


def test_an_attribute_added_to_without_being_rebuilt_in_the_call_grows():
    source = REBUILT_EACH_FORWARD.replace(
        "            self.user_embedding = torch.stack(embeddings, dim=1)\n"
        "            self.user_embedding = torch.mean(self.user_embedding, dim=1)\n", "")
    assert [code for _, code in findings(source)] == ["ML101"]


# ----- 4. what another module's forward hands back detached is no recurrent graph (ML102) ---------
MEMORY_MODEL = """
    import torch
    from torch import nn


    class MemoryModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])
            self.head = nn.Linear(8, 4)

        def forward(self, obs, memory):
            h = obs
            out_memories = []
            for block in self.blocks:
                out_memories.append(h.detach())
                h = torch.relu(block(h + memory.mean()))
            return self.head(h), torch.stack(out_memories, dim=1)
"""
ENJOY = """
    import torch

    from memory_model import MemoryModel


    def enjoy(env, steps):
        model = MemoryModel()
        model.eval()
        memory = torch.zeros(1, steps, 2, 8)
        obs = env.reset()
        for t in range(steps):
            policy, new_memory = model(torch.tensor(obs, dtype=torch.float32), memory[:, t])
            memory[:, t] = new_memory
            obs = env.step(policy.argmax().item())
"""


def test_memory_another_module_s_forward_returns_detached_is_fed_back_without_a_graph(tmp_path):
    write(tmp_path, {"memory_model.py": MEMORY_MODEL, "enjoy.py": ENJOY})
    assert [code for _, code in project_findings(tmp_path, "enjoy.py")] == ["ML201"]
    attached = MEMORY_MODEL.replace("out_memories.append(h.detach())", "out_memories.append(h)")
    write(tmp_path, {"memory_model.py": attached, "enjoy.py": ENJOY})
    assert sorted(code for _, code in project_findings(tmp_path, "enjoy.py")) == ["ML102", "ML201"]


# ----- 6. DataParallel around a module container: it has no forward to run -----------------------
LOSS_CONTAINER = """
    import torch
    from torch import nn


    class Perceptual(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Linear(4, 4)

        def forward(self, sr, hr):
            return (self.features(sr) - self.features(hr)).abs().mean()


    class Loss(nn.Module):
        def __init__(self, n_gpus):
            super().__init__()
            self.losses = [nn.L1Loss(), Perceptual()]
            self.loss_module = nn.ModuleList()
            for loss in self.losses:
                self.loss_module.append(loss)
            self.loss_module.to("cuda")
            if n_gpus > 1:
                self.loss_module = nn.DataParallel(self.loss_module, range(n_gpus))

        def forward(self, sr, hr):
            return sum(loss(sr, hr) for loss in self.losses)

        def get_loss_module(self):
            return self.loss_module
"""


def test_data_parallel_around_a_module_list_runs_no_forward():
    assert findings(LOSS_CONTAINER) == []


def test_data_parallel_around_a_sequential_is_still_reported():
    source = LOSS_CONTAINER.replace("self.loss_module = nn.ModuleList()", "self.loss_module = nn.Sequential(nn.Linear(4, 4))").replace(
        "return sum(loss(sr, hr) for loss in self.losses)", "return sum(loss(self.loss_module(sr), hr) for loss in self.losses)")
    assert [code for _, code in findings(source)] == ["ML206"]


# ----- a function whose only calls are commented out never runs ----------------------------------
TRAIN_WITH_COMMENTED_EVAL = """
    import torch


    def train(model, loader, test_loader, optimizer):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        # auc = evaluation(model, test_loader)


    def evaluation(model, loader):
        model.eval()
        scores = []
        for x, y in loader:
            scores.append((model(x) - y).abs().mean().item())
        return sum(scores) / len(scores)
"""
MAIN_IMPORTING_TRAIN = """
    from train import train


    if __name__ == "__main__":
        train(None, [], [], None)
"""


def test_a_function_whose_only_calls_are_commented_out_never_runs(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path, {"train.py": TRAIN_WITH_COMMENTED_EVAL, "main.py": MAIN_IMPORTING_TRAIN})
    assert project_findings(tmp_path, "train.py") == []
    called = TRAIN_WITH_COMMENTED_EVAL.replace("        # auc = evaluation(model, test_loader)",
                                               "        auc = evaluation(model, test_loader)")
    write(tmp_path, {"train.py": called, "main.py": MAIN_IMPORTING_TRAIN})
    assert project_findings(tmp_path, "train.py") == [(17, "ML201")]


def test_the_outputs_of_the_functional_data_parallel_are_no_wrapper_to_read():
    source = '''
        import torch
        from torch import nn


        class Discriminator(nn.Module):
            def __init__(self, ngpu):
                super().__init__()
                self.ngpu = ngpu
                self.main = nn.Sequential(nn.Linear(8, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))

            def forward(self, input):
                if input.is_cuda and self.ngpu > 1:
                    output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
                else:
                    output = self.main(input)
                return output.view(-1, 1).squeeze(1)


        def train(net, loader, optimizer):
            for x, y in loader:
                loss = nn.functional.binary_cross_entropy_with_logits(net(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    '''
    assert [code for _, code in findings(source)] == ["ML206"]


# A helper's loop is part of one step when every caller is: forward() calls it once per episode
# of the batch (in a loop of its own), and the helper keys one prototype per label of that episode.
_PROTOTYPES_PER_EPISODE = """
import torch
from torch import nn

class Prototypes(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedder = nn.Linear(4, 4)

    def forward(self, batch):
        supports = self.embedder(batch.supports)
        return {"prototypes": self.compute_prototypes(supports, batch)}

    def compute_prototypes(self, supports, batch):
        all_prototypes = []
        for episode in range(batch.num_episodes):
            all_prototypes.append(self.episode_prototypes(batch.labels[episode], supports[episode]))
        return all_prototypes

    def episode_prototypes(self, episode_labels, episode_supports):
        prototypes = {}
        for label in episode_labels:
            prototypes[label.item()] = self.embedder(episode_supports[episode_labels == label]).mean(0)
        return prototypes
"""


def test_a_helper_called_in_a_loop_of_forward_runs_within_one_step():
    assert findings(_PROTOTYPES_PER_EPISODE) == []



# ML207: a list bound again in each batch of the loader loop collects the crops of that batch only.
_CROPS_OF_ONE_BATCH = """
import torch

def init_memory(dataloader, model, crops_for_assign, bank):
    start = 0
    with torch.no_grad():
        for index, inputs in dataloader:
            outputs = []
            for crop_idx in crops_for_assign:
                outputs.append(model(inputs[crop_idx].cuda(non_blocking=True))[0])
            for k, embeddings in enumerate(outputs):
                bank[k][start:start + len(index)] = embeddings
            start += len(index)
    return bank
"""


def test_a_list_made_again_for_each_batch_keeps_one_batch():
    assert findings(_CROPS_OF_ONE_BATCH) == []


def test_the_same_list_made_once_before_the_loader_loop_is_reported():
    source = _CROPS_OF_ONE_BATCH.replace("    with torch.no_grad():\n", "    outputs = []\n    with torch.no_grad():\n"
                                         ).replace("            outputs = []\n", "")
    assert [code for _, code in findings(source)] == ["ML207"]


# ML109: random networks of an ensemble, never trained; the fit() in the loop is an
# IsolationForest's, on their outputs.
_RANDOM_ENSEMBLE = """
import torch
from sklearn.ensemble import IsolationForest

class MLPnet(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = torch.nn.Linear(n, n)

    def forward(self, x):
        return self.lin(x)

class DIF:
    def fit(self, X, n_ensemble):
        self.net_lst, self.forests = [], []
        for i in range(n_ensemble):
            net = MLPnet(X.shape[1])
            x_reduced = net(torch.from_numpy(X).float()).data.numpy()
            self.net_lst.append(net)
            self.forests.append(IsolationForest())
            self.forests[i].fit(x_reduced)
        return self
"""


def test_networks_kept_beside_a_forest_fitted_on_their_outputs_are_never_trained():
    assert findings(_RANDOM_ENSEMBLE) == []


def test_networks_kept_after_a_trainer_fits_them_are_reported():
    source = _RANDOM_ENSEMBLE.replace("            self.forests[i].fit(x_reduced)\n",
                                      "            trainer = Trainer(net, X)\n            trainer.fit()\n")
    assert [code for _, code in findings(source)] == ["ML109"]


# ML201: a model built by a factory from a configuration (its class unknown here) in a project
# one of whose networks differentiates in its forward (normals from autograd.grad, in a helper).
_NETWORK_WITH_NORMALS = """
    import torch
    from torch import nn

    class ImplicitNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 1)

        def forward(self, points):
            points.requires_grad_(True)
            sdf = self.lin(points)
            return sdf, self.gradient(points, sdf)

        def gradient(self, points, sdf):
            return torch.autograd.grad(sdf, points, torch.ones_like(sdf), create_graph=True)[0]
"""
_EVALUATE_FROM_CONFIGURATION = """
    import torch
    from proj import utils

    def evaluate(conf, loader):
        model = utils.get_class(conf.model_class)(conf=conf)
        model.eval()
        normals = []
        for points in loader:
            sdf, normal = model(points)
            normals.append(normal.detach().cpu())
        return normals
"""


def test_a_model_built_by_a_factory_may_be_the_project_s_differentiating_network(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "proj/__init__.py": "",
        "proj/utils.py": "import importlib\ndef get_class(name):\n    module, _, cls = name.rpartition('.')\n"
                         "    return getattr(importlib.import_module(module), cls)\n",
        "proj/network.py": _NETWORK_WITH_NORMALS,
        "proj/evaluate.py": _EVALUATE_FROM_CONFIGURATION,
    })
    assert project_findings(tmp_path, "proj/evaluate.py") == []


def test_a_model_built_by_a_factory_in_a_project_without_one_is_reported(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "proj/__init__.py": "",
        "proj/utils.py": "import importlib\ndef get_class(name):\n    module, _, cls = name.rpartition('.')\n"
                         "    return getattr(importlib.import_module(module), cls)\n",
        "proj/network.py": _NETWORK_WITH_NORMALS.replace("return sdf, self.gradient(points, sdf)",
                                                        "return sdf, sdf"),
        "proj/evaluate.py": _EVALUATE_FROM_CONFIGURATION,
    })
    assert [code for _, code in project_findings(tmp_path, "proj/evaluate.py")] == ["ML201"]


# ML206: a script wraps its encoder and hands it to test(), which runs it only under no_grad and
# trains a linear probe on the features it gathered (the probe is what test() trains).
_LINEAR_PROBE_SCRIPT = """
import torch
import torch.nn as nn

def linear_probe(features, labels, num_classes):
    probe = nn.Linear(features.shape[1], num_classes)
    optimizer = torch.optim.SGD(probe.parameters(), lr=0.1)
    for _ in range(100):
        optimizer.zero_grad()
        nn.functional.cross_entropy(probe(features), labels).backward()
        optimizer.step()
    return probe

def test(net, loader):
    features, labels = [], []
    with torch.no_grad():
        for x, y in loader:
            features.append(net(x).cpu())
            labels.append(y)
    return linear_probe(torch.cat(features), torch.cat(labels), 10)

net = Encoder()
net = nn.DataParallel(net)
net.load_state_dict(torch.load("encoder.pt", map_location="cpu"))
net.cuda()
net.eval()
test(net, loader)
"""


def test_a_wrapper_handed_to_a_function_that_runs_it_only_without_grad_is_not_trained():
    assert findings(_LINEAR_PROBE_SCRIPT) == []


def test_a_wrapper_handed_to_a_function_that_runs_it_with_grad_and_trains_is_reported():
    source = _LINEAR_PROBE_SCRIPT.replace("    with torch.no_grad():\n", "    if loader is not None:\n")
    assert [code for _, code in findings(source)] == ["ML206"]


# A method only ever called under inference_mode by the modules that can hold its class's
# instances; another script's model.generate(...) with grad on is a transformers model's (the
# script reaches nothing of the project), so it does not call this one.
_DECODER_MODULE = """
    import torch
    from torch import nn

    class Decoder(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def generate(self, input_ids, steps):
            kv_cache = None
            tokens = []
            for _ in range(steps):
                out = self.model(input_ids, kv_cache=kv_cache)
                kv_cache = out["kv_cache"]
                input_ids = out["logits"].argmax(-1)
                tokens.append(input_ids)
            return torch.cat(tokens, 1)
"""
_GENERATE_UNDER_INFERENCE_MODE = """
    import torch
    from proj.decoder import Decoder

    def main(backbone, input_ids):
        model = Decoder(backbone)
        with torch.inference_mode():
            return model.generate(input_ids, 16)
"""
_HF_GENERATE = """
    from transformers import AutoModelForCausalLM

    def main(input_ids):
        model = AutoModelForCausalLM.from_pretrained("gpt2")
        return model.generate(input_ids=input_ids, max_new_tokens=8)
"""


def test_a_method_called_under_inference_mode_by_every_module_that_can_hold_its_class(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "proj/__init__.py": "",
        "proj/decoder.py": _DECODER_MODULE,
        "proj/generate.py": _GENERATE_UNDER_INFERENCE_MODE,
        "proj/hf_generate.py": _HF_GENERATE,
    })
    assert project_findings(tmp_path, "proj/decoder.py") == []


def test_a_method_called_with_grad_by_a_module_that_imports_its_class_is_reported(tmp_path):
    write(tmp_path, {
        "pyproject.toml": "",
        "proj/__init__.py": "",
        "proj/decoder.py": _DECODER_MODULE,
        "proj/generate.py": _GENERATE_UNDER_INFERENCE_MODE,
        "proj/hf_generate.py": _HF_GENERATE.replace("from transformers import AutoModelForCausalLM",
                                                    "from transformers import AutoModelForCausalLM\n"
                                                    "    from proj.generate import Decoder"),
    })
    assert [code for _, code in project_findings(tmp_path, "proj/decoder.py")] == ["ML102"]


# A metric module built and called in one expression (TopKAccuracy(k=2)(preds, labels)): its
# class, in another module, computes under @torch.no_grad(), so the slot it fills holds no graph.
_TOP_K_ACCURACY = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    class TopKAccuracy(nn.Module):
        def __init__(self, k):
            super().__init__()
            self.k = k

        @torch.no_grad()
        def forward(self, logits, labels):
            _, idx = torch.topk(F.softmax(logits, dim=1), self.k, dim=1)
            return labels.view(-1, 1).eq(idx).float().mean()
"""
_FILLS_A_SLOT_PER_STEP = """
    import torch
    import torch.nn.functional as F
    from proj.metrics import TopKAccuracy

    def train(model, loader, optimizer, steps):
        result = {"loss": torch.zeros(steps), "rank@1": torch.zeros(steps)}
        for i, batch in enumerate(loader):
            logits, labels = model(batch["x"]), batch["y"]
            loss = F.cross_entropy(logits, labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            result["loss"][i] = loss.detach()
            result["rank@1"][i] = TopKAccuracy(k=2)(logits, labels)
        return result
"""


def test_a_module_built_where_it_is_called_is_read_through_its_class_in_another_module(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "proj/__init__.py": "", "proj/metrics.py": _TOP_K_ACCURACY,
                     "proj/task.py": _FILLS_A_SLOT_PER_STEP})
    assert project_findings(tmp_path, "proj/task.py") == []


def test_the_same_module_without_no_grad_keeps_the_graph_in_the_slot(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "proj/__init__.py": "",
                     "proj/metrics.py": _TOP_K_ACCURACY.replace("        @torch.no_grad()\n", "").replace(
                         "return labels.view(-1, 1).eq(idx).float().mean()", "return F.softmax(logits, dim=1).mean()"),
                     "proj/task.py": _FILLS_A_SLOT_PER_STEP})
    assert [code for _, code in project_findings(tmp_path, "proj/task.py")] == ["ML101"]


# ML103: a fixed-point loop differentiates the graph made before it, again every iteration; the
# name is rebound inside the loop only in the other arm of the if.
_FIXED_POINT = """
import torch
from torch.autograd import grad as torch_grad

def fixed_point(params, hparams, K, fp_map, outer_loss, tol=1e-10, set_grad=True, stochastic=False):
    params = [w.detach().requires_grad_(True) for w in params]
    o_loss = outer_loss(params, hparams)
    grad_outer_w, grad_outer_hparams = get_outer_gradients(o_loss, params, hparams)
    if not stochastic:
        w_mapped = fp_map(params, hparams)
    vs = [torch.zeros_like(w) for w in params]
    vs_vec = cat_list_to_tensor(vs)
    for k in range(K):
        vs_prev_vec = vs_vec
        if stochastic:
            w_mapped = fp_map(params, hparams)
            vs = torch_grad(w_mapped, params, grad_outputs=vs, retain_graph=False)
        else:
            vs = torch_grad(w_mapped, params, grad_outputs=vs, retain_graph=True)
        vs = [v + g for v, g in zip(vs, grad_outer_w)]
        vs_vec = cat_list_to_tensor(vs)
        if float(torch.norm(vs_vec - vs_prev_vec)) < tol:
            break
    if stochastic:
        w_mapped = fp_map(params, hparams)
    grads = torch_grad(w_mapped, hparams, grad_outputs=vs, allow_unused=True)
    grads = [g + v if g is not None else v for g, v in zip(grads, grad_outer_hparams)]
    if set_grad:
        update_tensor_grads(hparams, grads)
    return grads
"""


def test_a_graph_made_before_the_loop_and_rebound_only_in_the_other_arm_is_differentiated_again():
    assert findings(_FIXED_POINT) == []


def test_the_same_graph_made_again_before_the_call_in_its_own_arm_is_reported():
    # (and nothing after the loop differentiates the last one)
    source = _FIXED_POINT.replace(
        "        else:\n            vs = torch_grad(",
        "        else:\n            w_mapped = fp_map(params, hparams)\n            vs = torch_grad(").replace(
        "    grads = torch_grad(w_mapped, hparams, grad_outputs=vs, allow_unused=True)", "    grads = vs")
    assert [code for _, code in findings(source)] == ["ML103"]


# ML206: three wrappers made in one branch; the constructor then reads an attribute of the
# first through its wrapper (AttributeError whenever the branch runs): no step ever runs with
# any of them, including the two made after it.
_WRAPS_THEN_READS = """
import torch

class Trainer:
    def __init__(self, model, optimizer, multi_gpu=False):
        self.model = model
        if multi_gpu:
            self.generator = torch.nn.DataParallel(self.model.generator)
            self.discriminator = torch.nn.DataParallel(self.model.discriminator)
            if self.model.generator_test is not None:
                self.generator_test = torch.nn.DataParallel(self.model.generator_test)
            else:
                self.generator_test = None
        else:
            self.generator = self.model.generator
            self.discriminator = self.model.discriminator
            self.generator_test = self.model.generator_test
        self.optimizer = optimizer
        self.visualize_z = torch.randn(16, self.generator.z_dim)

    def train_step(self, z, x):
        loss = self.discriminator(self.generator(z)).mean() - self.discriminator(x).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return self.generator_test(z)
"""


def test_wrappers_made_before_a_read_that_stops_the_program_never_scatter():
    assert findings(_WRAPS_THEN_READS) == []


def test_the_same_wrappers_without_the_read_are_reported():
    source = _WRAPS_THEN_READS.replace("        self.visualize_z = torch.randn(16, self.generator.z_dim)\n", "")
    assert [code for _, code in findings(source)] == ["ML206", "ML206", "ML206"]


# ML101: labels taken out of the batch (moved to the device on the way) are data, though the
# training loop's loss was computed from them; keeping them per batch keeps no graph.
_LABELS_OF_THE_BATCH = """
import torch

def run(model, data_loader, device, optimizer):
    for batch in data_loader["train"]:
        batch = {k: v.to(device) for k, v in batch.items()}
        labels = batch.pop("labels")
        optimizer.zero_grad()
        logits = model(**batch)
        loss = compute_loss(logits, labels)
        loss.backward()
        optimizer.step()
    golds = []
    model.eval()
    for batch in data_loader["val"]:
        batch = {k: v.to(device) for k, v in batch.items()}
        labels = batch.pop("labels")
        with torch.no_grad():
            logits = model(**batch)
        golds.append(labels.cpu())
    return golds
"""


def test_labels_taken_out_of_a_batch_are_data_whatever_loss_they_reach():
    assert findings(_LABELS_OF_THE_BATCH) == []


def test_a_part_taken_out_of_the_model_output_is_still_reported():
    source = _LABELS_OF_THE_BATCH.replace('        golds.append(labels.cpu())',
                                          '        golds.append(model(**batch).pop("hidden").cpu())')
    assert "ML101" in [code for _, code in findings(source)]


# ML201: the dry run before an export, on a zeros tensor converted to half precision in a branch
# (img, model = img.half(), model.half()): still made-up input.
_EXPORT_DRY_RUN = """
import torch
from io import BytesIO

def export(weights, half, load_checkpoint):
    model = load_checkpoint(weights, map_location="cpu")
    img = torch.zeros(1, 3, 640, 640)
    if half:
        img, model = img.half(), model.half()
    model.eval()
    y = model(img)  # dry run
    with BytesIO() as f:
        torch.onnx.export(model, img, f)
        return f.getvalue()
"""


def test_a_dry_run_on_a_converted_made_up_tensor_before_export():
    assert findings(_EXPORT_DRY_RUN) == []


def test_a_forward_on_an_image_read_from_disk_before_export_is_reported():
    source = _EXPORT_DRY_RUN.replace("    img = torch.zeros(1, 3, 640, 640)", "    img = load_image(weights)").replace(
        "    y = model(img)  # dry run", "    y = model(img)\n    print(y.argmax())")
    assert [code for _, code in findings(source)] == ["ML201"]


# ML201: a few-shot method handed in as a parameter annotated with the project's base class (any
# subclass may come), one of which fine-tunes inside its forward: it may need grad on.
_FEW_SHOT_METHODS = """
    import torch
    from torch import nn

    class FewShotMethod(nn.Module):
        def forward(self, model, x_s, x_q, y_s, y_q):
            raise NotImplementedError

    class SimpleShot(FewShotMethod):
        def forward(self, model, x_s, x_q, y_s, y_q):
            with torch.no_grad():
                return None, (model(x_q) @ model(x_s).t()).argmax(-1)

    class Finetune(FewShotMethod):
        def __init__(self, steps):
            super().__init__()
            self.steps = steps

        def forward(self, model, x_s, x_q, y_s, y_q):
            head = nn.Linear(8, 5)
            optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
            for _ in range(self.steps):
                optimizer.zero_grad()
                head(model(x_s)).sum().backward()
                optimizer.step()
            return None, head(model(x_q)).argmax(-1)
"""
_EVALUATE_A_METHOD = """
    import torch
    from proj.methods import FewShotMethod

    def train(loader, model, method: FewShotMethod, optimizer, device):
        model.train()
        for i, (x_s, x_q, y_s, y_q) in enumerate(loader):
            loss, preds_q = method(x_s=x_s.to(device), x_q=x_q.to(device), y_s=y_s, y_q=y_q, model=model)
            optimizer.zero_grad()
            loss.mean().backward()
            optimizer.step()
            if i % 100 == 0:
                test(loader, model, method, device)

    def test(loader, model, method: FewShotMethod, device):
        model.eval()
        method.eval()
        test_acc = 0.
        test_loss = 0.
        for x_s, x_q, y_s, y_q in loader:
            loss, preds_q = method(x_s=x_s.to(device), x_q=x_q.to(device), y_s=y_s, y_q=y_q, model=model)
            test_acc += (preds_q == y_q).float().mean()
            if loss is not None:
                test_loss += loss.detach().mean()
        return test_acc, test_loss
"""


def test_a_method_handed_in_may_be_the_project_s_one_that_fine_tunes_in_its_forward(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "proj/__init__.py": "", "proj/methods.py": _FEW_SHOT_METHODS,
                     "proj/evaluate.py": _EVALUATE_A_METHOD})
    assert project_findings(tmp_path, "proj/evaluate.py") == []


def test_a_method_handed_in_where_no_forward_differentiates_is_reported(tmp_path):
    methods = _FEW_SHOT_METHODS.replace("                head(model(x_s)).sum().backward()\n", "")
    write(tmp_path, {"pyproject.toml": "", "proj/__init__.py": "", "proj/methods.py": methods,
                     "proj/evaluate.py": _EVALUATE_A_METHOD})
    assert [code for _, code in project_findings(tmp_path, "proj/evaluate.py")] == ["ML201"]


# A method of a model (an nn.Module) by a name torch never calls, that no code of an unpackaged
# repository names: relocate() wrapping itself in DataParallel never runs.
_MODEL_WITH_RELOCATE = """
    import torch
    from torch import nn

    class ABMIL(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.Linear(16, 1)
            self.classifier = nn.Linear(16, 4)

        def relocate(self):
            device = torch.device("cuda")
            if torch.cuda.device_count() > 1:
                self.attention = nn.DataParallel(self.attention, device_ids=list(range(torch.cuda.device_count())))
            self.classifier = self.classifier.to(device)

        def forward(self, h):
            weights = torch.softmax(self.attention(h), dim=0)
            return self.classifier((weights * h).sum(0))
"""
_TRAIN_ABMIL = """
    import torch
    from models.abmil import ABMIL

    def main(loader):
        model = ABMIL().to("cuda")
        optimizer = torch.optim.Adam(model.parameters())
        for h, y in loader:
            loss = torch.nn.functional.cross_entropy(model(h)[None], y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


def test_a_module_method_nothing_in_the_repository_calls_never_runs(tmp_path):
    write(tmp_path, {"models/__init__.py": "", "models/abmil.py": _MODEL_WITH_RELOCATE, "main.py": _TRAIN_ABMIL})
    assert project_findings(tmp_path, "models/abmil.py") == []


def test_the_same_method_called_by_the_training_script_is_reported(tmp_path):
    train = _TRAIN_ABMIL.replace('        model = ABMIL().to("cuda")', '        model = ABMIL()\n        model.relocate()')
    write(tmp_path, {"models/__init__.py": "", "models/abmil.py": _MODEL_WITH_RELOCATE, "main.py": train})
    assert [code for _, code in project_findings(tmp_path, "models/abmil.py")] == ["ML206"]


# ML206: a helper wraps the model, then freezes every parameter before returning it (a feature
# extractor for k-NN evaluation): no gradients or optimizer state gather on GPU 0.
_FROZEN_AFTER_WRAPPING = """
import torch
import torch.nn as nn
from torchvision import models

def get_model(arch):
    if arch == "resnet18":
        model = models.resnet18()
        model.fc = nn.Sequential()
        model = torch.nn.DataParallel(model).cuda()
    else:
        model = models.resnet50(pretrained=True)
        model.fc = nn.Sequential()
        model = torch.nn.DataParallel(model).cuda()
    for param in model.parameters():
        param.requires_grad = False
    return model
"""


def test_a_wrapper_whose_parameters_are_all_frozen_before_it_is_returned():
    assert findings(_FROZEN_AFTER_WRAPPING) == []


def test_the_same_wrapper_returned_trainable_is_reported():
    source = _FROZEN_AFTER_WRAPPING.replace("    for param in model.parameters():\n        param.requires_grad = False\n", "")
    assert [code for _, code in findings(source)] == ["ML206", "ML206"]


# ML101: a number (.item()) scaled by a value of the object's configuration, which the loss was
# scaled by too before its backward pass: a float per step, no graph.
_SCALED_BY_THE_CONFIGURATION = """
import torch

class Engine:
    def __init__(self, model, optimizer, config):
        self.model = model
        self.optimizer = optimizer
        self.config = config

    def train(self, loader, criterion):
        tot_loss = 0.0
        for mixture, src in loader:
            self.optimizer.zero_grad()
            estim = torch.nn.parallel.data_parallel(self.model, mixture.cuda(), device_ids=[0])
            cur_loss_s = criterion(estim, src)
            tot_loss += cur_loss_s.item() / self.config["model"]["num_spks"]
            cur_loss = cur_loss_s / self.config["model"]["num_spks"]
            cur_loss.backward()
            self.optimizer.step()
        return tot_loss
"""


def test_a_number_scaled_by_the_object_s_configuration_keeps_no_graph():
    assert findings(_SCALED_BY_THE_CONFIGURATION) == []


def test_the_loss_itself_scaled_by_the_configuration_is_reported():
    source = _SCALED_BY_THE_CONFIGURATION.replace('tot_loss += cur_loss_s.item() / self.config', 'tot_loss += cur_loss_s / self.config')
    assert [code for _, code in findings(source)] == ["ML101"]


# ML201: a helper method of the model (not its forward) that computes a discriminator's loss and
# backpropagates it itself; the caller reads only .item() of what it returns.
_BACKWARD_IN_A_METHOD = """
import torch
from torch import nn

class DRIT(nn.Module):
    def __init__(self):
        super().__init__()
        self.disA = nn.Linear(8, 1)
        self.disA_opt = torch.optim.Adam(self.disA.parameters())

    def update_D(self, real, fake):
        self.disA_opt.zero_grad()
        loss_D = self.backward_D(self.disA, real, fake)
        self.disA_loss = loss_D.item()
        self.disA_opt.step()

    def backward_D(self, netD, real, fake):
        pred_fake = netD(fake.detach())
        pred_real = netD(real)
        loss_D = nn.functional.softplus(pred_fake).mean() + nn.functional.softplus(-pred_real).mean()
        loss_D.backward()
        return loss_D
"""


def test_a_method_that_backpropagates_its_own_loss_needs_grad():
    assert findings(_BACKWARD_IN_A_METHOD) == []


def test_the_same_method_without_its_backward_pass_is_reported():
    source = _BACKWARD_IN_A_METHOD.replace("        loss_D.backward()\n", "")
    assert "ML201" in [code for _, code in findings(source)]


# ML206: device_ids a one-element slice of the configured GPUs: one device, a pass-through.
def test_device_ids_sliced_to_one_gpu_make_data_parallel_a_pass_through():
    source = """
import torch

def wrap_model(opt, modelG, optimizer, loader):
    modelG = torch.nn.DataParallel(modelG, device_ids=opt.gpu_ids[0:1])
    for x, y in loader:
        loss = (modelG(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
    assert findings(source) == []
    assert [code for _, code in findings(source.replace("opt.gpu_ids[0:1]", "opt.gpu_ids[0:2]"))] == ["ML206"]
    assert [code for _, code in findings(source.replace("opt.gpu_ids[0:1]", "opt.gpu_ids[1:]"))] == ["ML206"]


# ML203: an evaluation script that starts a process group of one process (its model needs a
# group): no other rank loads onto cuda:0.
_GROUP_OF_ONE = """
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

def main(rank, config):
    dist.init_process_group("nccl", "env://", rank=0, world_size=1)
    model = build_model(config).to(rank)
    checkpoint = torch.load(config.checkpoint)
    model.load_state_dict(checkpoint["state_dict"], strict=False)
    model = DDP(model, device_ids=[rank])
    evaluate(model, config)

if __name__ == "__main__":
    mp.spawn(main, nprocs=1, args=(load_config(),))
"""


def _load_severities(source: str) -> list[str]:
    return [f.severity for f in check_source(textwrap.dedent(source), "train.py", default_codes()) if f.code == "ML203"]


def test_a_process_group_of_one_process_loads_on_its_own_gpu():
    # (one process: at most the hint that a GPU-saved checkpoint comes back beside the model)
    assert _load_severities(_GROUP_OF_ONE) == ["info"]


def test_a_process_group_of_several_processes_is_reported():
    source = _GROUP_OF_ONE.replace("world_size=1", "world_size=config.world_size").replace(
        "nprocs=1", "nprocs=torch.cuda.device_count()")
    assert _load_severities(source) == ["warning"]  # the file's writer is not in view
    saving = source.replace("    evaluate(model, config)", "    evaluate(model, config)\n"
                            "    torch.save(model.module.state_dict(), config.checkpoint)")
    assert _load_severities(saving) == ["error"]


# ML104: hooks store what they see per key; after each forward the object removes its hooks and
# empties every slot (self.outputs_dict[key] = []): one forward's outputs at a time.
_EXTRACTOR_EMPTIED_PER_CALL = """
import torch

class VitExtractor:
    KEYS = ["block", "qkv"]

    def __init__(self, model):
        self.model = model
        self.hook_handlers = []
        self.outputs_dict = {}
        self._init_hooks_data()

    def _init_hooks_data(self):
        for key in VitExtractor.KEYS:
            self.outputs_dict[key] = []

    def _register_hooks(self):
        for block in self.model.blocks:
            self.hook_handlers.append(block.register_forward_hook(self._get_block_hook()))

    def _clear_hooks(self):
        for handler in self.hook_handlers:
            handler.remove()
        self.hook_handlers = []

    def _get_block_hook(self):
        def _get_block_output(model, input, output):
            self.outputs_dict["block"].append(output)
        return _get_block_output

    def get_feature_from_input(self, input_img):
        self._register_hooks()
        self.model(input_img)
        feature = self.outputs_dict["block"]
        self._clear_hooks()
        self._init_hooks_data()
        return feature
"""


def test_hook_stores_a_method_empties_slot_by_slot_after_each_forward():
    assert findings(_EXTRACTOR_EMPTIED_PER_CALL) == []


def test_hook_stores_never_emptied_are_reported():
    source = _EXTRACTOR_EMPTIED_PER_CALL.replace("        self._init_hooks_data()\n        return feature",
                                                 "        return feature").replace(
        "    def _init_hooks_data(self):\n        for key in VitExtractor.KEYS:\n            self.outputs_dict[key] = []\n",
        "    def _init_hooks_data(self):\n        for key in VitExtractor.KEYS:\n            self.outputs_dict.setdefault(key, [])\n")
    assert [code for _, code in findings(source)] == ["ML104"]


# ML101: a loop over a dict of losses turns every slot into a number before the loss is added up.
_EVERY_SLOT_TO_A_NUMBER = """
import torch

def train_epoch(model, criterion, loader, optimizer):
    train_loss = 0.0
    for batch in loader:
        preds = model(batch["img"])
        loss_dict = criterion(preds, batch)
        optimizer.zero_grad()
        loss_dict["loss"].backward()
        optimizer.step()
        loss_str = ""
        for idx, (key, value) in enumerate(loss_dict.items()):
            loss_dict[key] = value.item()
            if key == "loss":
                continue
            loss_str += f"{key}: {loss_dict[key]:.4f}"
        train_loss += loss_dict["loss"]
    return train_loss
"""


def test_every_slot_of_a_dict_turned_into_a_number_in_a_loop_over_it():
    assert findings(_EVERY_SLOT_TO_A_NUMBER) == []


def test_slots_a_continue_may_skip_are_still_reported():
    source = _EVERY_SLOT_TO_A_NUMBER.replace("            loss_dict[key] = value.item()\n            if key == \"loss\":\n                continue\n",
                                             "            if key == \"loss\":\n                continue\n            loss_dict[key] = value.item()\n")
    assert [code for _, code in findings(source)] == ["ML101"]


# ML203: an optimizer's state loaded into a name read only by optimizer.load_state_dict: the
# optimizer keeps the loaded tensors as its state (no second copy), as when the load is passed
# straight in. A model's state loaded the same way is a second copy while it loads (a hint).
_OPTIMIZER_STATE_THROUGH_A_NAME = """
import torch

class Trainer:
    def __init__(self, model):
        self.model = model.cuda()
        self.model_optimizer = torch.optim.Adam(self.model.parameters())

    def save(self, path):
        torch.save(self.model_optimizer.state_dict(), path)

    def load(self, path):
        optimizer_dict = torch.load(path)
        self.model_optimizer.load_state_dict(optimizer_dict)
"""


def test_optimizer_state_loaded_into_a_name_only_the_optimizer_reads():
    assert findings(_OPTIMIZER_STATE_THROUGH_A_NAME) == []


def test_a_name_read_again_after_the_optimizer_takes_it_is_still_a_hint():
    source = _OPTIMIZER_STATE_THROUGH_A_NAME.replace(
        "        self.model_optimizer.load_state_dict(optimizer_dict)\n",
        "        self.model_optimizer.load_state_dict(optimizer_dict)\n        self.model.load_state_dict(optimizer_dict)\n")
    assert findings(source) == [(13, "ML203")]


def test_a_model_state_loaded_into_a_name_is_still_a_hint():
    source = _OPTIMIZER_STATE_THROUGH_A_NAME.replace("self.model_optimizer.load_state_dict(optimizer_dict)",
                                                     "self.model.load_state_dict(optimizer_dict)")
    assert findings(source) == [(13, "ML203")]


# ML114: a count reduced over every dimension is a 0-dim tensor (one number) on ctx.
def test_a_count_reduced_over_every_dimension_on_ctx_is_quiet():
    source = """
        import torch

        class Attend(torch.autograd.Function):
            @staticmethod
            def forward(ctx, q, idx):
                _, counts = torch.unique_consecutive(idx, return_counts=True)
                n_max = counts.max()
                ctx.n_max = n_max
                ctx.rows = counts.max(0)[0] * q.sum()
                ctx.save_for_backward(q)
                return q * 2

            @staticmethod
            def backward(ctx, grad):
                (q,) = ctx.saved_tensors
                return grad * 2 * ctx.n_max, None
    """
    assert findings(source) == [(10, "ML114")]


# Code that cannot run: a package whose modules import, relative to themselves, modules or
# names the project no longer has (stale research code). Importing the module fails, and so
# does every module of a package whose __init__ imports it.
_STALE_PACKAGE = {
    "pyproject.toml": "",
    "asr/__init__.py": "",
    "asr/utils/__init__.py": "",
    "asr/utils/dataset.py": "class SplitDataset:\n    pass\n",
    "asr/models/__init__.py": "",
    "asr/models/convnet/__init__.py": "from .train import Trainer\n",
    "asr/models/convnet/train.py": """
        import torch
        from ...utils.dataset import AudioSplitDataset

        class Trainer:
            def __init__(self, model):
                self.model = model

            def test(self, loader):
                self.model.eval()
                for x in loader:
                    out = self.model(x)
    """,
    "asr/models/convnet/model.py": """
        import torch
        from torch import nn

        def evaluate(encoder, loader):
            encoder.eval()
            return [encoder(x).argmax(-1).tolist() for x in loader]
    """,
    "train.py": """
        from asr.models.convnet.train import Trainer
        from asr.models.convnet.model import evaluate

        if __name__ == "__main__":
            Trainer(None).test([])
    """,
}


@pytest.mark.parametrize("order", [("train.py", "model.py"), ("model.py", "train.py")])
def test_a_module_importing_a_name_its_project_no_longer_defines_never_runs(tmp_path, order):
    """Whichever module is asked first (the package's __init__ and train.py import each other)."""
    write(tmp_path, _STALE_PACKAGE)
    # train.py, and every module of the package: its __init__ imports the stale module
    for name in order:
        assert project_findings(tmp_path, f"asr/models/convnet/{name}") == []


# A stale copy in a backup/ package: its absolute import names what the project's one util/utils.py
# no longer defines. Importing it fails, run as a script (its folder first on the path) or as a module.
_BACKUP_COPY = {
    ".git/HEAD": "",
    "util/__init__.py": "",
    "util/utils.py": "def warm_up_lr(optimizer):\n    pass\n",
    "backup/__init__.py": "",
    "backup/train.py": """
        import torch
        from util.utils import warm_up_lr, save_checkpoint

        def evaluate(model, loader):
            model.eval()
            return [model(x).argmax(-1).tolist() for x in loader]
    """,
}


@pytest.mark.parametrize("change, expected", [
    (None, []),
    # the name is there: the module imports, and is checked
    (("util/utils.py", "def warm_up_lr(optimizer):\n    pass\n\ndef save_checkpoint(state):\n    pass\n"),
     [(6, "ML201")]),
    # another util/ beside the script (its folder comes first when it runs as one): unknown which
    (("backup/util/utils.py", "def save_checkpoint(state):\n    pass\n"), [(6, "ML201")]),
    # the project puts folders on the import path: another util may come first
    (("run.py", "import sys\nsys.path.insert(0, 'lib')\n"), [(6, "ML201")]),
])
def test_a_module_whose_absolute_import_names_what_the_project_lacks_never_runs(tmp_path, change, expected):
    files = dict(_BACKUP_COPY)
    if change is not None:
        files[change[0]] = change[1]
        if change[0].startswith("backup/util/"):
            files["backup/util/__init__.py"] = ""
    write(tmp_path, files)
    assert project_findings(tmp_path, "backup/train.py") == expected


def test_a_stale_module_is_checked_again_once_its_import_is_mended(tmp_path):
    write(tmp_path, _STALE_PACKAGE)

    def cached_findings() -> list[tuple[int, str]]:
        result = check_paths([str(tmp_path / "asr/models/convnet/train.py")], Config(), use_cache=True)
        return sorted((f.line, f.code) for f in result.findings)

    assert cached_findings() == []
    assert cached_findings() == []  # from the cache
    (tmp_path / "asr/utils/dataset.py").write_text("class AudioSplitDataset:\n    pass\n")
    assert cached_findings() == [(11, "ML201")]


def test_a_module_whose_imports_resolve_is_checked(tmp_path):
    files = dict(_STALE_PACKAGE)
    files["asr/utils/dataset.py"] = "class SplitDataset:\n    pass\n\nclass AudioSplitDataset:\n    pass\n"
    write(tmp_path, files)
    assert project_findings(tmp_path, "asr/models/convnet/train.py") == [(11, "ML201")]


def test_a_missing_module_of_the_project_makes_its_importer_stale(tmp_path):
    files = dict(_STALE_PACKAGE)
    files["asr/models/convnet/train.py"] = files["asr/models/convnet/train.py"].replace(
        "from ...utils.dataset import AudioSplitDataset", "from ...utils.audio import load_audio")
    write(tmp_path, files)
    assert project_findings(tmp_path, "asr/models/convnet/train.py") == []
    # an extension built in place (audio.cpython-311-x86_64-linux-gnu.so) may be what it imports
    (tmp_path / "asr/utils/audio.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\0")
    assert project_findings(tmp_path, "asr/models/convnet/train.py") == [(11, "ML201")]


@pytest.mark.parametrize("provider", [
    "from .extra import *\n",  # a star import may bring it in
    "def __getattr__(name):\n    return name\n",  # a module-level __getattr__ answers any name
    "for name in ('AudioSplitDataset',):\n    globals()[name] = type(name, (), {})\n",  # bound dynamically
])
def test_a_module_that_may_bind_any_name_is_taken_to_import(tmp_path, provider):
    files = dict(_STALE_PACKAGE)
    files["asr/utils/dataset.py"] = "class SplitDataset:\n    pass\n" + provider
    files["asr/utils/extra.py"] = ""
    write(tmp_path, files)
    assert project_findings(tmp_path, "asr/models/convnet/train.py") == [(11, "ML201")]


def test_a_stale_import_under_try_does_not_stop_the_module(tmp_path):
    files = dict(_STALE_PACKAGE)
    files["asr/models/convnet/train.py"] = files["asr/models/convnet/train.py"].replace(
        "from ...utils.dataset import AudioSplitDataset",
        "try:\n            from ...utils.dataset import AudioSplitDataset\n        except ImportError:\n            AudioSplitDataset = None")
    write(tmp_path, files)
    assert project_findings(tmp_path, "asr/models/convnet/train.py") == [(14, "ML201")]


# ML201: a discriminator in eval mode fed the trained model's features (an unknown call's
# output, also fed to the model's head and so backpropagated): its output trains the feature
# extractor through it, the graph is needed. Fed the data batch instead, it is a frozen
# network run with grad on beside a trained one (a teacher).
_DISCRIMINATOR_ON_FEATURES = """
import torch
import torch.nn.functional as F
from torch import nn


class Client:
    def __init__(self, model, discriminator, device):
        self.model = model.to(device)
        self.discriminator = discriminator.to(device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.device = device

    def fit(self, loader):
        self.model.train()
        self.discriminator.eval()
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            features = self.model.base(x)
            logit = self.model.classifier(F.relu(features))
            cross_entropy = F.cross_entropy(logit, y)
            client_index = self.discriminator(features)
            kl_loss = F.kl_div(F.log_softmax(client_index, -1), torch.full_like(client_index, 0.5))
            loss = cross_entropy + kl_loss
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
"""


def test_an_eval_mode_module_fed_features_the_step_backpropagates_is_quiet():
    assert findings(_DISCRIMINATOR_ON_FEATURES) == []


def test_an_eval_mode_module_fed_the_data_beside_a_trained_model_is_reported():
    source = _DISCRIMINATOR_ON_FEATURES.replace("self.discriminator(features)", "self.discriminator(x)")
    assert findings(source) == [(22, "ML201")]


# ML201: a linear probe (a class of the file whose forward runs one nn.Linear) built in the
# function that trains it, evaluated in eval mode with grad on: its graph saves only its input
# and weight, alive anyway. A deeper head is reported.
_LINEAR_PROBE = """
import torch
from torch import nn


class LogisticRegression(nn.Module):
    def __init__(self, num_features, num_classes):
        super().__init__()
        self.fc = nn.Linear(num_features, num_classes)

    def forward(self, x):
        z = self.fc(x)
        return z


def evaluate(x, y, split, device, epochs=100):
    x = x.detach().to(device)
    classifier = LogisticRegression(x.size(1), int(y.max()) + 1).to(device)
    optimizer = torch.optim.Adam(classifier.parameters(), lr=0.01)
    for epoch in range(epochs):
        classifier.train()
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(classifier(x[split["train"]]), y[split["train"]])
        loss.backward()
        optimizer.step()
        classifier.eval()
        y_pred = classifier(x[split["test"]]).argmax(-1).detach().cpu().numpy()
        print(epoch, y_pred.mean())
"""


def test_a_linear_probe_bound_in_the_function_evaluated_with_grad_on_is_quiet():
    assert findings(_LINEAR_PROBE) == []


def test_a_deeper_head_evaluated_the_same_way_is_reported():
    source = _LINEAR_PROBE.replace("        z = self.fc(x)\n", "        z = self.fc(torch.relu(self.fc(x)))\n")
    assert findings(source) == [(27, "ML201")]


# ML102: the legacy Variable(x, requires_grad=True) is a new leaf (grad_fn None) sharing x's
# storage: rebuilding a weight from itself through it chains nothing.
_VARIABLE_REWRAP = """
import torch
from torch import nn


def approximate_isometry(model, mask, n_iter, lr):
    def optimize(w, name):
        flattened = w.view(w.size(0), -1)
        identity = torch.eye(w.size(0))
        w_ = torch.autograd.Variable(flattened, requires_grad=True)
        optim = torch.optim.Adam([w_], lr)
        for i in range(n_iter):
            loss = nn.MSELoss()(torch.matmul(w_, w_.t()), identity)
            optim.zero_grad()
            loss.backward()
            optim.step()
            if mask is not None:
                w_ = torch.mul(w_, mask[name])
            w_ = torch.autograd.Variable(w_, requires_grad=True)
            optim = torch.optim.Adam([w_], lr)
        return w_.view(w.shape)

    for name, m in model.named_modules():
        if isinstance(m, nn.Conv2d):
            m.weight.data.copy_(optimize(m.weight, name))
"""


def test_a_weight_rewrapped_in_a_variable_every_iteration_is_quiet():
    assert findings(_VARIABLE_REWRAP) == []


def test_a_weight_rebuilt_from_itself_without_the_rewrap_is_reported():
    source = _VARIABLE_REWRAP.replace("            w_ = torch.autograd.Variable(w_, requires_grad=True)\n", "")
    assert [code for _, code in findings(source)] == ["ML102"]


# A branch of __init__ on one of its parameters that every construction in the repository
# turns off: ``if parallel:`` with ``parallel=True`` by default, built only as
# ``Wrapper(model, parallel=False)``. Its DataParallel never runs.
_WRAPPER_BUILT_WITHOUT_ITS_FLAG = {
    "models/__init__.py": "",
    "models/composite.py": """
        from torch import nn

        class CompositeModelWrapper(nn.Module):
            def __init__(self, comp_model, parallel=True):
                super().__init__()
                self.comp_model = comp_model
                if parallel:
                    self.comp_model = nn.DataParallel(self.comp_model)

            def forward(self, x):
                return self.comp_model(x)

        def get_composite_model(model):
            return CompositeModelWrapper(model, parallel=False)
    """,
    "evaluate.py": """
        import torch
        from models.composite import get_composite_model

        if __name__ == "__main__":
            model = get_composite_model(torch.nn.Linear(4, 2).cuda())
            print(model(torch.randn(8, 4).cuda()))
    """,
}


def test_an_init_branch_every_construction_turns_off_never_runs(tmp_path):
    write(tmp_path, _WRAPPER_BUILT_WITHOUT_ITS_FLAG)
    assert project_findings(tmp_path, "models/composite.py") == []


@pytest.mark.parametrize("construction", [
    "CompositeModelWrapper(model)",  # the default turns it on
    "CompositeModelWrapper(model, True)",
    "CompositeModelWrapper(model, parallel=torch.cuda.device_count() > 1)",  # not a literal
])
def test_an_init_branch_a_construction_may_take_is_checked(tmp_path, construction):
    files = dict(_WRAPPER_BUILT_WITHOUT_ITS_FLAG)
    files["evaluate.py"] = files["evaluate.py"].replace(
        "from models.composite import get_composite_model",
        "from models.composite import CompositeModelWrapper, get_composite_model").replace(
        "    print(", f"    print({construction}, ")
    write(tmp_path, files)
    assert [code for _, code in project_findings(tmp_path, "models/composite.py")] == ["ML206"]


# ML206: a wrapper kept on an object and only handed to a function of another module whose
# whole body runs under no_grad (decorated by a wrapper of its module): an evaluator's model.
_EVALUATOR = {
    "tester.py": """
        import torch

        def no_grad_wrapper(func):
            def new_func(*args, **kwargs):
                with torch.no_grad():
                    return func(*args, **kwargs)
            return new_func

        @no_grad_wrapper
        def get_cand_err(model, cand, loader):
            model.train()
            for x, _ in loader:
                model(x.cuda(), cand)
            model.eval()
            return sum(model(x.cuda(), cand).argmax(1).eq(y.cuda()).sum().item() for x, y in loader)
    """,
    "search.py": """
        import torch
        from torch import nn
        from tester import get_cand_err

        class EvolutionSearcher:
            def __init__(self, supernet: nn.Module, loader):
                self.model = torch.nn.DataParallel(supernet).cuda()
                self.model.load_state_dict(torch.load("supernet.pth", map_location="cpu"))
                self.loader = loader

            def score(self, cand):
                return get_cand_err(self.model, cand, self.loader)

        if __name__ == "__main__":
            EvolutionSearcher(nn.Linear(4, 4), []).score((0, 1))
    """,
}


def test_a_wrapper_only_handed_to_a_function_running_under_no_grad_elsewhere_is_quiet(tmp_path):
    write(tmp_path, {"pyproject.toml": "", **_EVALUATOR})
    assert project_findings(tmp_path, "search.py") == []


def test_a_wrapper_handed_to_a_function_of_another_module_with_grad_is_reported(tmp_path):
    files = {"pyproject.toml": "", **_EVALUATOR}
    files["tester.py"] = files["tester.py"].replace("        @no_grad_wrapper\n", "")
    write(tmp_path, files)
    assert [code for _, code in project_findings(tmp_path, "search.py")] == ["ML206"]


def test_a_module_of_a_stale_package_put_on_the_path_elsewhere_is_checked(tmp_path):
    """``sys.path.append(".../convnet")`` then ``from model import evaluate``: model.py, which has
    no relative import of its own, runs without its package's __init__."""
    files = dict(_STALE_PACKAGE)
    files["train.py"] = """
        import os
        import sys
        sys.path.append(os.path.join(os.path.dirname(__file__), "asr/models/convnet"))
        from model import evaluate

        if __name__ == "__main__":
            evaluate(None, [])
    """
    write(tmp_path, files)
    assert project_findings(tmp_path, "asr/models/convnet/model.py") == [(6, "ML201")]
    assert project_findings(tmp_path, "asr/models/convnet/train.py") == []  # its own import still fails


# ML101: a sum computed under no_grad records nothing: ``total_loss += loss`` inside ``with
# torch.no_grad():`` holds no graph, whatever ``loss`` carries. An append keeps the tensor itself.
_SUM_UNDER_NO_GRAD = """
import torch


def train(model, loader, optimizer, criterion):
    total_loss = 0
    for data, target in loader:
        optimizer.zero_grad()
        loss = criterion(model(data), target)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            total_loss += loss
    return total_loss
"""


def test_a_sum_taken_under_no_grad_is_quiet():
    assert findings(_SUM_UNDER_NO_GRAD) == []


def test_an_append_under_no_grad_keeps_the_graph_and_is_reported():
    source = _SUM_UNDER_NO_GRAD.replace("total_loss += loss", "total_loss.append(loss)").replace(
        "total_loss = 0", "total_loss = []")
    assert findings(source) == [(13, "ML101")]


# ML103: per-class gradients over one graph made before the loop by a callee memlint cannot read
# (``self.predict``, given to the constructor): each iteration backpropagates through it again.
_PER_CLASS_GRADIENTS = """
import torch


class FABAttack:
    def __init__(self, predict, device):
        self.predict = predict
        self.device = device

    def get_diff_logits_grads_batch(self, imgs, la):
        im = imgs.clone().requires_grad_()
        with torch.enable_grad():
            y = self.predict(im)
        g2 = torch.zeros([y.shape[-1], *imgs.size()]).to(self.device)
        grad_mask = torch.zeros_like(y)
        for counter in range(y.shape[-1]):
            im.grad = None
            grad_mask[:, counter] = 1.0
            y.backward(grad_mask, retain_graph=True)
            grad_mask[:, counter] = 0.0
            g2[counter] = im.grad.data
        y2 = y.detach()
        return y2 - y2[torch.arange(imgs.shape[0]), la].unsqueeze(1), g2.detach()
"""


def test_per_class_gradients_over_a_graph_made_before_the_loop_are_quiet():
    assert findings(_PER_CLASS_GRADIENTS) == []


def test_a_graph_rebuilt_every_step_and_retained_is_reported():
    source = """
import torch


def grads(model, loader, optimizer):
    for x, target in loader:
        im = x.clone().requires_grad_()
        y = model(im)
        loss = torch.nn.functional.cross_entropy(y, target)
        loss.backward(retain_graph=True)
        optimizer.step()
"""
    assert findings(source) == [(10, "ML103")]


# ML203: an evaluation script whose module also holds a distributed evaluator class (its
# torch.distributed queries serve the trainer that imports the class): the function that loads
# is only called by the script's own __main__, which starts no process group: one process.
_EVALUATION_SCRIPT = {
    "evaluation.py": """
        import torch
        import torch.distributed as dist

        class MscEval:
            def __call__(self, net, hist):
                if dist.is_initialized():
                    dist.all_reduce(hist, dist.ReduceOp.SUM)
                return hist

        def evaluate(respth, net):
            net.cuda()
            net.load_state_dict(torch.load(respth))
            net.eval()
            return MscEval()(net, torch.zeros(3).cuda())

        if __name__ == "__main__":
            evaluate("./checkpoints/model.pth", torch.nn.Linear(4, 3))
    """,
    "train.py": """
        import torch
        import torch.distributed as dist
        from evaluation import MscEval

        def main(net):
            dist.init_process_group("nccl")
            net = torch.nn.parallel.DistributedDataParallel(net.cuda())
            torch.save(net.module.state_dict(), "./checkpoints/model.pth")
            MscEval()(net, torch.zeros(3).cuda())

        if __name__ == "__main__":
            main(torch.nn.Linear(4, 3))
    """,
}


def test_a_load_only_this_script_runs_is_no_every_rank_error(tmp_path):
    write(tmp_path, {"pyproject.toml": "", **_EVALUATION_SCRIPT})
    result = check_paths([str(tmp_path / "evaluation.py")], Config(), use_cache=False)
    assert [f.severity for f in result.findings if f.code == "ML203"] in ([], ["info"], ["warning"])


def test_a_load_a_distributed_trainer_calls_is_an_every_rank_error(tmp_path):
    files = {"pyproject.toml": "", **_EVALUATION_SCRIPT}
    files["train.py"] = files["train.py"].replace("from evaluation import MscEval", "from evaluation import MscEval, evaluate") \
        .replace("            MscEval()(net, torch.zeros(3).cuda())", "            evaluate(\"./checkpoints/model.pth\", net.module)")
    write(tmp_path, files)
    result = check_paths([str(tmp_path / "evaluation.py")], Config(), use_cache=False)
    assert [(f.code, f.severity) for f in result.findings if f.code == "ML203"] == [("ML203", "error")]


# ML206: a model file's __main__ smoke test (one forward of made-up input through DataParallel)
# is inference; a function of the module with its own ``model`` parameter or local does not read
# the global, so it cannot train it.
_MODEL_FILE_SMOKE_TEST = """
import torch
from torch import nn


class C3D(nn.Module):
    def __init__(self, num_classes=600):
        super().__init__()
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.fc(x)


def get_fine_tuning_parameters(model, ft_portion):
    if ft_portion == "complete":
        return model.parameters()
    return [p for n, p in model.named_parameters() if "fc" in n]


def get_model(**kwargs):
    model = C3D(**kwargs)
    return model


if __name__ == "__main__":
    model = get_model(num_classes=600)
    model = model.cuda()
    model = nn.DataParallel(model, device_ids=None)
    output = model(torch.randn(8, 16))
    print(output.shape)
"""


def test_a_model_files_smoke_test_through_data_parallel_is_quiet():
    assert findings(_MODEL_FILE_SMOKE_TEST) == []


def test_a_function_of_the_module_reading_the_global_wrapper_may_train_it():
    source = _MODEL_FILE_SMOKE_TEST.replace(
        'def get_model(**kwargs):', 'def train_global(loader, optimizer):\n'
        '    for x, y in loader:\n        nn.functional.cross_entropy(model(x), y).backward()\n'
        '        optimizer.step()\n\n\ndef get_model(**kwargs):')
    assert [code for _, code in findings(source)] == ["ML206"]


# An autograd.Function's backward runs with grad off unless the outer pass asks for
# create_graph=True: an eval-mode module run there records nothing for sure only in the first
# case, so the grad-mode waste rules stay quiet (MAYBE_OFF). The same call in a plain class is
# reported.
_MODULE_IN_A_FUNCTIONS_BACKWARD = """
import torch
from torch import nn

scorer = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4)).eval()


class Rescale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        weights = scorer(x)
        return grad_output * weights.detach().sigmoid()
"""


def test_a_module_run_in_a_functions_backward_is_quiet():
    assert findings(_MODULE_IN_A_FUNCTIONS_BACKWARD) == []


def test_the_same_call_in_a_plain_class_is_reported():
    source = _MODULE_IN_A_FUNCTIONS_BACKWARD.replace("class Rescale(torch.autograd.Function):", "class Rescale:")
    assert findings(source) == [(17, "ML201")]


def test_a_wrapper_handed_to_a_function_of_the_module_through_its_own_model_parameter_is_reported():
    """``train(loader, model, optimizer)`` names ``model`` as its own parameter, but the wrapper is
    what it is handed: it reads the wrapper (and trains it through an optimizer helper)."""
    source = _MODEL_FILE_SMOKE_TEST.replace(
        'def get_model(**kwargs):', 'def train(loader, model, optimizer):\n'
        '    model.train()\n    for x, y in loader:\n        optimizer.optim(nn.functional.cross_entropy(model(x), y))\n\n\n'
        'def get_model(**kwargs):').replace(
        "    output = model(torch.randn(8, 16))\n    print(output.shape)\n",
        "    train(loader, model, ModelOptimizer(model))\n").replace(
        "import torch\n", "import torch\nfrom helpers import ModelOptimizer, loader\n", 1)
    assert [code for _, code in findings(source)] == ["ML206"]


# ----- a program that ends when more than one GPU is visible sees one GPU --------------------------
_ONE_GPU_PROGRAM = """
    import sys
    import argparse
    import torch
    import torch.nn as nn


    def train(opt):
        model = nn.Linear(4, 2)
        model = torch.nn.DataParallel(model).cuda()
        optimizer = torch.optim.Adam(model.parameters())
        if opt.saved_model:
            state = torch.load(opt.saved_model)
            model.load_state_dict(state)
        for x, y in opt.loader:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--saved_model", default="")
        opt = parser.parse_args()
        opt.num_gpu = torch.cuda.device_count()
        if opt.num_gpu > 1:
            print("use one GPU")
            sys.exit()
        train(opt)
"""


@pytest.mark.parametrize("guard", ["opt.num_gpu > 1", "torch.cuda.device_count() >= 2",
                                   "torch.cuda.device_count() != 1"])
def test_a_program_that_exits_with_more_than_one_gpu_has_no_data_parallel_finding(guard):
    # (the checkpoint a name keeps beside the model is still a second copy: the hint stays)
    assert findings(_ONE_GPU_PROGRAM.replace("opt.num_gpu > 1", guard)) == [(13, "ML203")]


@pytest.mark.parametrize("guard, ending", [("opt.num_gpu > 8", "sys.exit()"),  # up to eight GPUs
                                           ("opt.num_gpu > 1", "pass")])  # goes on with many
def test_a_program_that_goes_on_with_several_gpus_keeps_both_findings(guard, ending):
    source = _ONE_GPU_PROGRAM.replace("opt.num_gpu > 1", guard).replace("sys.exit()", ending)
    assert findings(source) == [(10, "ML206"), (13, "ML203")]


# ----- every slot of an output moved to the host before it is collected ----------------------------
_SLOTS_MOVED = """
    import torch


    def evaluate(model, loader):
        model.eval()
        results = {"kp_3d": [], "verts": []}
        with torch.no_grad():
            for batch_input, batch_gt in loader:
                output = model(batch_input.cuda())
                for keys in output[0].keys():
                    output[0][keys] = output[0][keys].detach().cpu().numpy()
                results["kp_3d"].append(output[0]["kp_3d"])
                results["verts"].append(output[0]["verts"])
        return results
"""


def test_an_output_whose_every_slot_is_moved_to_the_host_is_not_kept_on_the_device():
    assert findings(_SLOTS_MOVED) == []


@pytest.mark.parametrize("moving, replaced", [
    ("                output[0][keys] = output[0][keys].detach().cpu().numpy()",
     "                print(keys)"),  # nothing moved
    ("                output[0][keys] = output[0][keys].detach().cpu().numpy()",  # only one slot, in a branch
     '                if keys == "kp_3d":\n                    output[0][keys] = output[0][keys].detach().cpu().numpy()'),
])
def test_an_output_whose_slots_are_not_all_moved_is_kept_on_the_device(moving, replaced):
    source = textwrap.dedent(_SLOTS_MOVED).replace(moving[4:], replaced[4:])  # (dedented as the source)
    assert source != textwrap.dedent(_SLOTS_MOVED)
    assert [code for _, code in findings(source)] == ["ML207", "ML207"]


# ----- a checkpoint loaded in a branch that returns is not kept through the loop after it ----------
_TEST_BRANCH = """
    import torch


    def main(args, model, optimizer, loader):
        if args.test:
            state_dict = torch.load(args.ckpt, map_location="cpu")
            model.load_state_dict(state_dict)
            validate(model, loader)
            return
        for epoch in range(args.epochs):
            for x, y in loader:
                loss = model(x, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
"""


def test_a_checkpoint_loaded_in_a_branch_that_returns_is_not_kept_through_training():
    assert findings(_TEST_BRANCH) == []


@pytest.mark.parametrize("leaving", ['print("tested")', 'args.test = False'])
def test_a_checkpoint_loaded_in_a_branch_that_goes_on_is_kept_through_training(leaving):
    source = _TEST_BRANCH.replace("            return\n", f"            {leaving}\n")
    assert findings(source) == [(7, "ML215")]


# ----- an episode's rollout on a global object, emptied by the update the episode loop calls ------
_EPISODE_UPDATE = """
    import torch
    from torch import nn

    policy = nn.Linear(4, 2)
    policy.saved_logprobs = []
    optimizer = torch.optim.Adam(policy.parameters())


    def update(rewards):
        loss = -(torch.stack(policy.saved_logprobs) * torch.tensor(rewards)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        del policy.saved_logprobs[:]


    def main(env, episodes):
        for episode in range(episodes):
            state, rewards = env.reset(), []
            for t in range(1000):
                probs = torch.softmax(policy(torch.as_tensor(state)), -1)
                action = torch.distributions.Categorical(probs).sample()
                policy.saved_logprobs.append(torch.log(probs[action]))
                state, reward, done, _ = env.step(action.item())
                rewards.append(reward)
                if done:
                    break
            update(rewards)
"""


@pytest.mark.parametrize("emptying", ["del policy.saved_logprobs[:]", "policy.saved_logprobs.clear()",
                                      "policy.saved_logprobs = []"])
def test_a_rollout_emptied_by_the_update_the_episode_loop_calls_is_bounded(emptying):
    assert findings(_EPISODE_UPDATE.replace("del policy.saved_logprobs[:]", emptying)) == []


@pytest.mark.parametrize("emptying", [
    "print(len(policy.saved_logprobs))",  # never emptied
    "if rewards:\n            del policy.saved_logprobs[:]",  # emptied on some calls only
    "del policy.saved_logprobs[1:]",  # keeps the first entry of every episode
])
def test_a_rollout_the_update_does_not_always_empty_is_reported(emptying):
    source = _EPISODE_UPDATE.replace("del policy.saved_logprobs[:]", emptying)
    assert [code for _, code in findings(source)] == ["ML101"]


# The update runs under a test of a module constant, and so does the append: whenever the rollout
# grows, the update that empties it runs too (Popular-RL-Algorithms' ``if UPDATE == 'Approach0':``).
_GUARDED_EPISODE_UPDATE = _EPISODE_UPDATE.replace(
    "    optimizer = torch.optim.Adam", "    UPDATE = ['Approach0', 'Approach1'][0]\n    optimizer = torch.optim.Adam",
).replace(
    "                policy.saved_logprobs.append(torch.log(probs[action]))",
    "                if UPDATE == 'Approach0':\n                    policy.saved_logprobs.append(torch.log(probs[action]))",
).replace(
    "            update(rewards)", "            if UPDATE == 'Approach0':\n                update(rewards)")


def test_a_rollout_appended_and_emptied_under_one_test_of_a_module_constant_is_bounded():
    assert findings(_GUARDED_EPISODE_UPDATE) == []


@pytest.mark.parametrize("change", [
    # the append runs in either configuration, the update in one
    ("                if UPDATE == 'Approach0':\n                    policy.saved_logprobs.append",
     "                if True:\n                    policy.saved_logprobs.append"),
    # the update runs under another test than the append's
    ("            if UPDATE == 'Approach0':\n                update(rewards)",
     "            if UPDATE == 'Approach1':\n                update(rewards)"),
    # the constant changes while the program runs (a function rebinds it)
    ("    def main(env, episodes):", "    def switch():\n        global UPDATE\n        UPDATE = 'Approach1'\n\n\n    def main(env, episodes):"),
    # a test of something that changes from one episode to the next
    ("if UPDATE == 'Approach0':\n                update", "if episode % 2:\n                update"),
])
def test_a_rollout_whose_update_may_not_run_when_it_grows_is_reported(change):
    source = _GUARDED_EPISODE_UPDATE.replace(*change)
    assert source != _GUARDED_EPISODE_UPDATE
    assert [code for _, code in findings(source)] == ["ML101"]


# ----- a checkpoint read back under the naming scheme the program writes CPU weights under ------
_WEIGHTS_BY_EPOCH = """
    from collections import OrderedDict

    import torch


    class Processor:
        def __init__(self, model, work_dir):
            self.model = model.cuda()
            self.work_dir = work_dir
            self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

        def train(self, loader, epochs):
            for epoch in range(epochs):
                for x, y in loader:
                    loss = torch.nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
                model_path = '{}/epoch{}_model.pt'.format(self.work_dir, epoch + 1)
                state_dict = self.model.state_dict()
                weights = OrderedDict([[k.split('module.')[-1], v.cpu()] for k, v in state_dict.items()])
                torch.save(weights, model_path)
                torch.save({'optimizer': self.optimizer.state_dict()}, self.work_dir + '/last_optimizer.pt')

        def best(self, epoch):
            weights = torch.load(self.work_dir + '/epoch' + str(epoch) + '_model.pt')
            self.model.load_state_dict(weights)
"""


def test_weights_read_back_under_the_naming_scheme_they_were_written_on_the_cpu_under():
    assert findings(_WEIGHTS_BY_EPOCH) == []


@pytest.mark.parametrize("change", [
    ("v.cpu()] for k, v", "v] for k, v"),  # the weights are written as they are, on the GPU
    ("str(epoch) + '_model.pt'", "str(epoch) + '_optimizer.pt'"),  # another file than the weights
    ("str(epoch) + '_model.pt'", "str(epoch) + '.pt'"),  # a scheme that says only the extension
])
def test_a_checkpoint_not_tied_to_cpu_weights_by_its_name_is_reported(change):
    source = _WEIGHTS_BY_EPOCH.replace(*change)
    assert source != _WEIGHTS_BY_EPOCH
    assert [code for _, code in findings(source)] == ["ML203"]


@pytest.mark.parametrize("path, expected", [
    ("'{}/epoch{}_model.pt'.format(work_dir, epoch)", "*_model.pt"),
    ("'./' + name + '/epoch' + str(epoch) + '_model.pt'", "*_model.pt"),
    ("f'{work_dir}/epoch{epoch}_model.pt'", "*_model.pt"),
    ("'epoch%d_model.pt' % epoch", "*_model.pt"),
    ("f'{work_dir}/model.pt'", "model.pt"),  # only the folder varies
    ("os.path.join(work_dir, 'best.pth')", "best.pth"),
    ("'{}.pth'.format(name)", None),  # says only the extension: any file
    ("'epoch%d.ckpt' % epoch", None),
    ("'{}/{}'.format(work_dir, name)", None),
    ("path", None),
])
def test_the_name_or_naming_scheme_of_a_file_as_written(path, expected):
    import libcst as cst

    from memlint.static.facts import file_name_written

    assert file_name_written(cst.parse_expression(path)) == expected


# ----- a buffer filled afresh through out= before it is updated in place ------
_OFFSETS_BUFFER = """
    import torch
    from torch import nn


    class BatchSub2Ind(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("_offsets", torch.LongTensor())

        def forward(self, shape, row_sub, col_sub):
            height, width = shape
            ind = row_sub * width + col_sub
            torch.arange(row_sub.size(0), out=self._offsets)
            self._offsets *= height * width
            return torch.add(ind, self._offsets.view(-1, 1, 1))


    class Interp2(nn.Module):
        def __init__(self):
            super().__init__()
            self._batch_sub2ind = BatchSub2Ind()

        def forward(self, v, xq, yq):
            batch_size, channels, height, width = v.size()
            x0 = torch.floor(xq).long().clamp(0, width - 1)
            y0 = torch.floor(yq).long().clamp(0, height - 1)
            return self._batch_sub2ind([height, width], y0, x0)
"""


def test_a_buffer_filled_afresh_through_out_before_its_update_carries_nothing():
    assert findings(_OFFSETS_BUFFER) == []


_RUNNING_SCALE = """
    import torch
    from torch import nn


    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(4, 4)
            self.register_buffer("scale", torch.ones(1))

        def forward(self, x):
            h = self.layer(x)
            torch.ones(1, out=self.scale)
            self.scale *= h.abs().mean()
            return h / self.scale
"""


def test_a_float_buffer_filled_afresh_through_out_each_call_is_no_carried_graph():
    # (ML101 still reads ``*=`` as a sum kept across calls: it does not know out= yet)
    assert "ML102" not in [code for _, code in findings(_RUNNING_SCALE)]


def test_a_float_buffer_updated_from_itself_and_a_graph_every_call_is_reported():
    source = _RUNNING_SCALE.replace("            torch.ones(1, out=self.scale)\n", "")
    assert "ML102" in [code for _, code in findings(source)]


# ----- a Function bound only to an alias nothing names ------
_POINT_OPS = {
    ".git/HEAD": "",
    "ops.py": """
        import torch
        from torch.autograd import Function


        class Gathering(Function):
            @staticmethod
            def forward(ctx, features, idx):
                b, c, n = features.size()
                assert idx.is_contiguous()
                m = idx.size(1)
                ctx.for_backwards = (idx, c, n)
                return features.gather(2, idx)

            @staticmethod
            def backward(ctx, grad_out):
                idx, c, n = ctx.for_backwards
                return grad_out.new_zeros(grad_out.size(0), c, n).scatter_add(2, idx, grad_out), None


        class FeatureGather(Function):
            @staticmethod
            def forward(ctx, features, distribute_idx):
                b, c, n = features.size()
                assert distribute_idx.is_contiguous()
                m = distribute_idx.size(1)
                ctx.for_backwards = (distribute_idx, c, n)
                return features.gather(2, distribute_idx)

            @staticmethod
            def backward(ctx, grad_out):
                idx, c, n = ctx.for_backwards
                return grad_out.new_zeros(grad_out.size(0), c, n).scatter_add(2, idx, grad_out), None


        gathering = Gathering.apply
        featuregather = FeatureGather.apply
    """,
    "model.py": """
        import torch
        from ops import gathering


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Conv1d(3, 8, 1)

            def forward(self, x, idx):
                return gathering(self.layer(x), idx)
    """,
}


def test_a_function_bound_only_to_an_alias_nothing_names_never_runs(tmp_path):
    write(tmp_path, _POINT_OPS)
    assert project_findings(tmp_path, "ops.py") == [(11, "ML114")]  # Gathering runs; FeatureGather never


def test_a_function_whose_alias_another_module_names_runs(tmp_path):
    files = dict(_POINT_OPS)
    files["model.py"] = files["model.py"].replace("from ops import gathering", "from ops import gathering, featuregather")
    write(tmp_path, files)
    assert project_findings(tmp_path, "ops.py") == [(11, "ML114"), (26, "ML114")]


# ----- an eval-mode forward whose autograd graph the code walks ------
_GRAPH_TRACER = """
    import torch


    def trace(model, example_inputs):
        model.eval()
        gradfn2module = {}

        def record_grad_fn(module, inputs, outputs):
            gradfn2module[outputs.grad_fn] = module

        hooks = [m.register_forward_hook(record_grad_fn) for m in model.modules()]
        out = model(example_inputs)
        for hook in hooks:
            hook.remove()
        return walk(out.grad_fn, gradfn2module)
"""


def test_an_eval_forward_whose_graph_a_tracer_walks_is_not_inference():
    assert findings(_GRAPH_TRACER) == []


def test_an_eval_forward_whose_outputs_hooks_only_keep_is_reported():
    source = _GRAPH_TRACER.replace("gradfn2module[outputs.grad_fn] = module", "gradfn2module[module] = outputs") \
        .replace("return walk(out.grad_fn, gradfn2module)", "return out.argmax(-1).tolist(), gradfn2module")
    assert [code for _, code in findings(source)] == ["ML201"]


# ----- a plain function's callers, across modules: obj.forward(...) is no call of it ------
_SAMPLING = {
    ".git/HEAD": "",
    "search/__init__.py": "",
    "search/sampling.py": """
        import torch


        def forward(model, x):
            model.eval()
            logits, _ = model(x)
            return logits


        def get_logp(model, x):
            return forward(model, x).log_softmax(-1)


        def sample(model, x):
            return forward(model, x).argmax(-1)


        @torch.no_grad()
        def sample_n(model, x, n):
            return [sample(model, x) for _ in range(n)]
    """,
    "search/core.py": """
        import torch
        from .sampling import sample_n, get_logp


        @torch.no_grad()
        def beam_search(model, x, steps):
            return [get_logp(model, x) for _ in range(steps)], sample_n(model, x, 2)
    """,
    "rendering.py": """
        from search import sampling


        def set_obs(env, obs):
            env.sim.data.qpos[:] = obs
            env.sim.forward()


        def render(env, model, observations):
            for obs in observations:
                set_obs(env, obs)
            return env.draw()
    """,
}


def test_a_helper_only_reached_under_no_grad_despite_method_calls_of_its_name(tmp_path):
    write(tmp_path, _SAMPLING)
    assert project_findings(tmp_path, "search/sampling.py") == []


def test_a_helper_its_module_is_called_through_with_grad_on_is_reported(tmp_path):
    files = dict(_SAMPLING)
    files["rendering.py"] = files["rendering.py"].replace(
        "            return env.draw()", "            return env.draw(), sampling.forward(model, observations)")
    write(tmp_path, files)
    assert [code for _, code in project_findings(tmp_path, "search/sampling.py")] == ["ML201"]


# ----- a tester's DataParallel beside a trainer's, in one module ------
_TRAINER_AND_TESTER = """
    import torch
    import torch.nn as nn


    class Trainer:
        def __init__(self, model, loader):
            self.model = nn.DataParallel(model.cuda())
            self.optimizer = torch.optim.Adam(self.model.parameters())
            self.loader = loader

        def train(self):
            self.model.train()
            for x, y in self.loader:
                loss = nn.functional.mse_loss(self.model(x.cuda()), y.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


    class Tester:
        def __init__(self, model, loader):
            self.model = nn.DataParallel(model.cuda())
            self.loader = loader

        def test(self):
            self.model.eval()
            errors = []
            with torch.no_grad():
                for x, y in self.loader:
                    errors.append((self.model(x.cuda()) - y.cuda()).abs().mean().item())
            return sum(errors) / len(errors)
"""


def test_a_testers_wrapper_run_only_under_no_grad_beside_a_trainers_is_not_reported():
    assert findings(_TRAINER_AND_TESTER) == [(8, "ML206")]


def test_a_testers_wrapper_run_with_grad_on_is_reported():
    source = _TRAINER_AND_TESTER.replace("            with torch.no_grad():\n                for x, y in self.loader:",
                                         "            if True:\n                for x, y in self.loader:")
    assert source != _TRAINER_AND_TESTER
    assert [(line, code) for line, code in findings(source) if code == "ML206"] == [(8, "ML206"), (23, "ML206")]


# ----- the outputs after the first of a module whose forward memlint cannot read ------
_EPISODE_ACCURACIES = """
    import torch


    def test(model, loader):
        accuracies = []
        with torch.no_grad():
            for batch in loader:
                output, acc = model(batch.cuda())
                accuracies.append(acc)
        return sum(accuracies) / len(accuracies)
"""


def test_a_second_output_of_an_unread_forward_kept_per_batch_may_be_a_number():
    assert findings(_EPISODE_ACCURACIES) == []


def test_the_first_output_of_an_unread_forward_kept_per_batch_is_reported():
    source = _EPISODE_ACCURACIES.replace("accuracies.append(acc)", "accuracies.append(output)")
    assert [code for _, code in findings(source)] == ["ML207"]


_VAR_RATIOS = """
    import numpy as np
    import torch


    def var_ratio(network, loader):
        var_ratios = []
        for input_dict in loader:
            inputs = input_dict["inputs"].to(network.device)
            with torch.no_grad():
                outputs = network(inputs)
            var_ratios.append(outputs["var_ratio"])
        var_ratios = np.concatenate(var_ratios)
        return var_ratios.argsort()
"""


def test_outputs_kept_per_batch_that_numpy_joins_after_the_loop_are_on_the_host():
    assert findings(_VAR_RATIOS) == []


def test_outputs_kept_per_batch_that_torch_joins_after_the_loop_are_reported():
    source = _VAR_RATIOS.replace("np.concatenate(var_ratios)", "torch.cat(var_ratios)")
    assert [code for _, code in findings(source)] == ["ML207"]


# ----- a rank's load restored straight into a loss scaler's or a schedule's state ------
_RANK_RESTORES_TRAINING_STATE = """
    import os

    import apex
    import torch
    import torch.distributed as dist


    def resume(model, optimizer, state_dir, local_rank):
        dist.init_process_group("nccl")
        torch.cuda.set_device(local_rank)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
        scaler = torch.cuda.amp.GradScaler()
        scheduler.load_state_dict(torch.load(os.path.join(state_dir, "state_a.pt")))
        scaler.load_state_dict(torch.load(os.path.join(state_dir, "state_b.pt")))
        apex.amp.load_state_dict(torch.load(os.path.join(state_dir, "state_c.pkl")))
        return scheduler, scaler
"""


def test_a_ranks_load_into_a_scalers_or_a_schedules_state_holds_numbers():
    assert findings(_RANK_RESTORES_TRAINING_STATE) == []


def test_a_ranks_load_into_a_models_state_is_still_reported():
    source = _RANK_RESTORES_TRAINING_STATE.replace(
        'apex.amp.load_state_dict(torch.load(os.path.join(state_dir, "state_c.pkl")))',
        'model.load_state_dict(torch.load(os.path.join(state_dir, "state_c.pkl")))')
    assert findings(source) == [(16, "ML203")]


# ----- a resume into a model and its optimizer while both are still on the CPU ------
_RESUME_ON_THE_CPU = """
    import torch
    from torch import nn


    def main(args, loader):
        checkpoint = torch.load(args.pretrained)
        model = nn.Linear(4, 2)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer_state"])
        del checkpoint
        model = model.cuda()
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


def test_a_resume_into_a_model_and_its_optimizer_still_on_the_cpu_is_no_hint():
    assert findings(_RESUME_ON_THE_CPU) == []


def test_a_resume_into_an_optimizer_of_a_model_already_moved_is_a_hint():
    source = _RESUME_ON_THE_CPU.replace("        model = nn.Linear(4, 2)\n", "        model = nn.Linear(4, 2).cuda()\n")
    assert findings(source) == [(7, "ML203")]


# ----- a rank restores a model's weights, which the project writes only from the CPU ------
_BASIC_SR = {
    "pyproject.toml": "",
    "pkg/__init__.py": "",
    "pkg/base_model.py": """
        import torch
        from torch.nn.parallel import DistributedDataParallel


        class BaseModel:
            def model_to_device(self, net, local_rank):
                return DistributedDataParallel(net.cuda(), device_ids=[local_rank])

            def save_network(self, net, path):
                state_dict = net.state_dict()
                for key, param in state_dict.items():
                    state_dict[key] = param.cpu()
                torch.save(state_dict, path)

            def load_network(self, net, load_path):
                load_net = torch.load(load_path)
                net.load_state_dict(load_net)

            def save_training_state(self, epoch, path):
                state = {"epoch": epoch, "optimizers": [], "schedulers": []}
                for o in self.optimizers:
                    state["optimizers"].append(o.state_dict())
                for s in self.schedulers:
                    state["schedulers"].append(s.state_dict())
                torch.save(state, path)
    """,
    "pkg/train.py": """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        from .base_model import BaseModel


        class SRModel(BaseModel):
            def __init__(self, net, path, local_rank):
                dist.init_process_group("nccl")
                torch.cuda.set_device(local_rank)
                self.net = DDP(net.cuda(), device_ids=[local_rank])
                self.load_network(self.net, path)
    """,
}


def test_a_ranks_restore_of_weights_the_project_writes_only_from_the_cpu_is_not_reported(tmp_path):
    write(tmp_path, _BASIC_SR)
    assert [code for _, code in project_findings(tmp_path, "pkg/base_model.py") if code == "ML203"] == []


def test_a_ranks_restore_of_weights_the_project_also_writes_from_the_gpu_is_reported(tmp_path):
    files = dict(_BASIC_SR)
    files["pkg/base_model.py"] = files["pkg/base_model.py"].replace(
        '                state = {"epoch": epoch, "optimizers": [], "schedulers": []}',
        '                state = {"epoch": epoch, "optimizers": [], "schedulers": [], "net": self.net.state_dict()}')
    write(tmp_path, files)
    assert [code for _, code in project_findings(tmp_path, "pkg/base_model.py") if code == "ML203"] == ["ML203"]


# ----- a model the constructor puts in eval mode, run by another method with grad on ------
_SCORER = """
    import torch
    import torch.nn.functional as F


    class LanguageModelScorer:
        def __init__(self, model, tokenizer):
            self.model = model.eval()
            self.tokenizer = tokenizer

        def loglikelihoods(self, requests):
            results = []
            for batch in requests:
                encoded = self.tokenizer(batch, return_tensors="pt").to("cuda")
                logits = self.model(**encoded).logits
                results.append(float(F.log_softmax(logits, dim=-1).sum()))
            return results
"""


def test_a_model_the_constructor_puts_in_eval_mode_run_with_grad_on_is_reported():
    assert findings(_SCORER) == [(15, "ML201")]


@pytest.mark.parametrize("change", [
    # another method puts it back in train mode: its mode in loglikelihoods is unknown
    ("        def loglikelihoods(self, requests):",
     "        def fit(self, batch):\n            self.model.train()\n\n        def loglikelihoods(self, requests):"),
    # put in eval mode only on some constructions
    ("            self.model = model.eval()", "            self.model = model\n            if tokenizer:\n                self.model.eval()"),
    # the scoring runs under no_grad
    ("        def loglikelihoods(self, requests):", "        @torch.no_grad()\n        def loglikelihoods(self, requests):"),
])
def test_a_constructor_mode_that_may_not_hold_or_scoring_without_grad_is_quiet(change):
    source = _SCORER.replace(*change)
    assert source != _SCORER
    assert findings(source) == []


def test_a_second_output_of_an_unread_forward_the_code_treats_as_a_tensor_is_reported():
    source = _EPISODE_ACCURACIES.replace("accuracies.append(acc)", "accuracies.append(acc.detach()[::10])")
    assert [code for _, code in findings(source)] == ["ML207"]


def test_a_resume_into_an_unmoved_model_and_optimizer_whose_checkpoint_stays_held_is_a_hint():
    # (the GPU-saved checkpoint stays on the GPU, held by its name, through the training)
    source = _RESUME_ON_THE_CPU.replace("        del checkpoint\n", "")
    assert findings(source) == [(7, "ML203")]


# One step function for both phases, its test branch run only under no_grad: the branch's
# accumulation carries no graph. ``optimizer.step()`` in it is another object's method, not a call
# of ``step`` that may be out of view.
_SHARED_STEP = """
import torch


def train(model, loader, optimizer):
    return step("train", model, loader, optimizer)


def val(model, loader):
    with torch.no_grad():
        return step("test", model, loader)


def step(split, model, loader, optimizer=None):
    error_sum = 0
    for x, y in loader:
        out = model(x)
        if split == "train":
            loss = (out - y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        elif split == "test":
            error_sum = error_sum + (out - y).abs().mean()
    return error_sum
"""


def test_a_branch_of_a_shared_step_only_taken_without_grad_is_quiet():
    assert findings(_SHARED_STEP) == []


def test_the_same_branch_taken_with_grad_is_reported():
    source = _SHARED_STEP.replace("    with torch.no_grad():\n        return step(\"test\"", "    if True:\n        return step(\"test\"")
    assert source != _SHARED_STEP
    assert [code for _, code in findings(source)] == ["ML101"]


# Sibling script folders, each with its own train.py and run.py: the other folder's run.py calls
# its own test() with grad on, which is not this folder's test().
_SIBLING_SCRIPTS = {
    "setup.py": "",
    "ner_lstm/train.py": """
        import torch

        def dev(loader, model):
            model.eval()
            total = 0
            for x, y in loader:
                out = model.forward(x)
                total += (out.argmax(-1) == y).sum()
            return total

        def test(loader, model):
            return dev(loader, model)
    """,
    "ner_lstm/run.py": """
        import torch
        from train import test

        def run(loader, model):
            with torch.no_grad():
                print(test(loader, model))
    """,
    "ner_bert/run.py": """
        import torch
        from train import evaluate

        def test(loader, model):
            return evaluate(loader, model)

        if __name__ == "__main__":
            test(None, None)
    """,
    "ner_bert/train.py": """
        def evaluate(loader, model):
            return 0
    """,
}


def test_a_sibling_scripts_own_function_of_the_same_name_does_not_call_this_one(tmp_path):
    write(tmp_path, _SIBLING_SCRIPTS)
    assert project_findings(tmp_path, "ner_lstm/train.py") == []


def test_the_same_function_called_with_grad_on_by_its_own_runner_is_reported(tmp_path):
    files = dict(_SIBLING_SCRIPTS)
    files["ner_lstm/run.py"] = files["ner_lstm/run.py"].replace("with torch.no_grad():", "if True:")
    write(tmp_path, files)
    assert project_findings(tmp_path, "ner_lstm/train.py") == [(7, "ML201")]


# A "collate" function the training loop calls itself, in the main process: no DataLoader worker
# runs it (a sibling script's collate_batch of its own is handed to a loader, not this one).
_DIRECT_COLLATE = {
    "setup.py": "",
    "rl/train.py": """
        import torch
        from torch.utils.data import DataLoader

        device = torch.device("cuda")

        def collate_batch(batch):
            x, y = batch
            return x.unsqueeze(0).to(device), y.unsqueeze(0).to(device)

        def train(model, dataset, optimizer):
            for idx in range(len(dataset)):
                x, y = collate_batch(dataset[idx])
                loss = model(x, y)
                loss.backward()
                optimizer.step()
    """,
    "finetune/train.py": """
        import torch
        from torch.utils.data import DataLoader

        def collate_batch(batch):
            return torch.stack(batch)

        def loader(dataset):
            return DataLoader(dataset, batch_size=8, num_workers=4, collate_fn=collate_batch)
    """,
}


def test_a_collate_function_the_loop_calls_itself_is_quiet(tmp_path):
    write(tmp_path, _DIRECT_COLLATE)
    assert project_findings(tmp_path, "rl/train.py") == []


def test_the_same_collate_function_handed_to_a_loader_with_workers_is_reported(tmp_path):
    files = dict(_DIRECT_COLLATE)
    files["rl/train.py"] += "\n" + textwrap.indent(textwrap.dedent("""
        def loader(dataset):
            return DataLoader(dataset, batch_size=8, num_workers=4, collate_fn=collate_batch)
    """), "        ")
    write(tmp_path, files)
    assert [code for _, code in project_findings(tmp_path, "rl/train.py")] == ["ML204", "ML204"]


# A trainer that hard-codes the CPU (the CUDA line commented out) and resumes into a model and
# optimizer the Trainer moves later, to that CPU device: no GPU copy of anything is kept.
_CPU_PROGRAM_RESUME = """
import argparse

import torch
from torch import nn


class Trainer:
    def __init__(self, model, optimizer, device=None):
        self.device = device if device is not None else torch.device("cpu")
        self.model = model.to(self.device)
        self.optimizer = optimizer

    def loop(self, loader):
        for x, y in loader:
            loss = nn.functional.mse_loss(self.model(x.to(self.device)), y.to(self.device))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


def main(loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--load-state", default="")
    args = parser.parse_args()
    args.device = torch.device("cpu")
    # if torch.cuda.is_available():
    #     args.device = torch.device("cuda")
    model = nn.Linear(4, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    if args.load_state:
        checkpoint = torch.load(args.load_state)
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    Trainer(model, optimizer, device=args.device).loop(loader)
"""


def test_a_resume_in_a_program_that_names_no_accelerator_is_no_hint():
    assert findings(_CPU_PROGRAM_RESUME) == []


def test_the_same_resume_in_a_program_that_may_pick_cuda_is_a_hint():
    source = _CPU_PROGRAM_RESUME.replace('    args.device = torch.device("cpu")\n',
                                         '    args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n')
    assert source != _CPU_PROGRAM_RESUME
    assert [code for _, code in findings(source)] == ["ML203"]


# Weights saved through a helper that writes whatever it is handed (``save_states(epoch, states,
# ...)``): the caller hands it CPU copies, so the program's weight files hold no device tensor and a
# load of them restores CPU tensors (the training state, saved from the device, is restored
# elsewhere).
_SAVED_THROUGH_A_HELPER = """
import os
from collections import OrderedDict

import torch
from torch import nn


class Processor:
    def __init__(self, arg):
        self.arg = arg
        self.model = nn.Linear(8, 2).cuda()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        if arg.weights:
            weights = torch.load(arg.weights)
            weights = OrderedDict([[k.split("module.")[-1], v.cuda()] for k, v in weights.items()])
            self.model.load_state_dict(weights)
        for epoch in range(arg.epochs):
            self.train(epoch)

    def train(self, epoch):
        for x, y in self.arg.loader:
            loss = nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        self.save_checkpoint(epoch)
        self.save_weights(epoch)

    def save_states(self, epoch, states, out_name):
        torch.save(states, os.path.join(self.arg.work_dir, out_name))

    def save_checkpoint(self, epoch):
        state = {"epoch": epoch, "optimizer_states": self.optimizer.state_dict()}
        self.save_states(epoch, state, f"checkpoint-{epoch}.pt")

    def save_weights(self, epoch):
        state_dict = self.model.state_dict()
        weights = OrderedDict([[k.split("module.")[-1], v.cpu()] for k, v in state_dict.items()])
        self.save_states(epoch, weights, f"weights-{epoch}.pt")
"""


def test_weights_a_helper_saves_for_the_caller_as_cpu_copies_are_no_hint():
    assert findings(_SAVED_THROUGH_A_HELPER) == []


def test_the_same_weights_handed_to_the_helper_on_the_device_are_a_hint():
    source = _SAVED_THROUGH_A_HELPER.replace('[[k.split("module.")[-1], v.cpu()] for k, v in state_dict.items()]',
                                             '[[k.split("module.")[-1], v] for k, v in state_dict.items()]')
    assert source != _SAVED_THROUGH_A_HELPER
    assert [code for _, code in findings(source)] == ["ML203"]


# The resume of a script whose save helper is defined below main() (save_checkpoint(state,
# is_best): torch.save(state, ...)): main hands it the model's GPU state, so the checkpoint read
# back holds device tensors and stays on the GPU through training (a warning, not a hint).
_SAVE_HELPER_BELOW = """
import shutil

import torch
from torch import nn


def main(args, loader):
    model = nn.DataParallel(nn.Linear(8, 2)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.resume:
        checkpoint = torch.load(args.resume)
        model.load_state_dict(checkpoint["state_dict"])
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        save_checkpoint({"epoch": epoch, "state_dict": model.state_dict()}, epoch == 0)


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")
"""


def test_a_resume_kept_through_training_whose_save_helper_is_defined_below_is_a_warning():
    result = check_source(textwrap.dedent(_SAVE_HELPER_BELOW), "train.py", default_codes())
    assert [(f.line, f.code, f.severity) for f in result if f.code == "ML203"] == [(12, "ML203", "warning")]
