"""Leak rules (ML102-ML106): what the VALID/INVALID lists cannot say."""

from __future__ import annotations

import pytest

from memlint.catalogue import rule_info
from memlint.static.rules import all_rules
from memlint.static.source_check import check_source
from memlint.static.triggers import codes_that_could_match


def _check(source: str, *codes: str):
    return check_source(source, "example.py", codes)


HOOKS = """
import torch
class Recorder:
    def __init__(self, model):
        self.raw = []
        self.detached = []
        model.register_forward_hook(self.keep)

    def keep(self, module, inputs, output):
        self.raw.append(output)
        self.detached.append(output.detach())
"""


def test_hook_severity_depends_on_detach():
    findings = {f.line: f.severity for f in _check(HOOKS, "ML104")}
    assert findings == {10: "error", 11: "warning"}


def test_hook_messages_name_the_hook_the_argument_and_the_container():
    by_line = {f.line: f for f in _check(HOOKS, "ML104")}
    assert by_line[10].message == "forward hook keeps every 'output' and its graph in 'self.raw', which is never emptied"
    assert "output.detach()" in by_line[10].help
    assert "detached 'output'" in by_line[11].message and "clear 'self.detached'" in by_line[11].help
    grads = _check("import torch\ngrads = []\ndef attach(p):\n    p.register_hook(lambda g: grads.append(g))\n",
                   "ML104")
    assert [f.message for f in grads] == ["tensor hook keeps every step's 'g' in 'grads', which is never emptied"]


def test_oom_retry_message_names_the_call_short():
    source = """
import torch
def train_step(model, batch, optimizer, scheduler_with_a_long_name):
    try:
        model(batch).sum().backward()
    except torch.cuda.OutOfMemoryError:
        return train_step(model, batch[: len(batch) // 2], optimizer, scheduler_with_a_long_name)
"""
    [finding] = _check(source, "ML106")
    assert finding.message.startswith("'train_step(...)' recurses in the OOM handler")
    assert finding.help.startswith("set a flag")


def test_hook_registered_after_definition_in_another_class_method_and_module():
    source = """
import torch
def keep(module, inputs, output):
    store.append(output)

store = []

def attach(model):
    model.layer.register_forward_hook(keep)
"""
    assert [f.line for f in _check(source, "ML104")] == [4]


def test_unregistered_function_is_not_a_hook():
    source = """
import torch
store = []
def keep(module, inputs, output):
    store.append(output)

def attach(model):
    model.layer.register_forward_hook(print)
"""
    assert _check(source, "ML104") == []


def _examples(code: str):
    rule = next(r for r in all_rules() if r.code == code)
    yield from rule.VALID
    yield from (example.code for example in rule.INVALID)


@pytest.mark.parametrize("code", ["ML101", "ML102"])
def test_ml101_and_ml102_never_report_the_same_statement(code):
    for source in _examples(code):
        findings = _check(source, "ML101", "ML102")
        lines_101 = {f.line for f in findings if f.code == "ML101"}
        lines_102 = {f.line for f in findings if f.code == "ML102"}
        assert not lines_101 & lines_102, source


def test_retain_graph_message_names_the_carried_variable():
    source = """
import torch
def train(model, loader, opt, crit):
    state = None
    for x, y in loader:
        out, state = model(x, state)
        loss = crit(out, y)
        opt.zero_grad()
        loss.backward(retain_graph=True)
        opt.step()
"""
    findings = _check(source, "ML102", "ML103")
    assert {(f.line, f.code) for f in findings} == {(6, "ML102"), (9, "ML103")}
    ml103 = next(f for f in findings if f.code == "ML103")
    assert "'state'" in ml103.help and "ML102" in ml103.help


def test_detach_in_a_later_iteration_statement_or_nested_block_counts():
    source = """
import torch
def train(model, loader, opt, crit, tbptt=4):
    hidden = None
    for step, (x, y) in enumerate(loader):
        out, hidden = model(x, hidden)
        loss = crit(out, y)
        loss.backward()
        opt.step()
        if step % tbptt == 0:
            hidden = [h.detach() for h in hidden]
"""
    assert _check(source, "ML102") == []


def test_oom_handler_in_a_nested_function_is_not_rerun():
    source = """
import torch
def run(model, x):
    try:
        return model(x)
    except torch.cuda.OutOfMemoryError:
        def later():
            return model(x[: len(x) // 2])
        return later
"""
    assert _check(source, "ML106") == []


