# Recall case 51: a policy played without no_grad feeds an observation history built with torch.cat
# Thread: https://github.com/Improbable-AI/walk-these-ways/issues/10
# Reported: running scripts/play.py with a trained Go1 policy shows a slow but fatal GPU memory
#   leak.
# Confirmed cause: the maintainer: an earlier version had this leak and adding
#   `with torch.no_grad():` fixed it; the reporter confirmed that running the policy and the
#   environment step/reset under `torch.no_grad()` fixes it. The actions carry the policy's graph
#   into the environment, whose observation history is rebuilt with `torch.cat` from the previous
#   history every step, so every step's graph is chained to the next one.
# Class: history buffer built with torch.cat from a policy called with grad enabled
import torch


class HistoryWrapper:
    def __init__(self, env):
        self.env = env
        self.obs_history_length = env.cfg.env.num_observation_history
        self.num_obs_history = self.obs_history_length * env.num_obs
        self.obs_history = torch.zeros(env.num_envs, self.num_obs_history, device=env.device)

    def step(self, action):
        obs, rew, done, info = self.env.step(action)
        privileged_obs = info["privileged_obs"]
        self.obs_history = torch.cat((self.obs_history[:, self.env.num_obs:], obs), dim=-1)  # leak: ANY
        return {"obs": obs, "privileged_obs": privileged_obs, "obs_history": self.obs_history}, rew, done, info

    def reset(self):
        obs = self.env.reset()
        self.obs_history[:, :] = 0
        return {"obs": obs, "privileged_obs": self.env.get_privileged_observations(), "obs_history": self.obs_history}


def load_policy(logdir):
    body = torch.jit.load(logdir + "/checkpoints/body_latest.jit")
    adaptation_module = torch.jit.load(logdir + "/checkpoints/adaptation_module_latest.jit")

    def policy(obs, info={}):
        latent = adaptation_module.forward(obs["obs_history"].to("cpu"))
        action = body.forward(torch.cat((obs["obs_history"].to("cpu"), latent), dim=-1))
        info["latent"] = latent
        return action

    return policy


def play_go1(env, policy, num_eval_steps=250, x_vel_cmd=1.5):
    measured_x_vels = []
    obs = env.reset()
    for i in range(num_eval_steps):
        actions = policy(obs)  # leak: ANY
        env.env.commands[:, 0] = x_vel_cmd
        obs, rew, done, info = env.step(actions)
        measured_x_vels.append(env.env.base_lin_vel[0, 0].item())
    return measured_x_vels
