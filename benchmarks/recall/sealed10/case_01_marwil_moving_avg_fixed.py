# Fixed twin of case 01: the running advantage-norm buffer is updated from a detached value, so no graph is chained across iterations
# Thread: https://github.com/ray-project/ray/pull/27406
# Reported: torch MARWIL policy memory grows with every training iteration until long runs die
# Confirmed cause: the moving average of the squared advantage norm was updated from a graph-attached tensor, so each update chained onto the previous graph that is never backpropagated (merged PR by the RLlib maintainer; same diagnosis in ray PR 21291)
# Class: persistent buffer/attribute updated in place from a requires-grad tensor inside the loss
import torch
import torch.nn as nn


class MARWILTorchModel(nn.Module):
    def __init__(self, obs_dim=16, n_actions=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh())
        self.pi = nn.Linear(64, n_actions)
        self.vf = nn.Linear(64, 1)

    def forward(self, obs):
        h = self.body(obs)
        return self.pi(h), self.vf(h).squeeze(-1)


class MARWILPolicy:
    def __init__(self, beta=1.0, vf_coeff=1.0, moving_average_sqd_adv_norm_update_rate=1e-8):
        self.model = MARWILTorchModel()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.beta = beta
        self.vf_coeff = vf_coeff
        self.update_rate = moving_average_sqd_adv_norm_update_rate
        self._moving_average_sqd_adv_norm = torch.tensor(100.0)

    def marwil_loss(self, obs, actions, cumulative_rewards):
        logits, value = self.model(obs)
        logp = torch.distributions.Categorical(logits=logits).log_prob(actions)
        adv = cumulative_rewards - value
        adv_squared_mean = torch.mean(adv ** 2)
        # update the running normaliser of the advantages
        self._moving_average_sqd_adv_norm = self._moving_average_sqd_adv_norm + self.update_rate * (adv_squared_mean.detach() - self._moving_average_sqd_adv_norm)
        exp_advs = torch.exp(self.beta * (adv / (1e-8 + torch.pow(self._moving_average_sqd_adv_norm, 0.5)))).detach()
        p_loss = -torch.mean(exp_advs * logp)
        v_loss = 0.5 * adv_squared_mean
        return p_loss + self.vf_coeff * v_loss

    def learn_on_batch(self, batch):
        loss = self.marwil_loss(batch["obs"], batch["actions"], batch["advantages"])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"total_loss": loss.item(), "sqd_adv_norm": self._moving_average_sqd_adv_norm.item()}


def offline_batches(n, bs=256):
    for _ in range(n):
        yield {
            "obs": torch.randn(bs, 16),
            "actions": torch.randint(0, 4, (bs,)),
            "advantages": torch.randn(bs),
        }


if __name__ == "__main__":
    policy = MARWILPolicy()
    for i, batch in enumerate(offline_batches(100000)):
        stats = policy.learn_on_batch(batch)
        if i % 1000 == 0:
            print(i, stats)
