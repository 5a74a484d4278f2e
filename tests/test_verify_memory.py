"""The in-step peak and its composition, the GPU fit and the levers: numbers worked out by hand.

The models are small enough to measure in this process (``measure_peak``, the engine of the
``memlint_peak_below`` fixture, with the accounting ``memlint verify`` uses in its child);
the end-to-end runs are in test_verify.py.
"""

from __future__ import annotations

import re

import pytest
import torch
from torch import nn

from memlint.config import ConfigError
from memlint.dynamic.budget import ALLOCATOR_OVERHEAD, CUDA_CONTEXT_BYTES, build_memory, project
from memlint.dynamic.cards import CARDS, parse_capacity, parse_size
from memlint.dynamic.levers import levers
from memlint.dynamic.measure import measure_peak
from memlint.dynamic.memory import CATEGORIES, PHASES
from memlint.report.verify_text import memory_lines

GiB, MiB, KiB = 1 << 30, 1 << 20, 1 << 10


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Bytes do not depend on threads, and on a busy 2-core machine two-thread kernels wait ~20x longer."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _bytes(model: nn.Module) -> int:
    return sum(p.numel() * p.element_size() for p in model.parameters())


def _mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


def _deep_narrow(depth: int = 32, width: int = 64) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(*[layer for _ in range(depth) for layer in (nn.Linear(width, width), nn.Tanh())])


def _train(model, optimizer, steps=3, batch=32, features=128, bf16=False, checkpointed=False):
    with measure_peak() as measured:
        for _ in range(steps):
            x = torch.randn(batch, features)
            optimizer.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                out = model(x)
            out.float().pow(2).mean().backward()
            optimizer.step()
    return measured.memory


# -- measured composition -----------------------------------------------------------------------

def test_adamw_mlp_parameters_gradients_and_state_match_the_analytic_bytes():
    model = _mlp()
    params = _bytes(model)  # (128*256+256 + 256*256+256 + 256*10+10) * 4
    assert params == 405_544
    memory = _train(model, torch.optim.AdamW(model.parameters(), lr=1e-3))
    high = memory.high_water_by_category
    assert high.parameters == pytest.approx(params, rel=0.02)
    assert high.gradients == pytest.approx(params, rel=0.02)
    assert high.optimizer_state == pytest.approx(2 * params, rel=0.02)  # exp_avg and exp_avg_sq
    # At the peak (the optimizer step: every class is alive) the state is state, not "other".
    assert memory.peak_phase == "optimizer"
    assert memory.peak_by_category.optimizer_state == pytest.approx(2 * params, rel=0.02)
    assert memory.peak_by_category.total == memory.peak_bytes


def test_plain_sgd_keeps_no_optimizer_state():
    model = _mlp()
    memory = _train(model, torch.optim.SGD(model.parameters(), lr=0.1))
    assert memory.high_water_by_category.optimizer_state == 0
    assert all(step.at_peak.optimizer_state == 0 for step in memory.steps)
    assert memory.high_water_by_category.parameters == pytest.approx(_bytes(model), rel=0.02)
    assert memory.high_water_by_category.gradients == pytest.approx(_bytes(model), rel=0.02)
    assert not [lever for lever in memory.levers if "8-bit" in lever.what]


def test_deep_narrow_network_is_dominated_by_the_activations_it_saves():
    model = _deep_narrow()
    # Saved for backward: the input, and each Tanh's output (which the next Linear saves too).
    saved = (1 + 32) * 256 * 64 * 4
    memory = _train(model, torch.optim.SGD(model.parameters(), lr=0.01), steps=2, batch=256, features=64)
    assert memory.peak_phase in ("forward", "backward")
    at_peak = memory.peak_by_category
    assert at_peak.activations > memory.peak_bytes / 2
    assert at_peak.activations == pytest.approx(saved, rel=0.15)
    assert memory.high_water_by_category.activations == pytest.approx(saved, rel=0.15)


