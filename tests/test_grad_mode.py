"""Every rule reads the grad mode of a region from one fact (issue 16): a no-grad decorator holds
inside any ``with`` block, a method, or a function only called under no-grad. The research-code
shapes below were reported as false positives; without the no-grad they are real findings."""

from __future__ import annotations

import textwrap

import pytest

from memlint.catalogue import default_codes
from memlint.static.source_check import check_source

# Rules whose findings exist only with autograd on.
GRAD_DEPENDENT = {"ML101", "ML102", "ML201"}  # ML207 (outputs kept on the GPU) holds with grad off too

# An evaluation body that leaks (ML101: every batch's graph kept in a list and a sum) and
# wastes (ML201: eval mode with grad on) when grad is on.
BODY = """
model.eval()
losses, preds, total = [], [], 0
for X, Y in val_loader:
    {region}
        logits, loss = model(X.cuda(), Y.cuda())
    losses.append(loss)
    preds.append(logits)
    total += loss
model.train()
print(sum(losses) / len(losses), total)
return preds
"""

REGIONS = [
    "with ctx:",  # autocast or nullcontext, chosen at import time (nanoGPT)
    "with torch.cuda.amp.autocast():",
    "with torch.autocast(device_type='cuda', dtype=torch.bfloat16):",
    "with Timer('eval'):",
    "with open(log_path, 'a') as log:",
]

HEADER = """
import torch
from contextlib import nullcontext

ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
model = GPT(config)
"""


def findings(source: str) -> set[str]:
    return {f.code for f in check_source(textwrap.dedent(source), "train.py", default_codes())}


def function(decorator: str, region: str, name: str = "estimate_loss") -> str:
    body = textwrap.indent(textwrap.dedent(BODY).format(region=region).strip("\n"), "    ")
    return f"{decorator}\ndef {name}(val_loader):\n{body}\n"


@pytest.mark.parametrize("region", REGIONS)
def test_without_no_grad_the_shape_is_reported(region):
    found = findings(HEADER + function("", region))
    assert {"ML101", "ML201"} <= found, found  # the controls: these tests can fail


@pytest.mark.parametrize("region", REGIONS)
@pytest.mark.parametrize("decorator", ["@torch.no_grad()", "@torch.no_grad", "@torch.inference_mode()"])
def test_a_no_grad_decorator_holds_in_any_with_block(decorator, region):
    assert not findings(HEADER + function(decorator, region)) & GRAD_DEPENDENT


@pytest.mark.parametrize("region", REGIONS[:2])
def test_decorated_methods(region):
    method = textwrap.indent(function("@torch.no_grad()", region, "evaluate"), "    ")
    assert not findings(HEADER + "class Trainer:\n" + method) & GRAD_DEPENDENT


def test_a_nested_function_called_only_under_no_grad():
    nested = textwrap.indent(function("", REGIONS[0], "run"), "    ")
    source = HEADER + "@torch.no_grad()\ndef evaluate(val_loader):\n" + nested + "    return run(val_loader)\n"
    assert not findings(source) & GRAD_DEPENDENT


def test_a_set_grad_enabled_statement():
    body = function("", REGIONS[0]).replace("    model.eval()", "    torch.set_grad_enabled(False)\n    model.eval()")
    assert not findings(HEADER + body) & GRAD_DEPENDENT


@pytest.mark.parametrize("body, plain", [
    # computed under no_grad, returned after the block (LLMs-from-scratch's evaluate_model)
    ("model.eval()\n    with torch.no_grad():\n        a = calc(model, x)\n        b = calc(model, y)\n"
     "    model.train()\n    return a, b", True),
    ("with torch.no_grad():\n        return calc(model, x)", True),
    # one of the names is also assigned with grad on
    ("with torch.no_grad():\n        a = calc(model, x)\n    a = a + model(x)\n    return a", False),
    # grad only maybe off: unknown, not plain
    ("with torch.set_grad_enabled(train):\n        a = calc(model, x)\n    return a", False),
    ("a = calc(model, x)\n    return a", False),
    ("with torch.no_grad():\n        a = calc(model, x)\n    return a, model(x)", False),
])
def test_functions_returning_values_computed_without_grad_are_known_before_the_walk(body, plain):
    import libcst as cst

    from memlint.static.engine import FileChecker

    source = f"import torch\n\ndef train():\n    history.append(evaluate(model, x, y))\n\ndef evaluate(model, x, y, train=False):\n    {body}\n"
    checker = FileChecker("t.py", source, [])
    checker.run(cst.parse_module(source))
    assert ("evaluate" in checker.facts.plain_names) is plain


def test_names_bound_only_without_a_graph_cut_the_derivation_but_filled_containers_do_not():
    # cleanrl's LSTM state: computed under no_grad (and first as zeros), fed into the update's
    # forward; the observation that went into it is no part of the backpropagated graph
    rollout = """
import torch
def train(agent, envs, optimizer, num_steps, history):
    next_obs = envs.reset()
    state = (torch.zeros(1, 4), torch.zeros(1, 4))
    for step in range(num_steps):
        with torch.no_grad():
            action, state = agent.act(next_obs, state)
        next_obs = envs.step(action)
        history.append(next_obs)
    loss = agent.loss(state)
    loss.backward()
    optimizer.step()
"""
    assert "ML101" not in findings(rollout)
    # losses kept to be backpropagated one by one later: the list is the backpropagated value
    stored = """
import torch
import torch.nn.functional as F
def sync(model, batches, accelerator):
    losses = []
    for x, y in batches:
        losses.append(F.mse_loss(model(x), y))
    for i in range(len(losses)):
        loss = losses[i]
        accelerator.backward(loss)
"""
    assert "ML101" not in findings(stored)


def test_a_configuration_namespace_is_no_path_for_a_graph():
    # cleanrl's PPO: the loss reads args.ent_coef; global_step counts args.num_envs
    source = """
import torch
args = parse_args()
agent = Agent()
optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate)
global_step = 0
for iteration in range(args.num_iterations):
    for step in range(args.num_steps):
        global_step += args.num_envs
    pg_loss, entropy_loss, v_loss = agent.losses(obs)
    loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    assert "ML101" not in findings(source)
    # the same shape with a value of the update itself is still reported
    leak = source.replace("    optimizer.step()\n", "    optimizer.step()\n    history.append(pg_loss)\n")
    assert "ML101" in findings(leak)


def test_a_name_bound_now_without_a_graph_is_not_the_same_name_backpropagated_elsewhere():
    # the Hugging Face course's evaluation loop after training, at module level: `loss` is
    # backpropagated in the training loop, and bound again to a no-grad output for the eval
    source = """
import torch
from accelerate import Accelerator
accelerator = Accelerator()
model, optimizer, train_dataloader, eval_dataloader = accelerator.prepare(model, optimizer, train_dataloader, eval_dataloader)
for epoch in range(num_train_epochs):
    model.train()
    for batch in train_dataloader:
        outputs = model(**batch)
        loss = outputs.loss
        accelerator.backward(loss)
        optimizer.step()
    model.eval()
    losses = []
    for step, batch in enumerate(eval_dataloader):
        with torch.no_grad():
            outputs = model(**batch)
        loss = outputs.loss
        losses.append(accelerator.gather(loss.repeat(batch_size)))
"""
    assert "ML101" not in findings(source)
    assert "ML101" in findings(source.replace("        with torch.no_grad():\n            outputs = model(**batch)",
                                              "        outputs = model(**batch)"))