@pytest.mark.parametrize("code, text", [
    ("ML102", "import torch\nx = 1\n"),
    ("ML103", "import torch\nloss.backward()\n"),
    ("ML104", "import torch\nacts.append(o)\n"),
    ("ML105", "import torch\nloss.backward()\n"),
    ("ML106", "import torch\ntry:\n    f()\nexcept RuntimeError:\n    f()\n"),
])
def test_rules_skip_files_that_cannot_match(code, text):
    assert rule_info(code).triggers
    assert codes_that_could_match(text, [code]) == []


CACHES = """
import functools
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    @functools.lru_cache(maxsize=None)
    def unbounded(self, x):
        return self.proj(x)

    @functools.lru_cache(maxsize=2)
    def small(self, x):
        return self.proj(x)

    @functools.lru_cache()
    def plain(self, n):
        return torch.ones(n)

@functools.cache
def takes_a_model(model: nn.Module, n):
    with torch.no_grad():
        return model(torch.ones(n))
"""


def test_ml108_error_only_for_an_unbounded_or_large_cache_of_graphs():
    findings = {f.line: f.severity for f in _check(CACHES, "ML108")}
    assert findings == {10: "error", 14: "warning", 18: "warning", 22: "warning"}


def test_ml108_graph_cache_is_dropped_when_the_function_only_runs_under_no_grad():
    source = CACHES + """
def evaluate(encoder, x):
    with torch.no_grad():
        return encoder.unbounded(x)
"""
    assert 10 not in {f.line for f in _check(source, "ML108")}


def test_ml107_constructor_hooks_through_an_attribute_object_and_a_release_method():
    source = """
import torch
class Recorder:
    def __init__(self, layer):
        self.handles = [layer.register_forward_hook(self.keep)]
    def keep(self, module, inputs, output):
        self.out = output.detach()
    def release(self):
        for handle in self.handles:
            handle.remove()

class Explainer:
    def __init__(self, model, layer):
        self.model = model
        self.recorder = Recorder(layer)
    def close(self):
        self.recorder.release()

def explain(model, loader):
    for batch in loader:
        explainer = Explainer(model, model.layer4)
        model(batch)
        {release}
"""
    flagged = _check(source.format(release="pass"), "ML107")
    assert [(f.line, f.severity) for f in flagged] == [(21, "error")]
    assert "Explainer(...)" in flagged[0].message
    assert _check(source.format(release="explainer.close()"), "ML107") == []


def test_ml107_hooks_on_a_model_built_in_the_iteration_die_with_it():
    source = """
import torch
def trials(configs, build, hook, train):
    for config in configs:
        model = build(config)
        model.encoder.register_forward_hook(hook)
        for p in model.parameters():
            p.register_hook(lambda g: g.clamp(-1, 1))
        train(model)
"""
    assert _check(source, "ML107") == []


def test_ml109_keeps_a_trainer_built_with_the_model_but_not_its_scores():
    source = """
import torch
from torch import nn
def search(lrs, train_set, Trainer):
    trainers, scores = [], []
    for lr in lrs:
        model = nn.Linear(8, 2).cuda()
        trainer = Trainer(model=model, lr=lr)
        trainer.fit(train_set)
        scores.append(trainer.evaluate())
        trainers.append(trainer)
    return trainers, scores
"""
    assert [f.line for f in _check(source, "ML109")] == [11]


@pytest.mark.parametrize("code, text", [
    ("ML107", "import torch\nfor x in loader:\n    f(x)\n"),
    ("ML108", "import torch\nfrom functools import wraps\n"),
    ("ML109", "import torch\nmodels = make()\n"),
])
def test_new_leak_rules_skip_files_that_cannot_match(code, text):
    assert rule_info(code).triggers
    assert codes_that_could_match(text, [code]) == []


def test_only_the_loss_slot_of_a_log_dict_is_reported():
    source = """
import torch
def train(model, criterion, loader, optimizer):
    meters = {}
    for sample in loader:
        loss = criterion(model(sample["net_input"]), sample["target"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log = {"loss": loss, "sample_size": sample["target"].size(0), "nsentences": len(sample["id"])}
        meters["loss"] = meters.get("loss", 0) + log["loss"]
        meters["sample_size"] = meters.get("sample_size", 0) + log["sample_size"]
        meters["nsentences"] = meters.get("nsentences", 0) + log.get("nsentences", 0)
"""
    assert [f.line for f in _check(source, "ML101")] == [11]