def test_bf16_autocast_saves_smaller_activations_than_fp32_on_the_same_model():
    fp32 = _train(model := _deep_narrow(), torch.optim.SGD(model.parameters(), lr=0.01), steps=2, batch=256,
                  features=64)
    bf16 = _train(model := _deep_narrow(), torch.optim.SGD(model.parameters(), lr=0.01), steps=2, batch=256,
                  features=64, bf16=True)
    assert bf16.high_water_by_category.activations < 0.75 * fp32.high_water_by_category.activations
    assert bf16.high_water_by_category.parameters == fp32.high_water_by_category.parameters
    # The lever measured on the fp32 run foresaw the saving autocast then made (within 25%).
    [lever] = [lever for lever in fp32.levers if lever.what.startswith("bf16 autocast")]
    assert lever.saves_bytes == pytest.approx(fp32.peak_bytes - bf16.peak_bytes, rel=0.25)
    assert not [lever for lever in bf16.levers if lever.what.startswith("bf16 autocast")]


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


class Tower(nn.Module):
    def __init__(self, checkpointed: bool) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.ModuleList(Block(64) for _ in range(6))
        self.checkpointed = checkpointed

    def forward(self, x):
        for block in self.blocks:
            x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False) if self.checkpointed else block(x)
        return x


def test_checkpointing_lever_foresees_the_saving_checkpointing_makes():
    plain = _train(model := Tower(False), torch.optim.SGD(model.parameters(), lr=0.01), steps=2, batch=512,
                   features=64)
    [lever] = [lever for lever in plain.levers if lever.what.startswith("activation checkpointing")]
    assert "the 6 Block blocks in Tower.blocks" in lever.what
    checkpointed = _train(model := Tower(True), torch.optim.SGD(model.parameters(), lr=0.01), steps=2,
                          batch=512, features=64)
    assert lever.saves_bytes == pytest.approx(plain.peak_bytes - checkpointed.peak_bytes, rel=0.25)


def test_gradients_left_alive_through_the_forward_pass_are_a_lever():
    model = _mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with measure_peak() as measured:
        for _ in range(3):
            loss = model(torch.randn(512, 128)).pow(2).mean()
            optimizer.zero_grad(set_to_none=False)  # zeroed, not freed: alive through the next forward
            loss.backward()
            optimizer.step()
    memory = measured.memory
    forward = [s for s in memory.steps if s.step > 1][0]
    assert forward.phase_peaks["forward"] > 0
    assert any("zero_grad(set_to_none=True)" in lever.what for lever in memory.levers)


def test_batch_is_the_leading_dimension_of_the_outermost_module_input():
    model = _mlp()
    memory = _train(model, torch.optim.SGD(model.parameters(), lr=0.1), batch=48)
    assert memory.batch == {"size": 48, "module": "Sequential"}


def test_torch_func_transforms_run_under_the_measurement_and_every_hook_is_gone_after():
    from torch.func import functional_call, grad

    model = _mlp()
    params = dict(model.named_parameters())
    forward_hooks = len(torch.nn.modules.module._global_forward_hooks)
    with measure_peak() as measured:
        grads = grad(lambda p, x: functional_call(model, p, (x,)).sum())(params, torch.randn(4, 128))
        model(torch.randn(4, 128)).sum().backward()
    assert set(grads) == set(params) and measured.memory is not None
    assert torch._C._autograd._top_saved_tensors_default_hooks(True) is None
    assert len(torch.nn.modules.module._global_forward_hooks) == forward_hooks
    assert torch.autograd.graph.disable_saved_tensors_hooks.__module__ == "torch.autograd.graph"


def test_a_block_that_allocates_nothing_has_no_memory_section():
    with measure_peak() as measured:
        pass
    assert measured.memory is None


# -- the pytest fixture -------------------------------------------------------------------------

def test_peak_budget_fixture_passes_under_the_budget_and_fails_over_it(memlint_peak_below):
    model = _mlp()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def train_step():
        optimizer.zero_grad()
        model(torch.randn(32, 128)).pow(2).mean().backward()
        optimizer.step()

    with memlint_peak_below("64MiB") as measured:
        train_step()
    assert 0 < measured.memory.peak_bytes < 64 * MiB
    with pytest.raises(pytest.fail.Exception) as failed:
        with memlint_peak_below("1MiB"):
            train_step()
    message = str(failed.value)
    assert "is above the budget of 1.0 MiB" in message and "optimizer state" in message
    with pytest.raises(ConfigError, match="not a size"):
        with memlint_peak_below("H100"):
            pass


