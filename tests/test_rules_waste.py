"""Behaviour of the waste (ML202-ML207) and distributed (ML301-ML303) rules beyond their
VALID/INVALID examples: severities, module-wide decisions, cross-rule double reports."""

from __future__ import annotations

from memlint.static.source_check import check_source


def _findings(source: str, *codes: str):
    return [f for f in check_source(source, "train.py", codes) if f.code in codes]


def test_ml203_reports_a_program_of_one_process_per_gpu_and_not_one_process():
    # the program writes its checkpoints from the GPU: what every rank loads holds device tensors
    body = """
def resume(model, path):
    model.load_state_dict(torch.load(path))
def save(model):
    torch.save(model.state_dict(), "last.pt")
"""
    plain = _findings("import torch\n" + body, "ML203")
    distributed = _findings("import torch\nimport torch.distributed as dist\n" + body, "ML203")
    local_rank = _findings("import os\nimport torch\nRANK = int(os.environ['LOCAL_RANK'])\n" + body, "ML203")
    # DCGAN's single-process data_parallel: torch.nn.parallel is not torch.distributed
    data_parallel = _findings("import torch\nimport torch.nn.parallel\n" + body, "ML203")
    ddp = _findings("import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n" + body, "ML203")
    # one process: the checkpoint comes back on the GPU it was saved from, the process's own
    assert plain == [] and data_parallel == []
    assert [f.severity for f in distributed] == ["error"]
    assert [f.severity for f in local_rank] == ["error"]
    assert [f.severity for f in ddp] == ["error"]


def test_ml203_import_inside_a_function_still_makes_it_an_error():
    source = """
import torch
def resume(model, path):
    model.load_state_dict(torch.load(path))
def main(model):
    import torch.distributed as dist
    dist.init_process_group("nccl")
    torch.save(model.state_dict(), "last.pt")
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
def init(model):
    dist.init_process_group("nccl")
    model.cuda()
    dist.barrier()
def later():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
"""
    assert _findings(source, "ML301") == []
    assert len(_findings(source.replace("torch.cuda.set_device", "print"), "ML301")) == 1  # at the group, not the barrier
    # every device named by rank: nothing runs on the current device, NCCL follows the tensors
    explicit = source.replace("torch.cuda.set_device", "print").replace("model.cuda()", "model.to(rank)")
    assert _findings(explicit, "ML301") == []


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
        torch.save(model.state_dict(), "before.pt")
    model.load_state_dict(torch.load(path))
"""
    # only the first rank loads: one copy, on the GPU it was saved from
    assert _findings(early_return, "ML203") == []
    assert _findings(guarded, "ML203") == []
    assert [f.severity for f in _findings(every_rank, "ML203")] == ["error"]


def test_ml205_says_what_workers_copy_for_what_it_sees():
    source = """
import json
import numpy as np
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset
class Samples(Dataset):
    def __init__(self, path, rows):
        self.records = json.load(open(path))
        self.frame = pd.read_csv(path)
        self.tensors = [torch.tensor(row) for row in rows]
        self.loaded = [torch.load(row) for row in rows]  # anything torch.load returns: Python objects
        self.arrays = []
        for row in rows:
            self.arrays.append(np.asarray(row))
loader = DataLoader(Samples("a.json", []), batch_size=8, num_workers=4)
"""
    by_attribute = {f.message.split("'")[1]: f for f in _findings(source, "ML205")}
    assert set(by_attribute) == {"self.records", "self.frame", "self.tensors", "self.loaded", "self.arrays"}
    assert "Python objects (json.load())" in by_attribute["self.records"].message
    assert "Python objects (a list comprehension)" in by_attribute["self.loaded"].message
    assert "pandas frame" in by_attribute["self.frame"].message and "numpy" in by_attribute["self.frame"].help
    # tensors and arrays: only their objects are copied, and stacking them is the remedy
    assert "one tensor per sample" in by_attribute["self.tensors"].message
    assert "one array per sample" in by_attribute["self.arrays"].message
    assert by_attribute["self.tensors"].help.startswith("stack them into one tensor")
    assert all("pandas" not in f.help for f in by_attribute.values())


def test_ml206_says_less_when_the_wrapped_forward_computes_the_loss_and_nothing_in_tests():
    source = """
