"""Recall on public memory reports: does ``memlint check`` name the line its maintainers blamed?

Each case is a reconstruction of one public report (issue, pull request or forum thread) whose
cause was confirmed in the thread, reduced to the shape of the code that caused it, with the
rule that should report it and the line. Cases that memlint is known to miss stay in the list
(``known_miss`` says why), so the figure is honest. Covers the rules of issues 13 and 18
(hooks, anomaly mode, caches, metrics, gc, models across runs, data loading, distributed).

    python3 benchmarks/recall_reports.py            # recall, and every miss
    python3 benchmarks/recall_reports.py --verbose  # every case

Run by hand, not by CI.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memlint.static.source_check import check_source  # noqa: E402


@dataclass(frozen=True)
class Case:
    url: str
    code: str
    line: int  # 1-based line of the expected finding in ``source``
    source: str
    known_miss: str = ""


CASES = [
    Case("https://github.com/jacobgil/pytorch-grad-cam/issues/132", "ML107", 18, """
        import torch
        class ActivationsAndGradients:
            def __init__(self, model, target_layer):
                self.model = model
                target_layer.register_forward_hook(self.save_activation)
                target_layer.register_backward_hook(self.save_gradient)
            def save_activation(self, module, input, output):
                self.activations = output
            def save_gradient(self, module, grad_input, grad_output):
                self.gradients = grad_output[0]

        class GradCAM:
            def __init__(self, model, target_layer):
                self.activations_and_grads = ActivationsAndGradients(model, target_layer)

        def run(model, input, labels):
            for i in range(100):
                cam = GradCAM(model=model, target_layer=model.conv5)
                grad = cam.activations_and_grads.model(input)
                del cam, grad
        """),
    Case("https://github.com/jacobgil/pytorch-grad-cam/issues/88", "ML107", 18, """
        import torch
        class DummyCAM:
            def __init__(self, model, target_layer):
                self.model = model
                self.target_layer = target_layer
                self.target_layer.register_forward_hook(self.save_activation)
                self.target_layer.register_full_backward_hook(self.save_gradient)
            def save_activation(self, module, input, output):
                self.target_output = output
            def save_gradient(self, module, grad_input, grad_output):
                self.target_grad = grad_output[0]
            def __call__(self, input_tensor):
                return self.model(input_tensor)

        def explain(model, images):
            maps = []
            for image in images:
                cam = DummyCAM(model, model[1])
                maps.append(cam(image).detach())
            return maps
        """),
    Case("https://github.com/jacobgil/pytorch-grad-cam/issues/112", "ML107", 6, """
        import torch
        from pytorch_grad_cam import GradCAMPlusPlus
        def save_all(model, loader, target_layers):
            outputs = []
            for images, _ in loader:
                cam = GradCAMPlusPlus(model=model, target_layers=target_layers)
                outputs.append(cam(input_tensor=images))
            return outputs
        """, known_miss="the CAM class is imported: memlint cannot see that its __init__ registers hooks "
                        "(today's pytorch-grad-cam removes them in __del__)"),
    Case("https://github.com/jacobgil/pytorch-grad-cam/issues/117", "ML107", 4, """
        import torch
        from pytorch_grad_cam import GradCAMPlusPlus
        def cam_extractor(network, input_tensor):
            cam = GradCAMPlusPlus(model=network, target_layers=[network.lastact[-1]])
            return cam(input_tensor=input_tensor)

        def train(network, loader, optimizer, epochs):
            for epoch in range(epochs):
                for x, y in loader:
                    network(x).sum().backward()
                    optimizer.step()
                cam_extractor(network, x)
        """, known_miss="an imported CAM class built in a helper once per epoch"),
    Case("https://github.com/huggingface/transformers/issues/28469", "ML212", 6, """
        from torch.utils.data import DataLoader
        from transformers import Trainer
        class MyTrainer(Trainer):
            def get_eval_dataloader(self, eval_dataset=None):
                eval_dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
                dataloader = DataLoader(eval_dataset, batch_size=self.args.eval_batch_size,
                                        num_workers=self.args.dataloader_num_workers,
                                        persistent_workers=self.args.dataloader_persistent_workers)
                return self.accelerator.prepare(dataloader)
        """),
    Case("https://github.com/huggingface/transformers/issues/30943", "ML212", 4, """
        import torch
        from torch.utils.data import DataLoader
        def evaluate(model, eval_set, metric):
            loader = DataLoader(eval_set, batch_size=32, num_workers=4, persistent_workers=True)
            with torch.no_grad():
                return metric([model(x) for x, _ in loader])

        def main(model, train_epoch, eval_set, metric, epochs):
            for epoch in range(epochs):
                train_epoch(model)
                print(evaluate(model, eval_set, metric))
        """),
    Case("https://github.com/huggingface/sentence-transformers/pull/3895", "ML212", 8, """
        from torch.utils.data import DataLoader
        class BaseTrainer:
            def get_eval_dataloader(self, eval_dataset=None):
                batch_sampler = self.get_batch_sampler(eval_dataset, batch_size=self.args.eval_batch_size)
                dataloader_params = {"collate_fn": self.data_collator, "batch_sampler": batch_sampler,
                                     "num_workers": self.args.dataloader_num_workers,
                                     "persistent_workers": self.args.dataloader_persistent_workers}
                return self.accelerator.prepare(DataLoader(eval_dataset, **dataloader_params))
        """),
    Case("https://github.com/pytorch/pytorch/issues/26408", "ML208", 9, """
        import torch
        from torch import nn

        def main():
            model = nn.Conv2d(64, 64, 3, padding=1)
            data = torch.rand((1, 64, 256, 256))
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            torch.autograd.set_detect_anomaly(True)
            torch.autograd.set_detect_anomaly(True)
            while True:
                loss = model(data).mean()
                loss.backward()
                optimizer.step()
        """),
    Case("https://github.com/pytorch/pytorch/issues/51349", "ML208", 2, """
        import torch
        torch.autograd.set_detect_anomaly(True)
        for rep in range(1000):
            batch = torch.ones(10, 30000).cuda().requires_grad_()
            y = batch.norm()
            grad = torch.autograd.grad(outputs=y, inputs=batch, create_graph=True, retain_graph=True)[0]
        """),
    Case("https://github.com/yenchenlin/nerf-pytorch/issues/42", "ML208", 2, """
        import torch
        torch.autograd.set_detect_anomaly(True)
        import torch.nn as nn
        import torch.nn.functional as F

        img2mse = lambda x, y: torch.mean((x - y) ** 2)

        class Embedder:
            def __init__(self, **kwargs):
                self.kwargs = kwargs
        """),
    Case("https://github.com/JasonMa2016/GoFAR/pull/2", "ML208", 4, """
        import torch
        class Agent:
            def __init__(self, actor, critic):
                torch.autograd.set_detect_anomaly(True)
                self.actor, self.critic = actor, critic

            def update(self, batch, actor_optim):
                actor_loss = -self.critic(batch, self.actor(batch)).mean()
                actor_optim.zero_grad()
                actor_loss.backward()
                actor_optim.step()
        """),
    Case("https://github.com/Lightning-AI/pytorch-lightning/issues/17359", "ML208", 3, """
        import pytorch_lightning as pl
        def main(model, datamodule):
            trainer = pl.Trainer(max_epochs=100, devices=1, accelerator="gpu",
                                 detect_anomaly=True)
            trainer.fit(model, datamodule)
        """),
    Case("https://github.com/huggingface/transformers/pull/45708", "ML108", 11, """
        import torch
        from torch import nn
        from transformers.pytorch_utils import compile_compatible_method_lru_cache

        class RTDetrV2SinePositionEmbedding(nn.Module):
            def __init__(self, embed_dim=256, temperature=10000):
                super().__init__()
                self.embed_dim = embed_dim
                self.temperature = temperature

            @compile_compatible_method_lru_cache(maxsize=32)
            def forward(self, width, height, device, dtype):
                grid_w = torch.arange(width, device=device, dtype=dtype)
                grid_h = torch.arange(height, device=device, dtype=dtype)
                return torch.stack(torch.meshgrid(grid_w, grid_h, indexing="xy"))
        """),
    Case("https://github.com/pytorch/pytorch/pull/149354", "ML108", 4, """
        import functools
        from torch import nn

        @functools.cache
        def _get_fqns(model: nn.Module, name: str, skip_ddp_prefix: bool = True):
            return {name.replace("module.", "") if skip_ddp_prefix else name}
        """),
    Case("https://github.com/MoonshotAI/Kimi-Audio/issues/117", "ML108", 8, """
        from functools import lru_cache
        import torch
        from torch.utils.data import Dataset
        class LazySupervisedDataset(Dataset):
            def __init__(self, raw_data, tokenizer):
                self.raw_data = raw_data
                self.tokenizer = tokenizer
            @lru_cache(maxsize=None)
            def __getitem__(self, i):
                return self.tokenizer(self.raw_data[i]["text"], return_tensors="pt")
        """),
    Case("https://github.com/Lightning-AI/torchmetrics/issues/1461", "ML210", 8, """
        import torch
        from torchmetrics import MetricCollection
        from torchmetrics.classification import MultilabelAUROC
        def run(model):
            met = MultilabelAUROC(num_labels=9).cuda()
            for i in range(1000):
                predictions = model(torch.randn((32, 991, 20), device="cuda"))
                met(predictions.detach(), torch.randint(0, 2, (32, 9), device="cuda"))
                predictions.sum().backward()
        """),
    Case("https://github.com/JetBrains-Research/code2seq/pull/112", "ML210", 18, """
        import torch
        import pytorch_lightning as pl
        from torchmetrics import F1Score

        class Code2Seq(pl.LightningModule):
            def __init__(self, model):
                super().__init__()
                self.model = model
                self.train_f1 = F1Score(task="multiclass", num_classes=100)

            def training_step(self, batch, batch_idx):
                logits = self.model(batch.contexts)
                loss = torch.nn.functional.cross_entropy(logits, batch.labels)
                self.train_f1.update(logits.argmax(-1), batch.labels)
                return loss

            def on_train_epoch_end(self):
                self.log("train/f1", self.train_f1.compute())

            def on_validation_epoch_end(self):
                self.log("val/f1", self.train_f1.compute())
        """),
    Case("https://github.com/Lightning-AI/torchmetrics/issues/1949", "ML210", 6, """
        import torch
        from torchmetrics.classification import BinaryAUROC
        def evaluate_all(datasets, model):
            results = {}
            for name, (preds, target) in datasets.items():
                metric = BinaryAUROC()
                results[name] = metric(preds=model(preds), target=target)
            return results
        """, known_miss="one metric per dataset, used once: a torchmetrics bug kept their states, not a "
                        "per-step misuse"),
    Case("https://github.com/dpeerlab/segger/issues/46", "ML211", 9, """
        import gc
        import torch
        def predict(model, loader, writer, device):
            model.eval()
            with torch.no_grad():
                for batch in loader:
                    out = model(batch.to(device))
                    writer.write(out.cpu())
                    gc.collect()
        """),
    Case("https://github.com/NVIDIA/Megatron-Energon/pull/66", "ML211", 8, """
        import gc
        import torch
        class GcDataset(torch.utils.data.IterableDataset):
            def __init__(self, dataset):
                self.dataset = dataset
            def __iter__(self):
                for sample in self.dataset:
                    gc.collect()
                    yield sample
        """),
    Case("https://github.com/facebookresearch/maskrcnn-benchmark/blob/main/maskrcnn_benchmark/engine/inference.py",
         "ML304", 16, """
        import torch
        from ..utils.comm import all_gather, is_main_process

        def compute_on_dataset(model, data_loader, device):
            results_dict = {}
            for _, batch in enumerate(data_loader):
                images, targets, image_ids = batch
                with torch.no_grad():
                    output = model(images.to(device))
                    output = [o.to(torch.device("cpu")) for o in output]
                results_dict.update({img_id: result for img_id, result in zip(image_ids, output)})
            return results_dict


        def _accumulate_predictions_from_multiple_gpus(predictions_per_gpu):
            all_predictions = all_gather(predictions_per_gpu)
            if not is_main_process():
                return
            return all_predictions

        def inference(model, data_loader, device):
            predictions = compute_on_dataset(model, data_loader, device)
            return _accumulate_predictions_from_multiple_gpus(predictions)
        """),
    Case("https://github.com/pytorch/pytorch/issues/77159", "ML204", 10, """
        import torch
        from torch.utils.data import DataLoader, Dataset
        class MyDataset(Dataset):
            def __len__(self):
                return 100
            def __getitem__(self, idx):
                x = torch.rand(3, 224, 224)
                y = torch.tensor(idx % 10)
                device = torch.device("cuda")
                return x.to(device), y.to(device)
        loader = DataLoader(MyDataset(), batch_size=8, num_workers=2)
        """),
    Case("https://github.com/cfzd/Ultra-Fast-Lane-Detection-v2/issues/160", "ML204", 8, """
        import torch
        from torch.utils.data import Dataset
        class LaneDataset(Dataset):
            def __init__(self, samples):
                self.samples = samples
            def __getitem__(self, index):
                data = torch.as_tensor(self.samples[index])
                data = data.cuda()
                return my_interp(data)
        """),
    Case("https://github.com/pytorch/pytorch/issues/40403", "ML204", 9, """
        import random
        import torch
        import torch.utils.data as data
        class DummyDataset(data.Dataset):
            def __init__(self, num_classes):
                self.tensor = torch.randn(3, 224, 224, device=torch.device("cuda"))
                self.num_classes = num_classes
            def __getitem__(self, index):
                return self.tensor, random.randint(0, self.num_classes - 1)
        """, known_miss="a CUDA tensor made in __init__ and returned by __getitem__"),
    Case("https://github.com/pytorch/pytorch/issues/13246", "ML205", 5, """
        import torch
        from torch.utils.data import DataLoader, Dataset
        class DataIter(Dataset):
            def __init__(self):
                self.data = [x for x in range(24000000)]
            def __len__(self):
                return len(self.data)
            def __getitem__(self, idx):
                return torch.tensor(self.data[idx])
        train_loader = DataLoader(DataIter(), batch_size=300, num_workers=18)
        """),
    Case("https://github.com/pytorch/pytorch/issues/5902", "ML205", 7, """
        import pandas as pd
        import torch
        from torch.utils.data import DataLoader, Dataset
        class ParquetData(Dataset):
            def __init__(self, path):
                super().__init__()
                self.frame = pd.read_parquet(path)
            def __len__(self):
                return len(self.frame)
            def __getitem__(self, idx):
                row = self.frame.iloc[idx]
                return torch.tensor(row.cc), torch.tensor(row.vv)
        loader = DataLoader(ParquetData("s3://bucket/dummydata"), batch_size=256, num_workers=4)
        """),
    Case("https://github.com/pytorch/pytorch/issues/43201", "ML302", 7, """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        def train(model, dataloader, optimizer, loss_fn, K):
            model = DDP(model)
            for data, label in dataloader:
                optimizer.zero_grad()
                for i in range(K):
                    prediction = model(data)
                    loss_fn(prediction, label).backward()
                optimizer.step()
        """),
    Case("https://github.com/huggingface/accelerate/pull/106", "ML302", 13, """
        import torch
        from accelerate import Accelerator
        def training_function(model, optimizer, train_dataloader, gradient_accumulation_steps, num_epochs):
            accelerator = Accelerator()
            model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
            for epoch in range(num_epochs):
                model.train()
                for step, batch in enumerate(train_dataloader):
                    outputs = model(**batch)
                    loss = outputs.loss
                    loss = loss / gradient_accumulation_steps
                    accelerator.backward(loss)
                    if step % gradient_accumulation_steps == 0:
                        optimizer.step()
                        optimizer.zero_grad()
        """),
    Case("https://github.com/huggingface/accelerate/pull/1181", "ML303", 9, """
        import torch
        from accelerate import Accelerator, FullyShardedDataParallelPlugin
        def main(model, optimizer, loader):
            accelerator = Accelerator(fsdp_plugin=FullyShardedDataParallelPlugin())
            model, optimizer = accelerator.prepare(model, optimizer)
            for batch in loader:
                accelerator.backward(model(**batch).loss)
                optimizer.step()
            state_dict = model.state_dict()
            accelerator.save(state_dict, "model.bin")
        """),
    Case("https://github.com/deepset-ai/FARM/issues/544", "ML207", 9, """
        import torch
        def eval_fold(model, data_loader, device):
            model.eval()
            preds_all, label_all = [], []
            for batch in data_loader:
                batch = {k: v.to(device) for k, v in batch.items()}
                with torch.no_grad():
                    logits = model(**batch)
                preds_all.append(logits)
                label_all.append(batch["labels"])
            return preds_all, label_all
        """),
]


def run(verbose: bool) -> int:
    found = 0
    for case in CASES:
        source = textwrap.dedent(case.source).lstrip("\n")
        findings = [f for f in check_source(source, "report.py", [case.code]) if f.code == case.code]
        hit = any(f.line == case.line for f in findings)
        found += hit
        if verbose or not hit:
            status = "found" if hit else "MISSED"
            print(f"{status:6} {case.code} {case.url}")
            if not hit:
                print(f"       expected line {case.line}; got {[f.line for f in findings]}"
                      + (f"; known: {case.known_miss}" if case.known_miss else ""))
    print(f"\nrecall: {found}/{len(CASES)} reports named at the line their maintainers blamed "
          f"({found / len(CASES):.0%})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="print every case, not only the misses")
    return run(parser.parse_args().verbose)


if __name__ == "__main__":
    sys.exit(main())