# -- fit: a projection --------------------------------------------------------------------------

def _record(phases: dict, batch: int | None = 64, step: int = 4, end=None) -> dict:
    return {"step": step, "phases": phases, "high_water": [0, 0, 0, 0, 0], "end": end,
            "batch": {"size": batch, "module": "Net"} if batch else None}


def _raw(*records, **meta) -> dict:
    return {"steps": list(records), "partial": None, "blocks": None, "optimizers": [], "autocast": False,
            "wide_parameter_bytes": 0, "world_size": 1, "allocator": None, "device_total_bytes": None, **meta}


def test_fit_adds_the_allowance_and_scales_activations_and_other_with_the_batch():
    # forward: 1 GiB parameters + 1 GiB activations + 0.5 GiB other; optimizer: 1 GiB params, grads, 2 GiB state
    forward = [int(2.5 * GiB), GiB, 0, 0, 0, GiB]
    optimizer = [4 * GiB + 256 * MiB, GiB, GiB, 2 * GiB, 0, 0]
    record = _record({"forward": forward, "optimizer": optimizer})
    memory = build_memory(_raw(record), warmup=0, capacity=parse_capacity("24GiB"))
    fit = memory.fit
    assert memory.peak_bytes == optimizer[0] and memory.peak_phase == "optimizer"
    assert fit.projected_bytes == CUDA_CONTEXT_BYTES + int(optimizer[0] * (1 + ALLOCATOR_OVERHEAD)) + 1
    assert fit.fits and fit.headroom_bytes == 24 * GiB - fit.projected_bytes
    usable = (24 * GiB - CUDA_CONTEXT_BYTES) / (1 + ALLOCATOR_OVERHEAD)
    by_forward = int(64 * (usable - GiB) / (1.5 * GiB))
    by_optimizer = int(64 * (usable - 4 * GiB) / (256 * MiB))
    assert fit.max_batch == min(by_forward, by_optimizer) == by_forward
    assert memory.to_json()["fit"] == {"capacity_bytes": 24 * GiB, "projected_bytes": fit.projected_bytes,
                                       "fits": True, "headroom_bytes": fit.headroom_bytes, "max_batch": by_forward}


def test_fit_that_does_not_fit_says_by_how_much_and_no_batch_fits_when_the_fixed_part_alone_is_too_big():
    record = _record({"optimizer": [20 * GiB, 5 * GiB, 5 * GiB, 10 * GiB, 0, 0]})
    fit = build_memory(_raw(record), warmup=0, capacity=parse_capacity("16GiB")).fit
    assert not fit.fits and fit.headroom_bytes < 0 and fit.max_batch == 0
    assert "does not fit" in "\n".join(memory_lines(build_memory(_raw(record), warmup=0,
                                                                  capacity=parse_capacity("16GiB"))))


def test_fit_uses_the_allocator_measured_on_cuda_and_the_device_when_no_size_is_given():
    record = _record({"forward": [GiB, 0, 0, 0, 0, GiB]}, batch=None)
    raw = _raw(record, allocator={"max_allocated": GiB, "max_reserved": int(1.5 * GiB)},
               device_total_bytes=16 * GiB)
    memory = build_memory(raw, warmup=0, device="cuda")
    assert memory.fit.capacity_bytes == 16 * GiB and memory.fit.allocator_measured
    assert memory.fit.projected_bytes == CUDA_CONTEXT_BYTES + int(1.5 * GiB)
    assert memory.fit.max_batch is None  # no batch seen
    assert build_memory(raw, warmup=0, device="cpu").fit is None


def test_a_tiny_peak_is_projected_with_the_assumed_allocator_overhead():
    # cuBLAS workspaces and 2 MiB segments dominate what a 50 KiB model reserves (x1000)
    record = _record({"forward": [50 * 1024, 0, 0, 0, 0, 50 * 1024]}, batch=32)
    raw = _raw(record, allocator={"max_allocated": 60 << 20, "max_reserved": 66 << 20},
               device_total_bytes=16 * GiB)
    fit = build_memory(raw, warmup=0, device="cuda").fit
    assert not fit.allocator_measured and fit.allocator_factor == pytest.approx(1.1)


