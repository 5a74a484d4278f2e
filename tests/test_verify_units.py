"""Fast unit tests of verify's pieces: slope, confirmation, holder lines, plot, progress, fixture."""

from __future__ import annotations

import io
import textwrap

import pytest

from memlint.dynamic.bindings import binding, binding_line
from memlint.dynamic.confirm import mark_confirmed
from memlint.dynamic.report import Holder, Sample, Site, VerifyReport
from memlint.dynamic.verdict import rising_share, steps_until_exhausted, theil_sen, trend
from memlint.findings import Finding


def test_theil_sen_ignores_an_outlier():
    values = [10 * i for i in range(20)]
    values[7] = 10_000
    assert theil_sen(values) == pytest.approx(10)


def test_noise_does_not_rise_and_steady_growth_does():
    noise = [5, 1, 4, 2, 5, 1, 3, 2, 4, 1]
    assert rising_share(noise) < 0.75 and not trend(noise, 0.1).grows
    assert rising_share(list(range(10))) == 1.0 and trend([8 * i for i in range(10)], 1).grows
    assert not trend([4 * i for i in range(10)], 1024).grows  # one scalar per step


def test_steps_until_exhausted():
    assert steps_until_exhausted(1024, 10 * 1024) == 11
    assert steps_until_exhausted(0, 10) is None and steps_until_exhausted(5, None) is None


def _finding(path, line, message="'total_loss' accumulates 'loss' with its autograd graph"):
    return Finding(path, line, 9, line, 20, "ML101", "graph-accumulation", "error", message)


def test_findings_confirmed_by_site_line_holder_line_or_holder_name(tmp_path):
    path = str(tmp_path / "train.py")
    site = Site(path, 12, "train", 4096.0, 1.0, Holder("total_loss", "train", path, 30))
    on_site, on_holder = _finding(path, 12, "other"), _finding(path, 30, "other")
    by_name, elsewhere = _finding(path, 99), _finding(str(tmp_path / "other.py"), 12)
    unrelated = _finding(path, 50, "'metrics' keeps a graph")
    marked = mark_confirmed([on_site, on_holder, by_name, elsewhere, unrelated], [site], growth=True)
    assert [m.confirmed for m in marked] == [True, True, True, False, False]
    assert marked[0].to_json()["confirmed"] is True and marked[0].to_json()["code"] == "ML101"
    assert not any(m.confirmed for m in mark_confirmed([on_site], [site], growth=False))


def test_a_finding_at_the_call_is_confirmed_by_growth_inside_the_method(tmp_path):
    path = str(tmp_path / "train.py")
    site = Site(path, 67, "update", 8.0, 1.0, Holder("losses.avg", "train", path, 61))
    call = _finding(path, 29, "'losses.update(loss, n)' passes 'loss' with its autograd graph to "
                              "AverageMeter.update(), which accumulates it into 'self.sum'")
    other = _finding(path, 40, "'history' accumulates 'loss' on every call of update_stats()")
    assert [m.confirmed for m in mark_confirmed([call, other], [site], growth=True)] == [True, False]


def test_binding_line_prefers_the_line_that_grows(tmp_path):
    source = tmp_path / "train.py"
    source.write_text(textwrap.dedent("""\
        def train(model, batches):
            total = 0.0
            outs = []
            running = 0
            for x in batches:
                loss = model(x)
                total += loss
                outs.append(loss)
                running = 0.9 * running + loss
            return total

        class Memo:
            def forward(self, y):
                self.cache[self.calls] = y
    """))
    path = str(source)
    assert binding_line(path, "train", 1, "total") == (7, "train")
    assert binding_line(path, "train", 1, "outs") == (8, "train")
    assert binding_line(path, "train", 1, "running") == (9, "train")
    assert binding_line(path, "main", 40, "model.block.cache") == (14, "forward")
    assert binding_line(path, "train", 1, "nowhere") is None


def _report(verdict="growth"):
    samples = [Sample(i, 1000 + 300 * i, 10 + 2 * i, 10**8) for i in range(1, 9)]
    return VerifyReport("train.py", "cpu", 6, 2, verdict, "because", 300.0, 2.0, 0.0, samples)


def test_svg_plot_draws_samples_warmup_and_fit():
    from memlint.dynamic.plot import render_html, render_svg

    svg = render_svg(_report())
    assert svg.count("<polyline") == 2 and svg.count("<title>fit: ") == 2 and "warmup" in svg
    assert "<svg" in render_html(_report()) and "because" in render_html(_report())


