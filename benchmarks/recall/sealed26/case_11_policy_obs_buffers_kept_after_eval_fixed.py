# Fixed twin of case 11: the policy's observation buffers are dropped with reset() when the eval ends, as the PR does.
import gc
from collections import deque
from contextlib import nullcontext

import torch
from torch import nn


class PI05MemPolicy(nn.Module):
    def __init__(self, config, backbone):
        super().__init__()
        self.config = config
        self.backbone = backbone
        self.reset()

    def reset(self):
        """Called whenever the environment is reset."""
        self._action_queue = deque([], maxlen=self.config.n_action_steps)
        self._obs_buffers = {}
        self._state_buffer = None

    def _stack_history(self, batch):
        if self._state_buffer is None:
            self._state_buffer = deque(maxlen=self.config.obs_buffer_size)
            self._obs_buffers = {}
        self._state_buffer.append(batch["state"])
        for key in self.config.image_keys:
            self._obs_buffers.setdefault(key, deque(maxlen=self.config.obs_buffer_size)).append(batch[key])
        history = {"state": torch.stack(list(self._state_buffer), dim=1)}
        for key, frames in self._obs_buffers.items():
            history[key] = torch.stack(list(frames), dim=1)
        return history

    @torch.no_grad()
    def select_action(self, batch):
        if not self._action_queue:
            actions = self.backbone(self._stack_history(batch))
            self._action_queue.extend(actions.transpose(0, 1))
        return self._action_queue.popleft()


def eval_policy_all(envs, policy, n_episodes):
    rewards = []
    for _ in range(n_episodes):
        policy.reset()
        obs, done = envs.reset(), False
        while not done:
            obs, reward, done, _ = envs.step(policy.select_action(obs))
            rewards.append(reward)
    return {"avg_reward": sum(rewards) / max(len(rewards), 1)}


def _eval_with_fresh_envs(cfg, policy, accelerator, make_envs, close_envs):
    eval_envs = make_envs(cfg.env, n_envs=cfg.eval.batch_size)
    try:
        with torch.no_grad(), torch.autocast(device_type=accelerator.device.type) if cfg.policy.use_amp else nullcontext():
            return eval_policy_all(eval_envs, policy, cfg.eval.n_episodes)
    finally:
        close_envs(eval_envs)
        accelerator.unwrap_model(policy).reset()
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def train(cfg, policy, optimizer, dataloader, accelerator, make_envs, close_envs):
    for step, batch in enumerate(dataloader, start=1):
        loss = policy.backbone(batch).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if cfg.eval_freq > 0 and step % cfg.eval_freq == 0:
            policy.eval()
            eval_info = _eval_with_fresh_envs(cfg, policy, accelerator, make_envs, close_envs)
            policy.train()
            accelerator.print(step, eval_info)