import torch
from torch import nn
class WithLoss(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.loss_fn = nn.MSELoss()
    def forward(self, x, y):
        return self.loss_fn(self.model(x), y)
class Plain(nn.Module):
    def forward(self, x):
        return x * 2
def build(model):
    return nn.DataParallel(WithLoss(model)), nn.DataParallel(Plain())
"""
    assert sorted(f.severity for f in _findings(source, "ML206")) == ["info", "warning"]
    tests = check_source(source, "tests/test_parallel.py", ["ML206"])
    assert tests == []


def test_ml209_attentions_warn_and_hidden_states_inform():
    source = """
import torch
def train(model, loader, optimizer):
    for batch in loader:
        a = model(**batch, output_attentions=True).loss
        h = model(**batch, output_hidden_states=True).loss
        (a + h).backward()
        optimizer.step()
"""
    assert [(f.line, f.severity) for f in _findings(source, "ML209")] == [(5, "warning"), (6, "info")]


def test_ml208_in_a_function_of_a_module_that_does_not_train_is_not_reported():
    source = "import torch\ndef debug():\n    torch.autograd.set_detect_anomaly(True)\n"
    assert _findings(source, "ML208") == []
    assert len(_findings(source + "def g(loss):\n    loss.backward()\n", "ML208")) == 1
    # at module level it is on for every program that imports the module (nerf-pytorch#42)
    assert len(_findings("import torch\ntorch.autograd.set_detect_anomaly(True)\n", "ML208")) == 1


def test_ml210_any_unnamed_reset_counts_as_a_reset():
    source = """
import torchmetrics
def fit(model, loader, epochs, metrics):
    auroc = torchmetrics.AUROC(task="binary")
    for epoch in range(epochs):
        for x, y in loader:
            auroc.update(model(x), y)
        print(auroc.compute())
        {reset}
"""
    assert len(_findings(source.format(reset="pass"), "ML210")) == 1
    assert _findings(source.format(reset="for m in metrics: m.reset()"), "ML210") == []


def test_ml211_and_ml202_share_the_step_loop_decision():
    body = """
import gc
import torch
def train(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        for batch in loader:
            model(batch).sum().backward()
            optimizer.step()
            {call}
        {call}
"""
    for call, code in (("gc.collect()", "ML211"), ("torch.cuda.empty_cache()", "ML202")):
        assert [f.line for f in _findings(body.format(call=call), code)] == [9]


def test_ml212_and_ml304_skip_files_that_cannot_match():
    from memlint.static.triggers import codes_that_could_match

    text = "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4)\n"
    assert codes_that_could_match(text, ["ML212", "ML304", "ML208", "ML209", "ML210"]) == []


def test_ml303_says_what_each_config_lacks_and_what_it_costs():
    source = """
import torch
from torch.distributed.fsdp import FullStateDictConfig, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
def save(model):
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, {config}):
        return model.state_dict()
"""
    def finding(config):
        [found] = _findings(source.format(config=config), "ML303")
        return found.message, found.help

    message, help = finding("FullStateDictConfig()")
    assert "every rank's GPU" in message and help == "set offload_to_cpu=True and rank0_only=True in its FullStateDictConfig"
    message, help = finding("FullStateDictConfig(rank0_only=True)")
    assert "rank 0's GPU" in message and help == "set offload_to_cpu=True in its FullStateDictConfig"
    message, help = finding("FullStateDictConfig(offload_to_cpu=True)")
    assert "every rank's CPU memory" in message and help.startswith("set rank0_only=True")
    assert _findings(source.format(config="FullStateDictConfig(offload_to_cpu=True, rank0_only=True)"), "ML303") == []


def test_ml204_messages_name_the_move_and_where_workers_run_it():
    source = """
import torch
from torch.utils.data import DataLoader, Dataset
class Pairs(Dataset):
    def __getitem__(self, i):
        return torch.tensor([i]).cuda()
def batchify(items):
    return torch.stack(items).to("cuda")
def init_worker(worker_id):
    torch.cuda.set_device(0)
loader = DataLoader(Pairs(), num_workers=2, collate_fn=batchify, worker_init_fn=init_worker)
"""
    messages = sorted(f.message for f in _findings(source, "ML204"))
    assert messages == [
        ".cuda() in Pairs.__getitem__ creates a CUDA context in every DataLoader worker",
        ".to('cuda') in collate_fn batchify() creates a CUDA context in every DataLoader worker",
        "worker_init_fn 'init_worker' calls torch.cuda.set_device(): a CUDA context in every worker",
    ]



def test_ml205_entries_appended_once_per_item_of_a_literal_are_not_per_sample():
    """One array per month of a literal list of months (read back through an index table): a few
    entries, whatever the samples (quiet). The same appends over the samples' files are reported."""
    source = """
import numpy as np
from torch.utils.data import DataLoader, Dataset

class Months(Dataset):
    def __init__(self, frame, files):
        month_list = [1, 2, 4, 5, 7, 8, 10, 11]
        self.observed = []
        self.index_month = np.zeros(len(frame), dtype=int)
        for i in range({loop}):
            self.observed.append(frame[i])

    def __len__(self):
        return len(self.index_month)

    def __getitem__(self, index):
        return self.observed[self.index_month[index]]

loader = DataLoader(Months(frame, files), batch_size=8, num_workers=4)
"""
    assert _findings(source.format(loop="len(month_list)"), "ML205") == []
    assert [f.line for f in _findings(source.format(loop="len(files)"), "ML205")] == [11]


def test_ml303_a_block_gathering_only_the_optimizer_state_follows_its_optimizer_config():
    """``FSDP.optim_state_dict`` under ``state_dict_type(..., FULL_STATE_DICT,
    optim_state_dict_config=FullOptimStateDictConfig(offload_to_cpu=True, rank0_only=True))``
    gathers only the optimizer's state, as that config says (quiet); without the flags it is
    reported, and so is the model's ``state_dict()`` in such a block with no model config."""
    source = """
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType
from torch.distributed.fsdp import FullOptimStateDictConfig

def save(policy, optimizer, path):
    config = FullOptimStateDictConfig({flags})
    with FSDP.state_dict_type(policy, StateDictType.FULL_STATE_DICT, optim_state_dict_config=config):
        state = {gather}
    torch.save(state, path)
"""
    gather = "FSDP.optim_state_dict(policy, optimizer)"
    assert _findings(source.format(flags="offload_to_cpu=True, rank0_only=True", gather=gather), "ML303") == []
    assert [f.line for f in _findings(source.format(flags="", gather=gather), "ML303")] == [8]
    model = "policy.state_dict()"
    assert [f.line for f in _findings(source.format(flags="offload_to_cpu=True, rank0_only=True", gather=model),
                                      "ML303")] == [8]


def test_ml203_an_optimizer_restored_in_one_process_keeps_the_loaded_tensors_as_its_state():
    """In one process, ``optimizer.load_state_dict(torch.load(path))`` moves the state onto the
    parameters' device, keeping a tensor already there as it is: no second copy (quiet). The model
    restored the same way has a second copy only while load_state_dict copies it (quiet too); held
    in a name beside its weights on the GPU, it gets the hint (info)."""
    source = """
import torch

def resume(model, path_w, path_o):
    model = model.cuda()
    optimizer = torch.optim.Adam(model.parameters())
    {owner}.load_state_dict(torch.load({path}))
    return model, optimizer
"""
    assert _findings(source.format(owner="optimizer", path="path_o"), "ML203") == []
    assert _findings(source.format(owner="model", path="path_w"), "ML203") == []
    held = source.format(owner="model", path="path_w").replace(
        "    model.load_state_dict(torch.load(path_w))", "    state = torch.load(path_w)\n    model.load_state_dict(state)")
    assert [f.severity for f in _findings(held, "ML203")] == ["info"]


def test_ml209_a_config_flag_is_left_when_another_module_of_the_project_may_read_the_outputs(tmp_path):
    """``config.output_hidden_states = True`` in a training script changes the model's outputs
    wherever it runs: when a trainer of another module names the hidden states (a distillation
    loss reading them) it is not reported; with no module naming them it is (info)."""
    from memlint.config import Config
    from memlint.static.runner import check_paths

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "run.py").write_text(
        "import torch\nfrom transformers import AutoConfig, AutoModel\nfrom trainer import train\n\n"
        "config = AutoConfig.from_pretrained('bert-base-uncased')\nconfig.output_hidden_states = True\n"
        "model = AutoModel.from_pretrained('bert-base-uncased', config=config)\n"
        "optimizer = torch.optim.AdamW(model.parameters())\ntrain(model, optimizer)\nloss.backward()\n")
    trainer = tmp_path / "trainer.py"
    trainer.write_text("def train(model, optimizer):\n    for batch in loader:\n"
                       "        out = model(**batch)\n        hidden_states = out[2]\n")

    def found():
        result = check_paths([str(tmp_path / "run.py")], Config(select=["ML209"]), use_cache=False)
        return [(f.line, f.severity) for f in result.findings]

    assert found() == []
    trainer.write_text(trainer.read_text().replace("hidden_states = out[2]", "logits = out[0]"))
    assert found() == [(6, "info")]