def test_peak_is_taken_over_the_measured_steps_and_high_water_marks_over_all_of_them():
    warmup_step = {**_record({"optimizer": [9 * GiB, GiB, GiB, 0, 0, 0]}, step=1), "high_water": [1, 2, 3, 4, 5]}
    measured = [{**_record({"forward": [value, 0, 0, 0, 0, 0]}, step=step), "high_water": [step, 0, 0, 0, 0]}
                for step, value in ((2, 3 * GiB), (3, 5 * GiB), (4, 4 * GiB))]
    memory = build_memory(_raw(warmup_step, *measured), warmup=1)
    assert (memory.peak_step, memory.peak_bytes, memory.peak_phase) == (3, 5 * GiB, "forward")
    assert memory.high_water_by_category.parameters == 4 and memory.measured_steps == 3
    assert [s.step for s in memory.steps] == [1, 2, 3, 4]


def test_memory_json_has_exactly_the_designed_shape():
    record = _record({"forward": [100, 10, 20, 30, 15, 5], "backward": [90, 10, 20, 30, 0, 0]})
    data = build_memory(_raw(record), warmup=0).to_json()
    assert set(data) == {"peak_bytes", "peak_step", "peak_phase", "peak_by_category", "high_water_by_category",
                         "fit", "levers", "levers_matter", "warmup_only"}  # the last two added, as the contract allows
    assert data["peak_by_category"] == {"parameters": 10, "gradients": 20, "optimizer_state": 30,
                                        "activations": 20, "other": 20}
    assert set(data["high_water_by_category"]) == set(CATEGORIES) and data["fit"] is None
    assert data["peak_phase"] in PHASES


def test_capacity_sizes_and_cards():
    assert parse_capacity("24GiB").bytes == 24 * GiB
    assert parse_capacity("80GB").bytes == 80 * 10**9
    assert parse_capacity("512 MiB").bytes == 512 * MiB
    assert parse_capacity(3 * GiB).bytes == 3 * GiB
    for name in ("RTX4090", "rtx 4090", "4090"):
        assert parse_capacity(name).bytes == int(CARDS["RTX4090"] * GiB)
    assert parse_capacity("a100_80gb").label == "A100-80GB (79.15 GiB)"
    assert parse_capacity(None) is None
    with pytest.raises(ConfigError, match="say which, A100-40GB or A100-80GB"):
        parse_capacity("A100")
    with pytest.raises(ConfigError, match="give a unit"):
        parse_capacity("24")
    with pytest.raises(ConfigError, match="neither a size .* nor a known card"):
        parse_capacity("big")
    with pytest.raises(ConfigError, match="must be positive"):
        parse_capacity("0GiB")
    assert parse_size("2GiB") == 2 * GiB


# -- levers: what each would save, phase by phase -----------------------------------------------

def test_eight_bit_state_saves_three_quarters_of_the_state_until_another_phase_is_higher():
    optimizer_phase = [10 * GiB, 2 * GiB, 2 * GiB, 4 * GiB, 0, 0]  # + 2 GiB temporaries
    forward = [8 * GiB, 2 * GiB, 0, 4 * GiB, 0, GiB]  # + 1 GiB other
    record = _record({"forward": forward, "optimizer": optimizer_phase}, batch=None,
                     end=[8 * GiB, 2 * GiB, 2 * GiB, 4 * GiB, 0, 0])
    found = {lever.what.split(" (")[0].split("(")[0]: lever.saves_bytes
             for lever in levers(record, _raw(record, optimizers=[{"class": "AdamW", "fused": False,
                                                                    "foreach": None}]))}
    # 8-bit: optimizer 10 - 3 = 7 GiB, forward 8 - 3 = 5 GiB: the peak drops by 3 GiB.
    assert found["8-bit optimizer state"] == 3 * GiB
    # fused: the optimizer step's 2 GiB of temporaries go; then the forward pass (8 GiB) is the peak.
    assert found["AdamW"] == 2 * GiB