@pytest.mark.parametrize("value, hint", [
    ("out.cpu()", "out.detach().cpu() to keep a tensor"),
    ("out.float().cpu()", "out.detach().float().cpu() to keep a tensor"),
    ("out", "out.detach() (and .cpu() for a long list) to keep a tensor"),
    ("out * 2", "(out * 2).detach() (and .cpu() for a long list)"),
])
def test_accumulation_hints_are_valid_for_the_expression_they_name(value, hint):
    source = f"""
import torch
def predict(model, loader):
    outs = []
    for x in loader:
        out = model(x)
        outs.append({value})
    return outs
"""
    (finding,) = _check(source, "ML101")
    assert hint in finding.help
    assert ".cpu().detach()" not in finding.help


def test_a_value_returned_by_a_method_below_is_reported_at_its_caller():
    source = """
import torch
class Trainer:
    def train(self, loader):
        tr_loss = 0.0
        for inputs in loader:
            tr_loss += self.training_step(inputs)
        return tr_loss
    def training_step(self, inputs):
        loss = self.compute_loss(inputs)
        loss.backward()
        return loss
"""
    (finding,) = _check(source, "ML101")
    assert finding.line == 7 and "'tr_loss' accumulates 'self.training_step(inputs)'" in finding.message


def test_a_decision_waiting_for_a_function_below_reports_each_finding_once():
    source = """
import torch

def train(model, loader, opt, crit, centre):
    hidden = None
    for x, y in loader:
        out, hidden = model(x, hidden)
        centre = 0.9 * centre + 0.1 * pooled(out)
        loss = crit(out, y) + centre.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


def pooled(o):
    return o.mean(0)
"""
    # line 7 (the state a model not seen hands back, backpropagated through every iteration
    # without retain_graph) is left: were it a graph, the second step would fail
    assert sorted(f.line for f in _check(source, "ML102")) == [8]


STREAMER = """
import torch
from torch import nn
class Streamer(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRUCell(80, 256)
        self.head = nn.Linear(256, 32)
        self.hidden = None

    def step(self, frame):
        self.hidden = self.rnn(frame, self.hidden)
        return self.head(self.hidden)

    def reset(self):
        self.hidden = None

def transcribe(frames):
    streamer = Streamer()
    tokens = []
    for frame in frames:
        {guard}tokens.append(streamer.step(frame).argmax(-1).item())
    return tokens
"""


@pytest.mark.parametrize("guard, lines", [
    ("", [12]),
    # a reset method of the class, called between utterances
    ("streamer.reset()\n        ", []),
])
def test_ml102_recurrent_state_kept_by_a_method_called_per_frame(guard, lines):
    source = STREAMER.format(guard=guard)
    if guard:  # reset() rebinds self.hidden: the class cuts the chain
        assert [f.line for f in _check(source, "ML102")] == []
    else:
        (finding,) = _check(source.replace("    def reset(self):\n        self.hidden = None\n", ""), "ML102")
        assert finding.line in lines and "step()" in finding.message and "no backward" in finding.message


def test_ml102_method_state_cut_by_the_caller_or_run_without_grad():
    source = STREAMER.format(guard="").replace("    def reset(self):\n        self.hidden = None\n", "")
    cut = source.replace("tokens.append(", "streamer.hidden = streamer.hidden.detach()\n        tokens.append(")
    assert _check(cut, "ML102") == []
    no_grad = source.replace("    for frame in frames:", "    for frame in frames:\n      with torch.no_grad():")
    no_grad = no_grad.replace("        tokens.append(", "          tokens.append(")
    assert _check(no_grad, "ML102") == []


def test_ml102_method_state_needs_a_call_in_view():
    source = STREAMER.format(guard="").replace("    def reset(self):\n        self.hidden = None\n", "")
    assert _check(source.replace("streamer = Streamer()", "streamer = make_streamer()"), "ML102") == []


ROLLOUT = """
import torch
from torch import nn
class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 64)
        self.pi = nn.Linear(64, 4)
    def forward(self, obs, hc):
        out, hc = self.lstm(obs, hc)
        return self.pi(out), hc

def collect(env, buffer, steps):
    policy = Policy()
    hc = None
    obs = env.reset()
    for t in range(steps):
{body}
        h, c = hc
        obs, reward, done = env.step(logits.argmax(-1))
        buffer.store(obs=obs, reward=reward, hidden=h, cell=c)
"""


