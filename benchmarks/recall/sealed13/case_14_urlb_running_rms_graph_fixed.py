# Fixed twin of case 14: the running mean/std update runs under torch.no_grad(), so M and S never carry autograd history between steps
# Thread: https://github.com/rll-research/url_benchmark/pull/32
# Reported: CUDA memory keeps increasing while computing the particle-based (kNN) intrinsic reward normalised by utils.RMS
# Confirmed cause: RMS.__call__ builds new_M/new_S from the incoming tensor and the previous M/S without no_grad, so each update extends a graph back through all earlier updates; the PR (open, contributor-confirmed only: weaker) wraps the update in torch.no_grad()
# Class: running statistic / recurrent state carried across iterations without detach or no_grad
import torch
import torch.nn as nn


class RMS(object):
    """running mean and std"""

    def __init__(self, device, epsilon=1e-4, shape=(1,)):
        self.M = torch.zeros(shape).to(device)
        self.S = torch.ones(shape).to(device)
        self.n = epsilon

    @torch.no_grad()
    def __call__(self, x):
        bs = x.size(0)
        delta = torch.mean(x, dim=0) - self.M
        new_M = self.M + delta * bs / (self.n + bs)
        new_S = (self.S * self.n + torch.var(x, dim=0) * bs +
                 torch.square(delta) * self.n * bs / (self.n + bs)) / (self.n + bs)
        self.M = new_M
        self.S = new_S
        self.n += bs
        return self.M, self.S


class PBE(object):
    """particle-based entropy on kNN distances, normalised by a running mean"""

    def __init__(self, rms, knn_k=12, knn_clip=0.0):
        self.rms = rms
        self.knn_k = knn_k
        self.knn_clip = knn_clip

    def __call__(self, rep):
        b = rep.size(0)
        sim = torch.norm(rep[:, None, :] - rep[None, :, :], dim=-1, p=2)
        reward, _ = sim.topk(self.knn_k, dim=1, largest=False, sorted=True)
        reward = reward.reshape(-1, 1)
        reward = reward / self.rms(reward)[0]
        return torch.clamp(reward - self.knn_clip, min=0.0).reshape(b, self.knn_k).mean(1, keepdim=True)


class EntropyAgent(nn.Module):
    def __init__(self, obs_dim=24, rep_dim=512, device="cuda"):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(obs_dim, 1024), nn.ReLU(), nn.Linear(1024, rep_dim)).to(device)
        self.critic = nn.Sequential(nn.Linear(rep_dim, 1024), nn.ReLU(), nn.Linear(1024, 1)).to(device)
        self.pbe = PBE(RMS(device))
        self.opt = torch.optim.Adam(list(self.encoder.parameters()) + list(self.critic.parameters()), lr=1e-4)

    def update(self, obs, next_obs):
        rep = self.encoder(obs)
        intr_reward = self.pbe(self.encoder(next_obs))
        target = intr_reward.detach() + 0.99 * self.critic(self.encoder(next_obs)).detach()
        loss = nn.functional.mse_loss(self.critic(rep), target)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return {"intr_reward": intr_reward.mean().item(), "critic_loss": loss.item()}


if __name__ == "__main__":
    agent = EntropyAgent()
    for step in range(200000):
        obs, next_obs = torch.randn(1024, 24, device="cuda"), torch.randn(1024, 24, device="cuda")
        metrics = agent.update(obs, next_obs)
        if step % 1000 == 0:
            print(step, metrics, torch.cuda.memory_allocated() >> 20)