def test_levers_that_shrink_activations_save_nothing_when_the_peak_is_in_the_optimizer_step():
    record = _record({"forward": [5 * GiB, GiB, 0, 2 * GiB, 0, GiB],
                      "optimizer": [6 * GiB, GiB, GiB, 2 * GiB, 0, 0]}, batch=256)
    found = levers(record, _raw(record))
    assert not [lever for lever in found if "autocast" in lever.what or "accumulation" in lever.what]


def test_sharding_is_offered_only_for_distributed_runs():
    record = _record({"optimizer": [4 * GiB, GiB, GiB, 2 * GiB, 0, 0]}, batch=None)
    assert not [lever for lever in levers(record, _raw(record)) if "FSDP" in lever.what]
    [fsdp] = [lever for lever in levers(record, _raw(record, world_size=4)) if "FSDP" in lever.what]
    assert fsdp.saves_bytes == 3 * GiB and "over the 4 ranks" in fsdp.what


def test_text_table_lists_every_class_the_fit_and_the_levers():
    record = _record({"forward": [3 * GiB, GiB, 0, GiB, 0, GiB]}, batch=32)
    memory = build_memory(_raw(record, optimizers=[{"class": "Adam", "fused": False, "foreach": None}]),
                          warmup=0, capacity=parse_capacity("RTX4090"))
    text = "\n".join(memory_lines(memory))
    assert "peak memory: 3.0 GiB in step 4 (forward)" in text
    for label in ("parameters", "gradients", "optimizer state", "activations", "other"):
        assert f"\n  {label} " in text
    assert "fit on RTX4090 (23.64 GiB), a projection:" in text and "fits," in text
    assert "largest batch that would fit: ~" in text and "levers on the peak" in text


def test_an_internal_error_stops_the_measurement_not_the_training(monkeypatch):
    from memlint.dynamic.peak import PeakAccountant

    def broken(self, parameters):
        raise RuntimeError("boom")

    monkeypatch.setattr(PeakAccountant, "_add_parameters", broken)
    model = _mlp()
    before = model[0].weight.detach().clone()
    assert _train(model, torch.optim.SGD(model.parameters(), lr=0.1)) is None
    assert not torch.equal(before, model[0].weight)  # the steps ran


def test_static_waste_findings_are_listed_beside_the_levers():
    from memlint.dynamic.report import VerifiedFinding
    from memlint.findings import Finding

    record = _record({"forward": [3 * GiB, GiB, 0, 0, 0, 2 * GiB]}, batch=32)
    memory = build_memory(_raw(record), warmup=0)
    waste = Finding("train.py", 40, 9, 40, 20, "ML201", "grad-enabled-inference", "warning", "eval with grad")
    leak = Finding("train.py", 12, 9, 12, 20, "ML101", "graph-accumulation", "error", "total_loss keeps graphs")
    text = "\n".join(memory_lines(memory, [VerifiedFinding(waste, False), VerifiedFinding(leak, True)]))
    assert "static findings that raise the peak: ML201 (train.py:40)" in text and "ML101" not in text


def test_a_cpu_run_is_projected_with_the_optimizer_step_cuda_would_take():
    # On CUDA, AdamW steps with foreach (a temporary copy of every parameter); on CPU it loops over
    # them. foreach=True on CPU measures what CUDA's default step holds: the projections agree.
    def run(**options):
        model = _deep_narrow()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, **options)
        with measure_peak(gpu_memory="24GiB") as measured:
            for _ in range(3):
                optimizer.zero_grad()
                model(torch.randn(8, 64)).pow(2).mean().backward()
                optimizer.step()
        return measured.memory

    default, foreach = run(), run(foreach=True)
    assert default.peak_phase == foreach.peak_phase == "optimizer"
    assert default.fit.foreach_bytes > 0.8 * _bytes(_deep_narrow()) and foreach.fit.foreach_bytes == 0
    assert default.peak_bytes < foreach.peak_bytes
    assert default.fit.projected_bytes == pytest.approx(foreach.fit.projected_bytes, rel=0.02)


def test_a_batch_sliced_from_a_dataset_in_memory_does_not_make_the_dataset_an_activation():
    model = _mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with measure_peak() as measured:
        data = torch.randn(256 * 32, 128)  # 4 MiB held for the whole run
        for step in range(3):
            batch = data[step * 32:(step + 1) * 32]  # saved by the first Linear: a view of 1/256 of it
            optimizer.zero_grad()
            model(batch).pow(2).mean().backward()
            optimizer.step()
    high = measured.memory.high_water_by_category
    assert high.activations < 256 * 1024 and high.other >= data.nbytes