def test_ml214_a_copy_read_in_another_module_or_named_only_in_a_comment(tmp_path):
    """An attribute holding a copy of the weights is read when another module of the project
    names it (``model.initial_state`` in a reset script): quiet. Named only in a comment of its
    own module, nothing reads it: reported. A copy appended at every call says so."""
    from memlint.config import Config
    from memlint.static.runner import check_paths

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "wrapper.py").write_text(
        "import copy\n"
        "from torch import nn\n"
        "\n"
        "class Wrapper:\n"
        "    def __init__(self, body: nn.Module):\n"
        "        self.body = body\n"
        "        self.initial_state = copy.deepcopy(body.state_dict())  # kept for initial_state resets\n"
        "        self.snapshots = []\n"
        "\n"
        "    def snapshot(self):\n"
        "        self.snapshots.append(copy.deepcopy(self.body))\n"
    )

    def ml214():
        result = check_paths([str(tmp_path)], Config(select=["ML214"]), use_cache=False)
        return sorted((f.line, f.message) for f in result.findings)

    found = ml214()
    assert [line for line, _ in found] == [7, 11]
    assert "another copy at every call" in found[1][1] and "another copy" not in found[0][1]
    (tmp_path / "reset.py").write_text("def reset(w):\n    w.body.load_state_dict(w.initial_state)\n")
    assert [line for line, _ in ml214()] == [11]


