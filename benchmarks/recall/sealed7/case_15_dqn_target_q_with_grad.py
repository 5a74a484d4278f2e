# Recall case 15 (sealed7): the DQN loss evaluates the target network with autograd enabled
# Thread: https://github.com/ray-project/ray/pull/35259
# Reported: computing target-network Q-values outside torch.no_grad() wastes GPU memory in every learner step
# Confirmed cause: build_q_losses ran compute_q_values on policy.target_models[model] with grad on, building a graph that is never backpropagated (the target is used detached); PR proposed wrapping it in torch.no_grad() (closed without merge, so weaker)
# Class: value/target network evaluated with grad on inside a training step
import torch
import torch.nn as nn
import torch.nn.functional as F


class QNet(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=512):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, n_actions))

    def forward(self, obs):
        return self.net(obs)


def compute_q_values(model, obs):
    return model(obs)


def build_q_losses(model, target_model, train_batch, gamma=0.99):
    q_t = compute_q_values(model, train_batch["obs"])
    q_tp1 = compute_q_values(target_model, train_batch["new_obs"])  # leak: ANY
    one_hot = F.one_hot(train_batch["actions"], q_t.shape[-1]).float()
    q_t_selected = (q_t * one_hot).sum(1)
    q_tp1_best = q_tp1.max(1).values
    q_tp1_best_masked = (1.0 - train_batch["dones"].float()) * q_tp1_best
    q_t_selected_target = train_batch["rewards"] + gamma * q_tp1_best_masked
    td_error = q_t_selected - q_t_selected_target.detach()
    return F.smooth_l1_loss(q_t_selected, q_t_selected_target.detach()), td_error


def learn_on_batch(model, target_model, optimizer, train_batch):
    loss, td_error = build_q_losses(model, target_model, train_batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"loss": loss.item(), "mean_td_error": td_error.abs().mean().item()}
