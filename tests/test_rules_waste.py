"""Behaviour of the waste (ML202-ML207) and distributed (ML301-ML303) rules beyond their
VALID/INVALID examples: severities, module-wide decisions, cross-rule double reports."""

from __future__ import annotations

from memlint.static.source_check import check_source


def _findings(source: str, *codes: str):
    return [f for f in check_source(source, "train.py", codes) if f.code in codes]


def test_ml203_is_an_error_in_a_distributed_program_and_a_warning_elsewhere():
    body = """
def resume(model, path):
    model.load_state_dict(torch.load(path))
"""
    plain = _findings("import torch\n" + body, "ML203")
    distributed = _findings("import torch\nimport torch.distributed as dist\n" + body, "ML203")
    local_rank = _findings("import os\nimport torch\nRANK = int(os.environ['LOCAL_RANK'])\n" + body, "ML203")
    # DCGAN's single-process data_parallel: torch.nn.parallel is not torch.distributed
    data_parallel = _findings("import torch\nimport torch.nn.parallel\n" + body, "ML203")
    ddp = _findings("import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n" + body, "ML203")
    assert [f.severity for f in plain] == ["warning"]
    assert [f.severity for f in distributed] == ["error"]
    assert [f.severity for f in local_rank] == ["error"]
    assert [f.severity for f in data_parallel] == ["warning"] and "every rank" not in data_parallel[0].message
    assert [f.severity for f in ddp] == ["error"]


def test_ml203_import_inside_a_function_still_makes_it_an_error():
    source = """
import torch
def resume(model, path):
    model.load_state_dict(torch.load(path))
def main():
    import torch.distributed as dist
    dist.init_process_group("nccl")
"""
    assert [f.severity for f in _findings(source, "ML203")] == ["error"]


def test_ml205_is_info_and_needs_workers():
    source = """
import json
import torch
from torch.utils.data import DataLoader, Dataset
class Records(Dataset):
    def __init__(self, path):
        self.records = json.load(open(path))
loader = DataLoader(Records("a.json"), batch_size=8, num_workers={workers})
"""
    assert [f.severity for f in _findings(source.format(workers="cfg.workers"), "ML205")] == ["info"]
    assert _findings(source.format(workers="0"), "ML205") == []


def test_ml207_and_ml101_do_not_report_the_same_append():
    source = """
import torch
def predict(model, loader):
    outputs, detached = [], []
    for x in loader:
        out = model(x.cuda())
        outputs.append(out)
        detached.append(out.detach())
    return outputs, detached
"""
    findings = _findings(source, "ML101", "ML207")
    assert sorted((f.line, f.code) for f in findings) == [(7, "ML101"), (8, "ML207")]


def test_ml301_set_device_anywhere_in_the_module_is_enough():
    source = """
import os
import torch
import torch.distributed as dist
def init():
    dist.init_process_group("nccl")
    dist.barrier()
def later():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
"""
    assert _findings(source, "ML301") == []
    assert len(_findings(source.replace("torch.cuda.set_device", "print"), "ML301")) == 2


def test_ml302_reports_the_accumulation_condition_once():
    source = """
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
def train(model, loader, optimizer, accum):
    model = DDP(model)
    for i, (x, y) in enumerate(loader):
        model(x, y).backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
"""
    assert [(f.line, f.code) for f in _findings(source, "ML302")] == [(8, "ML302")]
    assert _findings(source.replace("DistributedDataParallel as DDP", "DistributedDataParallel as DDP\nfrom lightning import Fabric"), "ML302") == []


def test_ml203_a_load_only_the_first_rank_makes_is_not_every_rank_loading_onto_cuda0():
    # pytorch/examples' FSDP checkpoint handler: "load local checkpoint to rank0 cpu"
    early_return = """
import torch
import torch.distributed as dist
def load_model_checkpoint(model, rank, path):
    if rank != 0:
        return
    model.load_state_dict(torch.load(path))
"""
    guarded = """
import torch
import torch.distributed as dist
def resume(model, path):
    if dist.get_rank() == 0:
        model.load_state_dict(torch.load(path))
    if not is_main_process():
        return
    model.load_state_dict(torch.load(path))
"""
    every_rank = """
import torch
import torch.distributed as dist
def resume(model, rank, path):
    if rank == 0:
        print("resuming")
    model.load_state_dict(torch.load(path))
"""
    assert [f.severity for f in _findings(early_return, "ML203")] == ["warning"]
    assert [f.severity for f in _findings(guarded, "ML203")] == ["warning", "warning"]
    assert [f.severity for f in _findings(every_rank, "ML203")] == ["error"]