def test_ml215_near_misses_rebound_read_in_the_loop_nested_function_and_a_script():
    """A checkpoint rebound to None before training, read inside the loop, or read by a nested
    function is not reported; a script's top-level load followed by a top-level training loop is."""
    base = """
import torch

def main(model, optimizer, loader, path):
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["model"])
    {between}
    for x, y in loader:
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        {inside}
"""
    assert [f.line for f in _findings(base.format(between="", inside=""), "ML215")] == [5]
    # mapped onto the device: ML203's finding, not repeated here
    assert _findings(base.replace('"cpu"', '"cuda"').format(between="", inside=""), "ML215") == []
    assert _findings(base.format(between="checkpoint = None", inside=""), "ML215") == []
    assert _findings(base.format(between="", inside="print(checkpoint['epoch'])"), "ML215") == []
    closure = base.format(between="def report():\n        return checkpoint['epoch']", inside="")
    assert _findings(closure, "ML215") == []
    script = """
import torch
from model import Net, loader, optimizer
net = Net()
state = torch.load("last.pt", map_location="cpu")
net.load_state_dict(state)
for x, y in loader:
    loss = net(x, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    assert [(f.line, f.severity) for f in _findings(script, "ML215")] == [(5, "info")]


def test_ml215_a_part_of_the_checkpoint_bound_to_a_name_is_the_checkpoint():
    """``state_dict = checkpoint["model"]`` copied into the model keeps the weights as the whole
    checkpoint would: reported; deleting the part later than the loop's start does not help, and
    reading the part inside the loop makes it needed (quiet)."""
    source = """