def test_plot_stacks_each_steps_peak_by_class():
    from memlint.dynamic.axes import byte_axis
    from memlint.dynamic.plot import render_svg
    from memlint.dynamic.report import Sample, VerifyReport

    records = [_record({"forward": [100 + step, 10, 20, 30, 15, 5]}, step=step) for step in (1, 2, 3)]
    report = VerifyReport("train.py", "cpu", 2, 1, "stable", "", samples=[Sample(s, 1, 0, 1) for s in (1, 2, 3)],
                          memory=build_memory(_raw(*records), warmup=1))
    svg = render_svg(report)
    assert "peak by class" in svg and 'height="660"' in svg
    assert svg.count("<title>step 2 (forward): ") == 5  # one segment per class
    heights = [float(h) for h in re.findall(r'height="([\d.]+)" fill="#[0-9a-f]+"><title>step 3 ', svg)]
    top = byte_axis([0, 103], 1.0).hi  # the axis of the tallest bar (103 B), 150 px tall
    assert sum(heights) == pytest.approx(150 * 103 / top, abs=0.5)


def test_gpu_memory_comes_from_the_verify_table_and_bad_values_are_usage_errors():
    from memlint.dynamic.options import build_options

    assert build_options({"gpu-memory": "H100"}, script="train.py").gpu_memory == "H100"
    assert build_options({"gpu-memory": "H100"}, script="train.py", gpu_memory="24GiB").gpu_memory == "24GiB"
    with pytest.raises(ConfigError, match="gpu-memory: True has the wrong type"):
        build_options({"gpu-memory": True}, script="train.py")
    with pytest.raises(ConfigError, match="neither a size"):
        build_options({"gpu-memory": "huge"}, script="train.py")


def test_steps_counted_again_from_one_forget_the_earlier_ones():
    from memlint.dynamic.peak import PeakAccountant
    from memlint.dynamic.storages import StorageTracker

    accountant = PeakAccountant(StorageTracker("cpu"))
    for step in (1, 2, 3, 1, 2):  # a step boundary of higher rank took over after step 3
        accountant.end_step(step)
    assert [record["step"] for record in accountant.steps] == [1, 2]


def test_a_step_without_backward_is_offered_inference_mode_not_gradient_accumulation():
    # batch inference with grad on: the saved activations are the waste
    record = _record({"forward": [3 * GiB, GiB, 0, 0, 0, 2 * GiB]}, batch=128)
    found = {lever.what.split(" (")[0].split(":")[0]: lever.saves_bytes for lever in levers(record, _raw(record))}
    assert found["torch.inference_mode()"] == 2 * GiB
    assert "2 chunks of 64 instead of one batch of 128; activations halve" in found
    assert not [what for what in found if "gradient accumulation" in what or "checkpointing" in what]


def test_an_inference_run_shows_no_rows_for_gradients_and_optimizer_state():
    record = _record({"forward": [3 * GiB, GiB, 0, 0, 0, 2 * GiB]}, batch=128)
    rows = [line.split()[0] for line in memory_lines(build_memory(_raw(record), warmup=0))[2:5]]
    assert rows == ["parameters", "activations", "other"]
    assert "no backward pass or optimizer step ran" in "\n".join(memory_lines(build_memory(_raw(record), warmup=0)))


def test_a_peak_of_warmup_steps_only_says_what_was_measured():
    records = [_record({"forward": [100 * MiB, 0, 0, 0, 0, 50 * MiB]}, step=step) for step in (1, 2)]
    memory = build_memory(_raw(*records), warmup=3)
    assert memory.warmup_only and memory.to_json()["warmup_only"]
    text = "\n".join(memory_lines(memory))
    assert "the highest of the 2 warm-up steps that ran: no measured step ran" in text
    assert "measured steps" not in text.splitlines()[0].split(":")[1]


