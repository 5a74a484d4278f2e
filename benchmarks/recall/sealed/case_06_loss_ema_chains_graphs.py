# Recall case 06 (sealed): an exponential moving average of the losses is kept as a tensor
# Thread: https://github.com/alexhernandezgarcia/gflownet/pull/133
# Reported: host memory grows very fast with every training iteration of the GFlowNet agent
#   (ctorus and proxy environments alike).
# Confirmed cause: the merged PR ("Compute EMAs outside of pytorch"): the agent keeps running
#   averages of the terminal and non-terminal losses, computed "with pytorch tensors and without
#   any detach", so each new average references the previous one and the step's graph: the
#   whole chain of graphs stays in memory. Computing the averages on Python floats (`.item()`)
#   fixed it (validated with memory plots).
# Class: running average (EMA) kept as a tensor, chaining every step's graph
import torch


class GFlowNetAgent:
    def __init__(self, env, forward_policy, backward_policy, logZ, opt, n_train_steps,
                 ema_alpha=0.5, batch_size=16):
        self.env = env
        self.forward_policy = forward_policy
        self.backward_policy = backward_policy
        self.logZ = logZ
        self.opt = opt
        self.n_train_steps = n_train_steps
        self.ema_alpha = ema_alpha
        self.batch_size = batch_size

    def train(self, logger):
        loss_term_ema = None
        loss_flow_ema = None
        for it in range(self.n_train_steps):
            batch = self.sample_batch(self.batch_size)
            losses = self.trajectorybalance_loss(it, batch)
            loss, loss_term, loss_flow = losses
            self.opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.forward_policy.parameters(), 1.0)
            self.opt.step()
            if loss_term_ema is None:
                loss_term_ema = loss_term  # leak: ANY
                loss_flow_ema = loss_flow
            else:
                loss_term_ema = self.ema_alpha * loss_term + (1.0 - self.ema_alpha) * loss_term_ema  # leak: ANY
                loss_flow_ema = self.ema_alpha * loss_flow + (1.0 - self.ema_alpha) * loss_flow_ema
            logger.log_train(it, loss=loss.item(), term_ema=float(loss_term_ema),
                             flow_ema=float(loss_flow_ema))