import torch

def main(model, optimizer, loader, path):
    checkpoint = torch.load(path, map_location="cpu")
    state_dict = checkpoint["model"]
    model.load_state_dict(state_dict)
    for x, y in loader:
        loss = model(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        {inside}
"""
    assert [(f.line, f.severity) for f in _findings(source.format(inside=""), "ML215")] == [(5, "info")]
    assert _findings(source.format(inside="print(len(state_dict))"), "ML215") == []
    # a number read out of it (best_acc1 = checkpoint["best_acc1"]), rebound and read in the loop,
    # is no part the model copies: the checkpoint is still kept
    scalar = source.replace('    state_dict = checkpoint["model"]\n',
                            '    state_dict = checkpoint["model"]\n    best = checkpoint["best"]\n    best = best.to("cuda")\n')
    assert [f.line for f in _findings(scalar.format(inside="best = max(best, loss.item())"), "ML215")] == [5]


_ML216_SCRIPT = """
import lightning.pytorch as pl
from lightning.pytorch.callbacks import BasePredictionWriter


class Writer(BasePredictionWriter):
    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx, dataloader_idx):
        pass


def run(model, datamodule):
    trainer = pl.Trainer(callbacks=[Writer(write_interval="batch")])
    {call}
"""


def test_ml216_a_discarded_predict_result_is_reported_and_a_kept_or_declined_one_is_not():
    def lines(call):
        return [f.line for f in _findings(_ML216_SCRIPT.format(call=call), "ML216")]

    assert lines("trainer.predict(model, datamodule=datamodule)") == [13]
    assert lines("trainer.predict(model, datamodule=datamodule, return_predictions=True)") == [13]
    assert lines("trainer.predict(model, datamodule=datamodule, return_predictions=False)") == []
    assert lines("outputs = trainer.predict(model, datamodule=datamodule)") == []
    assert lines("return trainer.predict(model, datamodule=datamodule)") == []
    # not a Lightning trainer, and no argument only Lightning's predict takes
    assert lines("model.predict(datamodule)") == []


def test_ml216_needs_to_know_that_predict_step_returns_something():
    handed_in = """
import lightning.pytorch as pl

def run(model, loader):
    trainer = pl.Trainer()
    trainer.predict(model, loader)
"""
    assert _findings(handed_in, "ML216") == []  # what the model returns is unknown
    writes_itself = """
import torch
import lightning.pytorch as pl

class Model(pl.LightningModule):
    def predict_step(self, batch, batch_idx):
        torch.save(self(batch).cpu(), f"out_{batch_idx}.pt")
        return None

def run(loader):
    pl.Trainer().predict(Model(), loader)
    trainer = pl.Trainer()
    trainer.predict(Model(), loader)
"""
    assert _findings(writes_itself, "ML216") == []
    returns = writes_itself.replace("return None", "return self(batch)")
    assert [f.line for f in _findings(returns, "ML216")] == [11, 13]


def test_ml216_a_model_whose_predict_step_lives_in_a_base_elsewhere_is_left(tmp_path):
    from memlint.config import Config
    from memlint.static.runner import check_paths

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "base.py").write_text(
        "import torch\nimport lightning.pytorch as pl\n\n"
        "class Base(pl.LightningModule):\n"
        "    def predict_step(self, batch, batch_idx):\n"
        "        torch.save(self(batch).cpu(), f'out_{batch_idx}.pt')\n")
    (tmp_path / "run.py").write_text(
        "import lightning.pytorch as pl\nfrom base import Base\n\n"
        "class Model(Base):\n    pass\n\n"
        "def run(loader):\n    trainer = pl.Trainer()\n    trainer.predict(Model(), loader)\n")
    result = check_paths([str(tmp_path / "run.py")], Config(select=["ML216"]), use_cache=False)
    assert [f for f in result.findings if f.code == "ML216"] == []


def test_ml205_a_slot_written_per_sample_does_not_make_its_key_a_sample_index():
    """``item[k] = self.embedding[k][idx]``: ``k`` names one of a few attributes, not a sample;
    the dict holds a tensor per attribute, indexed per sample inside the tensor."""
    source = """
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