def test_an_unfinished_step_counts_only_when_the_script_raised_in_it():
    done = _record({"forward": [100 * MiB, 0, 0, 0, 0, 0]}, step=1)
    after = _record({"forward": [300 * MiB, 0, 0, 0, 0, 0]}, step=2)
    raw = {**_raw(done), "partial": after}
    assert build_memory(raw, warmup=0, unfinished=False).peak_step == 1  # evaluation after the last step
    memory = build_memory(raw, warmup=0, unfinished=True)
    assert (memory.peak_step, memory.unfinished_step) == (2, 2)
    assert "in step 2, unfinished when the script raised" in memory_lines(memory)[0]


def test_the_peak_rises_with_the_growth_only_when_it_does():
    flat = [_record({"forward": [100 * MiB, 0, 0, 0, 0, 0]}, step=step) for step in range(1, 7)]
    rising = [_record({"forward": [100 * MiB + step * MiB, 0, 0, 0, 0, 0]}, step=step) for step in range(1, 7)]
    assert "rises" not in memory_lines(build_memory(_raw(*flat), warmup=1), growing=True)[0]
    assert "(it rises 1.0 MiB/step with the growth above)" in memory_lines(build_memory(_raw(*rising), warmup=1),
                                                                        growing=True)[0]


def test_levers_are_not_shown_when_the_model_is_too_small_for_any_to_matter():
    record = _record({"forward": [176 * KiB, 0, 0, 0, 0, 120 * KiB]}, batch=64)
    memory = build_memory(_raw(record), warmup=0)
    assert memory.levers and not memory.levers_matter  # computed, each >= 1% of the peak, but not shown
    text = "\n".join(memory_lines(memory))
    assert ("levers on the peak: none shown; the peak is under 1% of a T4 (14.56 GiB): the model is too small "
            "for any lever to matter") in text
    assert "of 32 instead of one" not in text
    big = build_memory(_raw(record), warmup=0, capacity=parse_capacity("8MiB"))  # a card it is large for
    assert big.levers_matter and "2 chunks of 32 instead of one batch of 64" in "\n".join(memory_lines(big))
    tiny = _record({"forward": [176 * KiB, 0, 0, 0, 0, 1 * KiB]}, batch=64)  # saves 0.3%: never offered
    assert not [lever for lever in build_memory(_raw(tiny), warmup=0).levers if "chunks" in lever.what]


def test_waste_findings_on_code_the_run_never_reached_are_not_said_to_raise_the_peak():
    from memlint.dynamic.report import VerifiedFinding
    from memlint.findings import Finding

    memory = build_memory(_raw(_record({"forward": [3 * GiB, GiB, 0, 0, 0, 2 * GiB]}, batch=32)), warmup=0)
    ran = Finding("train.py", 20, 9, 20, 20, "ML207", "eval-outputs-on-gpu", "warning", "outputs kept on the GPU")
    never = Finding("train.py", 40, 9, 40, 20, "ML201", "grad-enabled-inference", "warning", "eval with grad")
    text = "\n".join(memory_lines(memory, [VerifiedFinding(ran, False), VerifiedFinding(never, False, reached=False)]))
    assert "static findings that raise the peak: ML207 (train.py:20)\n" in text + "\n"
    assert "static findings on code this run never reached (not measured): ML201 (train.py:40)" in text


def test_a_time_first_model_reads_its_batch_from_the_second_dimension():
    class WordModel(nn.Module):  # as PyTorch's word language model: inputs are (sequence, batch)
        def __init__(self) -> None:
            super().__init__()
            self.embed, self.rnn, self.out = nn.Embedding(100, 16), nn.LSTM(16, 16), nn.Linear(16, 100)

        def forward(self, tokens, hidden):
            output, hidden = self.rnn(self.embed(tokens), hidden)
            return self.out(output), hidden

    model = WordModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with measure_peak() as measured:
        for _ in range(2):
            hidden = (torch.zeros(1, 20, 16), torch.zeros(1, 20, 16))
            logits, _ = model(torch.randint(0, 100, (35, 20)), hidden)
            optimizer.zero_grad()
            logits.float().mean().backward()
            optimizer.step()
    assert measured.memory.batch["size"] == 20  # not the sequence length, 35
    assert any("micro-batches of 10 instead of one of 20" in lever.what for lever in measured.memory.levers)