@pytest.mark.parametrize("body, flagged", [
    ("        logits, hc = policy(obs, hc)", True),
    ("        with torch.no_grad():\n            logits, hc = policy(obs, hc)", False),
])
def test_ml102_lstm_state_stored_in_a_buffer_during_a_rollout(body, flagged):
    findings = _check(ROLLOUT.format(body=body), "ML102")
    assert bool(findings) is flagged
    if flagged:
        assert "stored in 'buffer'" in findings[0].message


def test_ml102_a_decoding_loop_keeping_outputs_in_a_local_list_is_not_a_store():
    source = """
import torch
def decode(decoder, enc_out, hidden, start, steps):
    outputs = []
    token = start
    for t in range(steps):
        out, hidden = decoder(token, hidden, enc_out)
        outputs.append(out)
        token = out.argmax(-1)
    return torch.stack(outputs)
"""
    assert _check(source, "ML102") == []


@pytest.mark.parametrize("built", [
    "build_model()", "build_model().to('cuda')", "make_net().cuda()", "Model(4, 2).cuda()", "nn.Linear(4, 2).cuda()",
])
def test_ml101_a_module_built_per_fold_is_not_a_tensor(built):
    source = f"""
import torch
from torch import nn
def folds(datasets, train, build_model, make_net, Model):
    trained = []
    for ds in datasets:
        model = {built}
        train(model, ds)
        trained.append(model)
    return trained
"""
    assert _check(source, "ML101") == []


def test_ml101_outputs_of_a_module_built_per_fold_still_carry_a_graph():
    source = """
import torch
def folds(datasets, build_model, crit):
    outputs = []
    for ds in datasets:
        model = build_model().cuda()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in ds:
            out = model(x)
            loss = crit(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            outputs.append(out)
    return outputs
"""
    assert [f.line for f in _check(source, "ML101")] == [14]


POLICY = """
import torch
from torch import nn
from torch.distributions import Categorical
class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.data = []
        self.fc = nn.Linear(4, 2)
        self.optimizer = torch.optim.Adam(self.parameters())

    def pi(self, x):
        return torch.softmax(self.fc(x), -1)

    def put_data(self, item):
        self.data.append(item)

    def train_net(self, gamma=0.98):
        R = 0
        self.optimizer.zero_grad()
        for r, prob in self.data[::-1]:
            R = r + gamma * R
            loss = -torch.log(prob) * R
            loss.backward()
        self.optimizer.step()
        {reset}

def main(env, episodes):
    pi = Policy()
    for n_epi in range(episodes):
        s = env.reset()
        done = False
        while not done:
            prob = pi.pi(torch.from_numpy(s).float())
            a = Categorical(prob).sample()
            s, r, done, info = env.step(a.item())
            pi.put_data((r, prob[a]))
        pi.train_net()
"""


def test_ml101_a_class_that_backpropagates_and_empties_what_it_stores_keeps_one_episode():
    assert _check(POLICY.format(reset="self.data = []"), "ML101") == []


def test_ml101_a_class_that_never_empties_what_it_stores_keeps_every_episode():
    (finding,) = _check(POLICY.format(reset="pass"), "ML101")
    assert finding.line == 37 and "'prob[a]'" in finding.message  # the part with the graph, not 'r'


def test_a_distribution_sample_carries_no_graph():
    source = """
import torch
from torch import nn
from torch.distributions import Normal
class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(3, 1)
    def forward(self, s):
        return self.mu(s), torch.ones(1)

def collect(env, steps):
    actor = Actor()
    rollout = []
    s = env.reset()
    for t in range(steps):
        mu, std = actor(torch.from_numpy(s).float())
        dist = Normal(mu, std)
        a = dist.{method}()
        s_prime, r, done, info = env.step([a.item()])
        rollout.append((s, a, r, s_prime))
        s = s_prime
    return rollout
"""
    assert _check(source.format(method="sample"), "ML101") == []
    assert [f.line for f in _check(source.format(method="rsample").replace("return rollout", "return 0"),
                                   "ML101")] == [21]