def test_progress_bar_draws_on_one_line():
    from memlint.dynamic.progress import ProgressBar

    stream = io.StringIO()
    bar = ProgressBar(10, 2, stream)
    bar.update(1)
    bar.update(5)
    bar.close()
    text = stream.getvalue()
    assert "step 1/10 warmup" in text and "step 5/10 measuring" in text and "\n" not in text


def test_pytest_fixture_passes_a_clean_step(memlint_no_growth):
    import torch

    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train_step():
        loss = model(torch.randn(8, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    assert memlint_no_growth(train_step, steps=6, warmup=2).verdict == "stable"


def test_in_process_verify_finds_the_holder_of_a_growing_graph():
    import torch

    from memlint.dynamic.inprocess import verify_function

    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    history = []

    def train_step():
        loss = model(torch.randn(8, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(loss)

    report = verify_function(train_step, steps=6, warmup=2)
    assert report.verdict == "growth"
    graph_site = [s for s in report.sites if s.is_graph][0]
    assert graph_site.holder.name == "history" and graph_site.function == "train_step"


def test_a_tensor_regrown_by_cat_every_step_is_attributed_to_its_line():
    import torch

    from memlint.dynamic.inprocess import verify_function

    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    curve = torch.zeros(0)

    def train_step():
        nonlocal curve
        loss = model(torch.randn(8, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        curve = torch.cat([curve, loss.detach().reshape(1).expand(512)])  # the line that grows

    report = verify_function(train_step, steps=6, warmup=2)
    assert report.verdict == "growth"
    site = report.sites[0]
    assert site.bytes_per_step == 2048 and site.holder.name == "curve"
    assert site.line == train_step.__code__.co_firstlineno + 6


def test_verify_text_shows_a_static_finding_as_memlint_check_does():
    from memlint.dynamic.report import VerifiedFinding
    from memlint.report.verify_text import render_text

    finding = Finding("train.py", 2, 5, 2, 22, "ML203", "load-without-map-location", "warning",
                      "torch.load() without map_location", help="pass map_location='cpu'")
    report = _report("stable")
    report.findings = [VerifiedFinding(finding, False)]
    text = render_text(report, sources={"train.py": "import torch\nstate = torch.load(path)\n"})
    block = text[text.index("train.py:2:5: ML203 torch.load() without map_location\n"):]
    assert block.splitlines()[1:6] == ["  |", "2 | state = torch.load(path)", "  |     ^^^^^^^^^^^^^^^^^ warning",
                                       "  |", "  = help: pass map_location='cpu'"]
    assert "[confirmed by this run]" not in text and text.endswith("Why it matters: memlint rule ML203\n")



def test_a_storage_made_on_another_thread_is_placed_at_the_scripts_waiting_line():
    # On CUDA, backward runs on autograd's device thread, whose stack holds no user code
    # (and is too shallow for the usual frame skip): the gradients it makes belong to the
    # line where the script waits, `loss.backward()`, as they do on CPU.
    import inspect
    from concurrent.futures import ThreadPoolExecutor

    from memlint.dynamic.storages import StorageTracker

    tracker = StorageTracker("cpu", is_user=lambda filename: filename == __file__)
    with ThreadPoolExecutor(1) as pool:
        waiting_line = inspect.currentframe().f_lineno + 1
        site = pool.submit(tracker._site).result()  # the script waits here, the worker works
    assert site == (__file__, waiting_line, "test_a_storage_made_on_another_thread_is_placed_at_the_scripts_waiting_line")


def test_step_on_is_checked_on_the_command_line_and_in_the_config():
    from memlint.config import ConfigError
    from memlint.dynamic.options import build_options

    assert build_options({"step-on": "dataloader"}, script="train.py").step_on == "dataloader"
    assert build_options({"step-on": "dataloader"}, script="train.py", step_on="module").step_on == "module"
    with pytest.raises(ConfigError, match="--step-on must be one of optimizer, dataloader, module, marker"):
        build_options(None, script="train.py", step_on="epoch")


def test_a_finding_is_confirmed_by_growth_held_by_what_its_line_grows(tmp_path):
    from memlint.report.verify_text import render_text, where

    source = tmp_path / "train.py"
    source.write_text(textwrap.dedent("""\
        class KeepLogits(Trainer):
            seen = []

            def compute_loss(self, model, inputs):
                out = model(**inputs)
                self.seen.append(out.logits)
                self.logged.append(out.loss.item())
                return out.loss
    """))
    path = str(source)
    # allocated inside the model's forward (the innermost line of user code is the call), held by the class list
    holder = Holder("KeepLogits.seen", "compute_loss", path, None, "class_attribute", "list", 3, None)
    site = Site(path, 5, "compute_loss", 64.0, 1.0, holder)
    append, logged = _finding(path, 6, "'self.seen' accumulates 'out.logits'"), _finding(path, 7, "other")
    marked = mark_confirmed([append, logged], [site], growth=True)
    assert [m.confirmed for m in marked] == [True, False] and marked[0].sites == [site]
    report = VerifyReport(path, "cpu", 6, 2, "growth", "because", 64.0, 0.0, 0.0, sites=[site], findings=marked,
                          step_boundary="optimizer")
    lines = render_text(report).splitlines()
    assert lines[0] == "growth: because" and lines[1].endswith("(cpu, 2 warmup + 6 measured steps; a step is one "
                                                               "optimizer step)")
    at = next(i for i, line in enumerate(lines) if line.endswith("train.py:5:9: +64 B/step in compute_loss() "
                                                                 "(1 allocation/step), held by 'KeepLogits.seen' "
                                                                 "(list, 3 items)"))
    # no line of the holder is known: only the allocation is drawn, then what it confirms
    assert lines[at + 1:at + 6] == ["  |", "5 |         out = model(**inputs)",
                                    "  |         ^^^^^^^^^^^^^^^^^^^^^ allocated here", "  |",
                                    f"  = confirms ML101 at {where(path, 6)} (graph-accumulation)"]


def test_holder_text_names_closures_and_graphs():
    from memlint.report.verify_text import holder_text as _holder_text

    closure = Holder("outputs", "keep", "train.py", 27, "closure", "list", 9, "appended")
    graph = Holder("scores", "main", "train.py", 29, "graph", "list", 10, "appended")
    assert _holder_text(closure) == "'outputs' in a closure cell of keep() (list, 9 items, appended at train.py:27)"
    assert _holder_text(graph) == "the autograd graph of 'scores' (appended at train.py:29)"


def test_a_holder_line_is_one_that_can_store_what_grows(tmp_path):
    source = tmp_path / "train.py"
    source.write_text(textwrap.dedent("""\
        def train(model, optimizer, batches, metrics):
            state = {}
            cache = []
            outputs = []
            for x in batches:
                out = model(x)
                outputs.extend(out.unbind(0))
                metrics['acc'] += 1
                metrics['loss'].append(out.sum())
                state["func_evals"] += 1
                model.cache = cache
    """))
    path = str(source)
    assert binding(path, "train", 1, "outputs") == (7, "train", "extended")
    assert binding(path, "train", 1, "metrics['loss']") == (9, "train", "appended")  # not the 'acc' line
    assert binding(path, "train", 1, "optimizer.state[<Parameter 51×1>]['old_dirs']") is None
    assert binding(path, "train", 1, "model.cache") == (11, "train", "assigned")  # not `cache = []`
    assert binding(path, "train", 1, "cache") is None  # `cache = []` stores nothing that grows


PHASED = textwrap.dedent("""\
    import torch


    def train(model, loader, optimizer):
        model.train()
        for x, y in loader:
            loss = model(x).sub(y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


    def test(model, loader):
        model.eval()
        return sum(model(x).sum().item() for x, _ in loader)


    def main(model, loader, optimizer, epochs):
        for epoch in range(epochs):
            log(epoch)
            train(model, loader, optimizer)
            test(model, loader)
        torch.save(model.state_dict(), "model.pt")


    def one_function(model, loader, optimizer, epochs):
        for epoch in range(epochs):
            for x, y in loader:
                step(model, x, y, optimizer)
            evaluate(model)
        torch.save(model.state_dict(), "model.pt")


    def step(model, x, y, optimizer):
        model(x).sum().backward()
        optimizer.step()


    def evaluate(model):
        return model


    def log(epoch):
        print(epoch)
""")


def _frame(path, function, text, since_first_step=True):
    source = PHASED.splitlines()
    line = next(i for i, code in enumerate(source, 1) if text in code)
    first = 1 if function == "<module>" else next(i for i, code in enumerate(source, 1)
                                                 if code.startswith(f"def {function}("))
    return {"path": path, "function": function, "first_line": first, "line": line,
            "since_first_step": since_first_step}


def test_what_runs_after_the_measured_loop_is_named_as_never_reached(tmp_path):
    from memlint.dynamic.phases import note, unreached

    path = tmp_path / "train.py"
    path.write_text(PHASED)
    path = str(path)
    stack = [_frame(path, "main", "        train(model, loader, optimizer)"), _frame(path, "train", "optimizer.step()")]
    found = unreached(stack, loaders_ended=0)
    assert [name for name, _, _ in found.calls] == ["test()", "torch.save()"]  # not log(), before the call
    assert found.covers(path, PHASED.splitlines().index("def test(model, loader):") + 2)  # test()'s body
    assert note(found, 23, training=True) == ("the 23 steps ran training only; `test()` and `torch.save()` were "
                                              "never reached — run with more steps or --step-on")
    # the frame of train() is a new one: an epoch ended since the first step, test() ran; the save did not
    stack[1]["since_first_step"] = False
    assert [name for name, _, _ in unreached(stack, loaders_ended=1).calls] == ["torch.save()"]


def test_after_an_inner_loop_only_a_loader_that_never_ended_proves_nothing_ran(tmp_path):
    from memlint.dynamic.phases import unreached

    path = tmp_path / "train.py"
    path.write_text(PHASED)
    path = str(path)
    stack = [_frame(path, "one_function", "            step(model, x, y, optimizer)"),
             _frame(path, "step", "optimizer.step()", since_first_step=False)]  # a fresh call every step
    assert [name for name, _, _ in unreached(stack, loaders_ended=0).calls] == ["evaluate()", "torch.save()"]
    assert [name for name, _, _ in unreached(stack, loaders_ended=2).calls] == ["torch.save()"]
    assert [name for name, _, _ in unreached(stack, loaders_ended=None).calls] == ["torch.save()"]
    # a caller blocked in one call since the first step ran nothing after it, whatever the loaders did
    blocked = unreached(stack[:1] + [dict(stack[1], since_first_step=True)], loaders_ended=2)
    assert [name for name, _, _ in blocked.calls] == ["evaluate()", "torch.save()"]


def test_a_child_that_cannot_start_leaves_a_result_naming_the_cause(tmp_path, monkeypatch):
    import json

    import memlint.dynamic.runtime as runtime
    from memlint.dynamic import child
    from memlint.dynamic.assess import assess
    from memlint.dynamic.launcher import ChildOutcome
    from memlint.dynamic.options import build_options

    def broken(config, rank):
        raise ImportError("libtorch_cpu.so: cannot open shared object file")  # torch half-installed

    config = tmp_path / "config.json"
    config.write_text(json.dumps({"result_dir": str(tmp_path), "script": "train.py"}))
    monkeypatch.setenv(child.CONFIG_ENV, str(config))
    monkeypatch.setattr(runtime, "start_session", broken)
    child.main()
    result = json.loads((tmp_path / "result-0.json").read_text())
    [rank] = assess(ChildOutcome(1, results={0: result}), build_options(script="train.py", steps=8, warmup=2))
    assert rank.verdict == "inconclusive"
    assert rank.reason == ("memlint could not start the script before the first of 10 steps (2 warmup + 8 measured): "
                           "ImportError: libtorch_cpu.so: cannot open shared object file")


def test_a_line_feeds_the_holder_line_that_stores_what_it_bound(tmp_path):
    from memlint.dynamic.bindings import feeds

    source = tmp_path / "serve.py"
    source.write_text(textwrap.dedent("""\
        class Server:
            def handle(self, request_id, tokens):
                scores = self.model(tokens)
                self.responses[request_id] = scores
                other = self.model(tokens)
                self.log.append(len(tokens))
                return scores.tolist()
    """))
    path = str(source)
    assert feeds(path, 3, 4)  # scores is what the holder's line stores
    assert not feeds(path, 5, 4)  # another value
    assert not feeds(path, 3, 6)  # the holder's line reads something else


def test_a_holder_without_a_line_is_fed_by_nothing(tmp_path):
    from memlint.dynamic.bindings import feeds

    source = tmp_path / "serve.py"
    source.write_text("scores = model(tokens)\nkept.append(scores)\n")
    assert not feeds(str(source), 1, None)
