"""Step boundaries (memlint.dynamic.boundaries): which events end a step, and who wins.

Events are fed to StepBoundaries directly, as the hooks would, so these tests need no script run.
"""

from __future__ import annotations

import pytest

from memlint.dynamic.boundaries import StepBoundaries


class Session:
    """What the runtime does with the boundaries' callbacks: count steps, start again on restart."""

    def __init__(self, forced=None) -> None:
        self.steps = 0
        self.restarts = 0
        self.boundaries = StepBoundaries(self.step, self.restart, forced)

    def step(self) -> None:
        self.steps += 1

    def restart(self) -> None:
        if self.steps:
            self.steps = 0
            self.restarts += 1

    # what the hooks report
    def batch(self, loader=1) -> None:
        self.boundaries._batch_starting(loader, None)
        self.boundaries._batch_started(loader)

    def loader_exhausted(self, loader=1) -> None:
        self.boundaries._batch_starting(loader, None)

    def call(self, module, inner=()) -> None:
        self.boundaries._module_entering(module, ())
        for sub in inner:
            self.call(sub)
        self.boundaries._module_left(module, (), None)

    def optimizer_step(self, optimizer, closure_calls=()) -> None:
        """``optimizer.step()``; LBFGS's ``step(closure)`` calls the closure, and so the model, inside."""
        self.boundaries._optimizer_starting(optimizer, (), {})
        for module in closure_calls:
            self.call(module)
        self.boundaries._optimizer_stepped(optimizer, (), {})


class Optimizer:
    pass


class Module:
    pass


def test_a_batch_ends_when_the_next_is_drawn_and_an_epoch_adds_no_empty_step():
    s = Session()
    for _ in range(2):  # two epochs of three batches
        for _ in range(3):
            s.batch()
        s.loader_exhausted()
    assert (s.boundaries.kind, s.steps) == ("dataloader", 6)


def test_the_optimizer_takes_over_from_batches_drawn_before_its_first_step():
    s, optimizer = Session(), Optimizer()
    for _ in range(4):
        s.batch()
        s.call(Module())
        s.optimizer_step(optimizer)
    assert (s.boundaries.kind, s.steps, s.restarts) == ("optimizer", 4, 0)


def test_a_higher_kind_appearing_late_restarts_the_count():
    s, optimizer = Session(), Optimizer()
    for _ in range(3):  # validation batches before training (Lightning's sanity check)
        s.batch(loader="val")
    s.batch(loader="train")
    s.optimizer_step(optimizer)
    s.optimizer_step(optimizer)
    assert (s.boundaries.kind, s.steps, s.restarts) == ("optimizer", 2, 1)


def test_two_optimizers_that_step_in_turn_make_one_step_per_round():
    s, generator, discriminator = Session(), Optimizer(), Optimizer()
    for _ in range(3):
        s.optimizer_step(discriminator)
        s.optimizer_step(generator)
    assert (s.steps, s.boundaries.owner_label) == (3, "the 2 optimizers")


def test_one_optimizer_per_layer_trained_in_turn_counts_every_layer():
    s, layers = Session(), [Optimizer(), Optimizer(), Optimizer()]
    for optimizer in layers:  # 4 steps each: the first step of a new layer's optimizer joins a round
        for _ in range(4):
            s.optimizer_step(optimizer)
    assert (s.steps, s.restarts, s.boundaries.owner_label) == (10, 0, "")


def test_module_calls_inside_an_optimizer_step_are_part_of_it():
    s, optimizer, model = Session(), Optimizer(), Module()
    s.call(model)  # before the first step, as the closure's first call would be
    for _ in range(5):
        s.optimizer_step(optimizer, closure_calls=[model] * 20)  # LBFGS: max_iter closure calls
    assert (s.boundaries.kind, s.steps) == ("optimizer", 5)


def test_the_first_step_of_an_optimizer_ends_module_calls_as_steps_when_it_begins():
    s, optimizer, model = Session(), Optimizer(), Module()
    for _ in range(30):  # an inference warm-up that calls the model, before training starts
        s.call(model)
    s.boundaries._optimizer_starting(optimizer, (), {})
    assert (s.boundaries.kind, s.steps, s.restarts) == ("optimizer", 0, 1)


def test_memlint_step_outranks_the_optimizer():
    s, optimizer = Session(), Optimizer()
    s.optimizer_step(optimizer)
    for _ in range(3):
        s.optimizer_step(optimizer)
        s.boundaries.marker()
    assert (s.boundaries.kind, s.steps) == ("marker", 3)


def test_outermost_module_calls_step_and_inner_calls_do_not():
    s, model, layer = Session(), Module(), Module()
    for _ in range(4):
        s.call(model, inner=[layer, layer])
    assert (s.boundaries.kind, s.steps, s.boundaries.owner_label) == ("module_call", 3, "Module")


def test_the_most_called_module_defines_the_step():
    s, setup, model, head = Session(), Module(), Module(), Module()
    s.call(setup)  # called once before the loop
    for _ in range(5):
        s.call(model)
        s.call(head)  # as often as model: the first of the two keeps the step
    assert s.steps == 3  # model overtook setup at its second call; counting restarted then


def test_the_busiest_loader_defines_the_step():
    s = Session()
    for _ in range(2):
        s.batch(loader="stats")
    s.loader_exhausted(loader="stats")
    for _ in range(6):
        s.batch(loader="train")
    assert s.steps == 3  # train overtook stats at its third batch (the call that ends an epoch is no batch)


@pytest.mark.parametrize("forced, expected", [("dataloader", ("dataloader", 2)), ("module_call", ("module_call", 2)),
                                              ("optimizer", ("optimizer", 3))])
def test_step_on_forces_one_kind(forced, expected):
    s, optimizer, model = Session(forced), Optimizer(), Module()
    for _ in range(3):
        s.batch()
        s.call(model)
        s.optimizer_step(optimizer)
    s.boundaries.marker()
    assert (s.boundaries.kind, s.steps) == expected


def test_an_optimizer_stepped_inside_another_ones_step_is_part_of_it():
    s, outer, inner = Session(), Optimizer(), Optimizer()
    for _ in range(3):  # a wrapper (Lookahead, say) steps the optimizer it wraps inside its own step
        s.boundaries._optimizer_starting(outer, (), {})
        s.optimizer_step(inner)
        s.boundaries._optimizer_stepped(outer, (), {})
    assert (s.steps, s.boundaries.owner_label) == (3, "")


def test_a_step_that_raised_does_not_leave_the_next_ones_inside_it():
    s, optimizer = Session(), Optimizer()
    s.boundaries._optimizer_starting(optimizer, (), {})  # raised: out of memory, caught by the loop
    for _ in range(3):
        s.optimizer_step(optimizer)
    assert s.steps == 3
