# Recall case 09 (sealed11): sampled trajectories are pushed into the replay buffer with their GPU tensors (and graphs) attached
# Thread: https://github.com/recursionpharma/gflownet/pull/130
# Reported: with config.replay.use = True training dies with torch.cuda.OutOfMemoryError (79 GiB allocated by PyTorch); does not happen without the replay buffer
# Confirmed cause: send_to_replay pushed trajectory dicts whose tensors (log rewards, cond_info, logprobs) live on the GPU, so the capacity-sized buffer pinned GPU memory; the merged PR detaches and moves every tensor to CPU before pushing
# Class: long-lived history/replay buffer stores GPU tensors (possibly graph-attached) produced each step
import numpy as np
import torch
import torch.nn as nn


class ReplayBuffer:
    def __init__(self, capacity, warmup, rng):
        self.capacity = capacity
        self.warmup = warmup
        self.buffer = []
        self.position = 0
        self.rng = rng

    def push(self, *args):
        if len(self.buffer) < self.capacity:
            self.buffer.append(None)
        self.buffer[self.position] = args
        self.position = (self.position + 1) % self.capacity

    def sample(self, batch_size):
        idxs = self.rng.choice(len(self.buffer), batch_size)
        out = list(zip(*[self.buffer[idx] for idx in idxs]))
        for i in range(len(out)):
            if all(isinstance(x, torch.Tensor) for x in out[i]):
                out[i] = torch.stack(out[i], dim=0)
            else:
                out[i] = list(out[i])
        return out

    def __len__(self):
        return len(self.buffer)


class Policy(nn.Module):
    def __init__(self, obs_dim=128, n_actions=64, cond_dim=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + cond_dim, 512), nn.ReLU(), nn.Linear(512, n_actions))

    def forward(self, obs, cond):
        return torch.log_softmax(self.net(torch.cat([obs, cond], -1)), -1)


class DataSource:
    def __init__(self, policy, device, replay_buffer=None, traj_len=32):
        self.policy = policy
        self.device = device
        self.replay_buffer = replay_buffer
        self.traj_len = traj_len

    def sample_trajs(self, n):
        cond = torch.rand(n, 32, device=self.device)
        obs = torch.zeros(n, 128, device=self.device)
        fwd_logprob = torch.zeros(n, device=self.device)
        states = []
        for _ in range(self.traj_len):
            logp = self.policy(obs, cond)
            a = torch.multinomial(logp.exp(), 1).squeeze(1)
            fwd_logprob = fwd_logprob + logp.gather(1, a[:, None]).squeeze(1)
            obs = obs.roll(1, dims=1)
            obs[:, 0] = a.float()
            states.append(obs)
        trajs = []
        for i in range(n):
            trajs.append({
                "traj": torch.stack([s[i] for s in states]),
                "fwd_logprob": fwd_logprob[i],
                "cond_info": {"encoding": cond[i]},
                "is_valid": True,
            })
        return trajs

    def compute_log_rewards(self, trajs):
        for t in trajs:
            t["flat_rewards"] = t["traj"][-1].sum().sigmoid().unsqueeze(0)
            t["log_reward"] = torch.log(t["flat_rewards"] + 1e-8).squeeze(0)

    def send_to_replay(self, trajs):
        if self.replay_buffer is not None:
            for t in trajs:
                self.replay_buffer.push(t, t["log_reward"], t["flat_rewards"], t["cond_info"], t["is_valid"])  # leak: ANY


def main():
    device = torch.device("cuda")
    policy = Policy().to(device)
    opt = torch.optim.Adam(policy.parameters(), lr=1e-4)
    log_z = nn.Parameter(torch.zeros(1, device=device))
    opt.add_param_group({"params": [log_z], "lr": 1e-2})
    replay = ReplayBuffer(capacity=100_000, warmup=1_000, rng=np.random.default_rng(0))
    source = DataSource(policy, device, replay)
    for step in range(80_000):
        trajs = source.sample_trajs(64)
        source.compute_log_rewards(trajs)
        source.send_to_replay(trajs)
        fwd = torch.stack([t["fwd_logprob"] for t in trajs])
        log_r = torch.stack([t["log_reward"] for t in trajs]).detach()
        loss = (log_z + fwd - log_r).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print(step, float(loss), torch.cuda.memory_allocated() / 2**30, "GiB")


if __name__ == "__main__":
    main()
