# Recall case 15 (sealed): a trainer stores `loss.cpu().mean()` as a metric, assuming .cpu() detaches
# Thread: https://github.com/huggingface/trl/pull/1531
# Reported: (trl #1526) with CPOTrainer, GPU memory grows over the first steps until CUDA runs
#   out of memory; the reporter traced it to the nll_loss metric missing a `.detach()`.
# Confirmed cause: the maintainers' merged PR ("[CPO] fix memory leak due to retained value"):
#   `metrics["nll_loss"] = policy_nll_loss.cpu().mean()` is still attached to the graph (a
#   device-to-host copy is differentiable), and `store_metrics` keeps the metric values in
#   lists until the next log, so every step's graph stays alive. Fixed with `.detach()`.
# Class: a "metric" value that still carries the graph, kept in a long-lived store
from collections import defaultdict

import torch
from transformers import Trainer


class CPOTrainer(Trainer):
    def __init__(self, *args, beta=0.1, **kwargs):
        super().__init__(*args, **kwargs)
        self.beta = beta
        self._stored_metrics = defaultdict(lambda: defaultdict(list))

    def cpo_loss(self, policy_chosen_logps, policy_rejected_logps):
        logits = policy_chosen_logps - policy_rejected_logps
        losses = -torch.nn.functional.logsigmoid(self.beta * logits)
        chosen_rewards = self.beta * policy_chosen_logps.detach()
        rejected_rewards = self.beta * policy_rejected_logps.detach()
        return losses, chosen_rewards, rejected_rewards

    def get_batch_loss_metrics(self, model, batch, train_eval="train"):
        metrics = {}
        (policy_chosen_logps, policy_rejected_logps, policy_chosen_logits,
         policy_rejected_logits, policy_nll_loss) = self.concatenated_forward(model, batch)
        losses, chosen_rewards, rejected_rewards = self.cpo_loss(policy_chosen_logps,
                                                                 policy_rejected_logps)
        loss = losses.mean() + policy_nll_loss
        prefix = "eval_" if train_eval == "eval" else ""
        metrics[f"{prefix}rewards/chosen"] = chosen_rewards.mean().cpu()
        metrics[f"{prefix}rewards/rejected"] = rejected_rewards.mean().cpu()
        metrics[f"{prefix}logits/chosen"] = policy_chosen_logits.detach().mean().cpu()
        metrics[f"{prefix}nll_loss"] = policy_nll_loss.cpu().mean()  # leak: ANY
        return loss, metrics

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        loss, metrics = self.get_batch_loss_metrics(model, inputs, train_eval="train")
        self.store_metrics(metrics, train_eval="train")
        return (loss, metrics) if return_outputs else loss

    def store_metrics(self, metrics, train_eval="train"):
        for key, value in metrics.items():
            self._stored_metrics[train_eval][key].append(value)

    def log(self, logs, *args, **kwargs):
        train_eval = "train" if "loss" in logs else "eval"
        for key, values in self._stored_metrics[train_eval].items():
            logs[key] = torch.tensor(values).mean().item()
        del self._stored_metrics[train_eval]
        return super().log(logs, *args, **kwargs)
