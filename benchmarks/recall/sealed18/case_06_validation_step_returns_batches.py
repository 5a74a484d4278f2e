# Recall case 06 (sealed18): validation_step returns full batches that are stacked at epoch end for CFEval
# Thread: https://github.com/facebookresearch/ReAgent/pull/460
# Reported: counterfactual evaluation (CFEval) of DQN and CRR workflows runs out of memory when the validation set is large
# Confirmed cause: validation_step returns the whole batch (including all state features) and the epoch end stacks every returned batch before evaluating; the fix (author diff, exported from the internal review) computes the numbers CFEval needs inside validation_step and returns only those
# Class: step outputs returned and kept for the whole epoch
import torch


class DQNTrainer:
    def __init__(self, q_network, gamma=0.99):
        self.q_network = q_network
        self.gamma = gamma

    def validation_step(self, batch, batch_idx):
        return batch  # leak: ANY

    def validation_epoch_end(self, outputs):
        states = torch.cat([b.state for b in outputs])  # leak: ANY
        actions = torch.cat([b.action for b in outputs])
        rewards = torch.cat([b.reward for b in outputs])
        logged_propensities = torch.cat([b.propensity for b in outputs])
        with torch.no_grad():
            q_values = self.q_network(states)
            model_propensities = torch.softmax(q_values, dim=1)
        chosen = (model_propensities * actions).sum(1)
        ips = (chosen / logged_propensities.squeeze(1)) * rewards.squeeze(1)
        return {"ips": ips.mean().item()}
