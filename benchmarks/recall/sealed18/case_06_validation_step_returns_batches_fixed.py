# Fixed twin of case 06: validation_step computes the CFEval numbers per batch and returns only those
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
        with torch.no_grad():
            q_values = self.q_network(batch.state)
            model_propensities = torch.softmax(q_values, dim=1)
        chosen = (model_propensities * batch.action).sum(1)
        ips = (chosen / batch.propensity.squeeze(1)) * batch.reward.squeeze(1)
        return ips.detach().cpu()

    def validation_epoch_end(self, outputs):
        ips = torch.cat(list(outputs))
        return {"ips": ips.mean().item()}
