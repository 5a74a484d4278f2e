# Thread: https://github.com/TorchSim/torch-sim/pull/559
# Reported: relaxing molecular structures with L-BFGS and a conservative force field (forces via
#   torch.autograd.grad, positions.requires_grad=True) made memory_allocated grow linearly,
#   about +22.6 MB per swap, until OOM after ~10 minutes; FIRE did not leak.
# Confirmed cause: the merged PR: `state.s_history = torch.cat([state.s_history, s_new...])`
#   where `s_new` "has `grad_fn` from positions, so the cat result has a `grad_fn` whose saved
#   tensors include the previous `state.s_history`. Iterated -> one link per step -> every past
#   history tensor plus its saved-for-backward intermediates stay alive"; the buffers are never
#   differentiated through, and three `.detach()` calls fix it.
# Class: per-step optimizer-state history built from grad-tracked tensors, kept across steps
from dataclasses import dataclass

import torch


@dataclass
class LBFGSState:
    positions: torch.Tensor
    forces: torch.Tensor
    energy: torch.Tensor
    prev_positions: torch.Tensor
    prev_forces: torch.Tensor
    s_history: torch.Tensor
    y_history: torch.Tensor


def _two_loop_direction(grad, s_history, y_history):
    q = grad.clone()
    alphas = []
    for i in range(s_history.shape[1] - 1, -1, -1):
        s, y = s_history[:, i], y_history[:, i]
        rho = 1.0 / (y * s).sum().clamp_min(1e-10)
        alpha = rho * (s * q).sum()
        q = q - alpha * y
        alphas.append((rho, alpha))
    for i, (rho, alpha) in zip(range(s_history.shape[1]), reversed(alphas)):
        s, y = s_history[:, i], y_history[:, i]
        beta = rho * (y * q).sum()
        q = q + s * (alpha - beta)
    return -q


def lbfgs_step(state: LBFGSState, model, step_size=0.1, max_history=10):
    s_new = state.positions - state.prev_positions
    y_new = -(state.forces - state.prev_forces)
    state.s_history = torch.cat([state.s_history, s_new.unsqueeze(1)], dim=1)[:, -max_history:]  # leak: ANY
    state.y_history = torch.cat([state.y_history, y_new.unsqueeze(1)], dim=1)[:, -max_history:]  # leak: ANY

    direction = _two_loop_direction(-state.forces, state.s_history, state.y_history)
    state.prev_positions = state.positions
    state.prev_forces = state.forces

    positions = (state.positions + step_size * direction).detach().requires_grad_(True)
    energy = model(positions)
    forces = -torch.autograd.grad(energy.sum(), positions)[0]
    state.positions, state.forces, state.energy = positions, forces, energy
    return state


def relax(model, positions, n_steps=500):
    positions = positions.detach().requires_grad_(True)
    energy = model(positions)
    forces = -torch.autograd.grad(energy.sum(), positions)[0]
    empty = positions.new_zeros(positions.shape[0], 0, *positions.shape[1:])
    state = LBFGSState(positions, forces, energy, positions, forces, empty, empty.clone())
    for _ in range(n_steps):
        state = lbfgs_step(state, model)
    return state
