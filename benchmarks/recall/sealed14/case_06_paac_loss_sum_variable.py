# Recall case 06 (sealed14): PAAC training adds the differentiable loss Variable into a running loss_sum used only for logging
# Thread: https://github.com/qbx2/PAAC.pytorch/issues/1
# Reported: memory related to each update is not freed ('Too late memory free')
# Confirmed cause: the repository author notes loss_sum is accumulated with the Variable, so every update's graph stays referenced; it should add variable.data[0] (a Python number) instead
# Class: `loss_sum += loss` (tensor with graph) in an actor-critic update loop
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self, n_actions=6):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(4, 16, 8, 4), nn.ReLU(), nn.Conv2d(16, 32, 4, 2), nn.ReLU())
        self.fc = nn.Linear(32 * 9 * 9, 256)
        self.policy = nn.Linear(256, n_actions)
        self.value = nn.Linear(256, 1)

    def forward(self, x):
        h = F.relu(self.fc(self.conv(x).flatten(1)))
        return F.log_softmax(self.policy(h), -1), self.value(h)


def train(model, optimizer, env_batches, device, log_every=100):
    loss_sum = 0
    for step, (states, actions, returns) in enumerate(env_batches, 1):
        states, actions, returns = states.to(device), actions.to(device), returns.to(device)
        log_probs, values = model(states)
        advantages = returns - values.squeeze(-1)
        policy_loss = -(log_probs.gather(1, actions[:, None]).squeeze(1) * advantages.detach()).mean()
        value_loss = advantages.pow(2).mean()
        loss = policy_loss + 0.5 * value_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss_sum += loss  # leak: ANY
        if step % log_every == 0:
            print(step, float(loss_sum) / log_every)
            loss_sum = 0


if __name__ == "__main__":
    dev = torch.device("cuda")
    m = ActorCritic().to(dev)
    opt = torch.optim.RMSprop(m.parameters(), lr=7e-4)
    batches = ((torch.randn(32, 4, 84, 84), torch.randint(0, 6, (32,)), torch.randn(32)) for _ in range(10 ** 6))
    train(m, opt, batches, dev, log_every=10 ** 7)