class News(Dataset):
    def __init__(self, rows, folder):
        self.rows = rows
        self.embedding = {k: torch.from_numpy(np.load(f"{folder}/{k}.npy")).float() for k in ("title", "abstract")}

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        item = dict(self.rows[idx])
        for k in ("title", "abstract"):
            item[k] = self.embedding[k][idx]
        return item

loader = DataLoader(News([], "emb"), batch_size=8, num_workers=4)
"""
    assert _findings(source, "ML205") == []
    per_sample = source.replace("self.embedding[k][idx]", "self.embedding[idx]")
    assert [f.line for f in _findings(per_sample, "ML205")] == [9]


def test_ml202_a_loop_named_for_iterations_that_runs_no_step_itself_is_not_a_step_loop():
    """``for iteration in range(repetitions)``: one whole training run per iteration (built,
    trained by a wrapper whose method cannot be read, torn down); the header's name alone is no
    evidence of steps. A loop over a loader that runs the model is."""
    runs = """
import torch

def train_pet(configs, repetitions, data):
    for config in configs:
        for iteration in range(repetitions):
            wrapper = build_wrapper(config)
            wrapper.train(data)
            wrapper.model = None
            wrapper = None
            torch.cuda.empty_cache()
"""
    assert _findings(runs, "ML202") == []
    steps = """
import torch

def train(model, optimizer, loader):
    for iteration, (x, y) in enumerate(loader):
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()
"""
    assert [f.line for f in _findings(steps, "ML202")] == [9]
    chunks = """
import torch

def fisher(xt, batch_size):
    total = torch.zeros(xt.shape[-1], xt.shape[-1])
    for i in range(len(xt) // batch_size):
        chunk = xt[i * batch_size:(i + 1) * batch_size].cuda()
        total = total + (chunk.transpose(1, 2) @ chunk).sum(0).cpu()
        del chunk
        torch.cuda.empty_cache()
    return total
"""
    assert [f.line for f in _findings(chunks, "ML202")] == [10]  # a batch of data moved to the GPU each time


def test_ml204_seeding_cuda_in_a_worker_init_fn_creates_no_context():
    """``torch.cuda.manual_seed_all`` is queued until CUDA is initialised: a worker that seeds
    creates no context. ``torch.cuda.set_device`` there does."""
    source = """
import random
import numpy as np
import torch
from torch.utils.data import DataLoader


def seed_worker(_):
    seed = torch.initial_seed() % 2**32
    random.seed(seed)
    np.random.seed(seed)
    torch.cuda.manual_seed_all(seed)


def loader(dataset):
    return DataLoader(dataset, batch_size=8, num_workers=4, worker_init_fn=seed_worker)
"""
    assert _findings(source, "ML204") == []
    contexts = source.replace("torch.cuda.manual_seed_all(seed)", "torch.cuda.set_device(0)")
    assert [f.line for f in _findings(contexts, "ML204")] != []


def test_ml203_a_load_the_spawning_method_reaches_after_mp_spawn_runs_in_the_parent():
    """``mp.spawn(self._train, ...)`` then ``self._postprocess()``, which loads: the parent loads
    once, after the ranks finished. A load in the spawned ``_train`` runs in every rank."""
    source = """
import torch
import torch.multiprocessing as mp
import torch.distributed as dist


class Searcher:
    def __init__(self, model):
        self.model = model

    def execute(self, args):
        mp.spawn(self._train, nprocs=args.gpus, args=(args,))
        torch.save(self.model, "./best.pt")
        return self._postprocess()

    def _train(self, gpu, args):
        dist.init_process_group("nccl", rank=gpu, world_size=args.gpus)
        {inside}

    def _postprocess(self):
        device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        model = torch.load("./best.pt")
        model = model.to(device)
        return model
"""
    assert _findings(source.format(inside="pass"), "ML203") == []
    in_rank = source.format(inside='model = torch.load("./best.pt")')
    assert [f.line for f in _findings(in_rank, "ML203")] == [18]