def test_ml101_a_beam_search_keeping_scores_in_a_local_is_bounded_by_the_call():
    source = """
import torch
def beam_search(decoder, encoder_out, start, k, max_len):
    scores, seqs, done_scores, done_seqs = torch.zeros(k, 1), start, [], []
    h = decoder.init_hidden(encoder_out)
    while True:
        logits, h = decoder(seqs[:, -1], h)
        seqs = torch.cat([seqs, logits.argmax(-1, keepdim=True)], 1)
        done_scores.append(logits.max())
        done_seqs.extend(seqs[:1].tolist())
        if len(done_seqs) >= k or seqs.size(1) > max_len:
            break
    best = done_scores.index(max(done_scores))
    return done_seqs[best]
"""
    assert _check(source, "ML101") == []
    stream = source.replace("def beam_search(", "def serve(").replace("    best = done_scores", "    best = done_scores")
    stream = stream.replace("        if len(done_seqs) >= k or seqs.size(1) > max_len:\n            break\n", "")
    stream = stream.replace("    best = done_scores.index(max(done_scores))\n    return done_seqs[best]\n", "")
    assert [f.line for f in _check(stream, "ML101")] == [9]


AGENT = """
import torch
from torch import nn
class Agent:
    def __init__(self, policy):
        self.policy = policy
        self.lstm = nn.LSTMCell(8, 8)
        self.state = None

    def act(self, obs):
        h, c = self.lstm(obs, self.state)
        self.state = (h, c)
        return self.policy(h).argmax(-1)

def play(env, policy, episodes):
    agent = Agent(policy)
    for episode in range(episodes):
        obs, done = env.reset(), False
        {reset}
        while not done:
            obs, reward, done = env.step(agent.act(obs).item())
"""


def test_ml102_an_lstm_state_tuple_kept_by_an_agent_across_episodes():
    (finding,) = _check(AGENT.format(reset="pass"), "ML102")
    assert finding.line == 12 and "'self.state'" in finding.message and "act()" in finding.message
    assert _check(AGENT.format(reset="agent.state = None"), "ML102") == []


def test_ml101_a_key_from_a_counter_the_method_wraps_with_modulo_cycles_through_a_few_slots():
    """``self.count = self.count % 2`` before each store: ``self.act`` holds two activations,
    overwritten on every forward (GPM's basic block). Without the wrap, a new key every call."""
    source = """
from collections import OrderedDict
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.act = OrderedDict()
        self.count = 0

    def forward(self, x):
        self.count = self.count % 2
        self.act['conv_{}'.format(self.count)] = x
        self.count += 1
        out = self.conv(x)
        self.count = self.count % 2
        self.act['conv_{}'.format(self.count)] = out
        self.count += 1
        return out
"""
    from memlint.static.source_check import check_source

    def lines(text):
        return [f.line for f in check_source(text, "model.py", ["ML101"]) if f.code == "ML101"]

    assert lines(source) == []
    assert lines(source.replace("        self.count = self.count % 2\n", "")) != []


# ----- ML119: a caught exception kept past its handler ---------------------------------------------
@pytest.mark.parametrize("store, line", [
    ("except RuntimeError as err: LAST = err", 5),  # a one-line handler at module level
    ("except RuntimeError as err:\n    if True:\n        STATE['error'] = (err, 1)", 7),  # a slot of a global, nested
    ("except RuntimeError as err:\n    registry.last.failures.append({'step': 3, 'error': err})", 6),
])
def test_ml119_an_exception_kept_in_a_global_or_an_object_is_reported(store, line):
    source = f"import torch\nSTATE = {{}}\ntry:\n    torch.ones(1)\n{store}\n"
    assert [(f.line, f.code) for f in _check(source, "ML119")] == [(line, "ML119")]


@pytest.mark.parametrize("store", [
    "except RuntimeError as err:\n    message = str(err)",  # at module level, but only its text
    "except RuntimeError as err:\n    def later():\n        global LAST\n        LAST = err",  # a nested def's own
    "except RuntimeError:\n    LAST = None",  # nothing caught by name
])
def test_ml119_what_keeps_no_frames_is_quiet(store):
    source = f"import torch\nSTATE = {{}}\ntry:\n    torch.ones(1)\n{store}\n"
    assert _check(source, "ML119") == []


def test_ml119_a_local_of_a_function_is_quiet_and_a_declared_global_is_reported():
    source = """import torch
LAST = None
def step(model, batch, keep):
    {declare}
    try:
        return model(batch)
    except RuntimeError as err:
        LAST = err
"""
    assert _check(source.format(declare="pass"), "ML119") == []
    assert [f.line for f in _check(source.format(declare="global LAST"), "ML119")] == [8]
