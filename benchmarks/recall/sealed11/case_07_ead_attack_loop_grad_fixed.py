# Fixed twin of case 07: runs the per-iteration bookkeeping forward/loss/update under torch.no_grad()
# Thread: https://github.com/BorealisAI/advertorch/pull/73
# Reported: GPU memory keeps increasing while running the EAD attack for many iterations (e.g. 1000) until CUDA out of memory
# Confirmed cause: the bookkeeping forward pass on xx_k (output, distances, loss, prevloss and the in-place updates of the best-distance buffers) ran with grad enabled, so each iteration's graph was created and chained/kept; the merged PR wraps that block in torch.no_grad()
# Class: evaluation/bookkeeping forward inside an optimisation loop runs with grad on and its outputs are kept across iterations
import torch
import torch.nn as nn
import torch.nn.functional as F

ONE_MINUS_EPS = 0.999999
NUM_CHECKS = 10


def calc_l2distsq(x, y):
    return (x - y).pow(2).view(x.size(0), -1).sum(dim=1)


def calc_l1dist(x, y):
    return (x - y).abs().view(x.size(0), -1).sum(dim=1)


class ElasticNetL1Attack:
    def __init__(self, predict, num_classes, confidence=0.0, learning_rate=1e-2, beta=1e-2,
                 max_iterations=1000, abort_early=True, decision_rule="EN"):
        self.predict = predict
        self.num_classes = num_classes
        self.confidence = confidence
        self.learning_rate = learning_rate
        self.beta = beta
        self.max_iterations = max_iterations
        self.abort_early = abort_early
        self.decision_rule = decision_rule

    def _loss_fn(self, output, y_onehot, l1dist, l2distsq, const):
        real = (y_onehot * output).sum(dim=1)
        other = ((1.0 - y_onehot) * output - y_onehot * 1e4).max(dim=1)[0]
        loss_logits = torch.clamp(real - other + self.confidence, min=0.0)
        loss = (const * loss_logits).sum() + l2distsq.sum()
        if l1dist is not None:
            loss = loss + self.beta * l1dist.sum()
        return loss

    def _update_if_smaller_dist_succeed(self, adv_img, labs, output, dist, cur_dist, final_dist, final_advs):
        output_label = output.argmax(dim=1)
        mask = (dist < cur_dist) & (output_label != labs)
        cur_dist[mask] = dist[mask]
        final_mask = (dist < final_dist) & (output_label != labs)
        final_dist[final_mask] = dist[final_mask]
        final_advs[final_mask] = adv_img[final_mask]

    def perturb(self, x, y, const=1.0):
        batch_size = x.size(0)
        y_onehot = F.one_hot(y, self.num_classes).float()
        final_dist = torch.full((batch_size,), 1e10, device=x.device)
        final_advs = x.clone()
        cur_dist = torch.full((batch_size,), 1e10, device=x.device)
        prevloss = 1e6

        yy_k = x.clone().requires_grad_()
        xx_k = x.clone()
        for ii in range(self.max_iterations):
            if yy_k.grad is not None:
                yy_k.grad.zero_()
            output = self.predict(yy_k)
            loss_opt = self._loss_fn(output, y_onehot, None, calc_l2distsq(yy_k, x), const)
            loss_opt.backward()
            with torch.no_grad():
                # ISTA step with soft thresholding
                z = yy_k - self.learning_rate * yy_k.grad
                diff = z - x
                xx_next = x + torch.sign(diff) * torch.clamp(diff.abs() - self.beta, min=0.0)
                xx_next = xx_next.clamp(0.0, 1.0)
                yy_k.data = xx_next + (ii / (ii + 3.0)) * (xx_next - xx_k)
                xx_k = xx_next

            # loss ElasticNet or L1 over xx_k
            with torch.no_grad():
                output = self.predict(xx_k)
                l2distsq = calc_l2distsq(xx_k, x)
                l1dist = calc_l1dist(xx_k, x)
                if self.decision_rule == "EN":
                    dist = l2distsq + (l1dist * self.beta)
                else:
                    dist = l1dist
                loss = self._loss_fn(output, y_onehot, l1dist, l2distsq, const)

                if self.abort_early:
                    if ii % (self.max_iterations // NUM_CHECKS or 1) == 0:
                        if loss > prevloss * ONE_MINUS_EPS:
                            break
                        prevloss = loss

                self._update_if_smaller_dist_succeed(xx_k.data, y, output, dist, cur_dist, final_dist, final_advs)
        return final_advs


if __name__ == "__main__":
    model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(8), nn.Flatten(),
                          nn.Linear(64 * 64, 10)).cuda().eval()
    attack = ElasticNetL1Attack(model, num_classes=10, max_iterations=1000)
    for b in range(20):
        x = torch.rand(128, 3, 32, 32, device="cuda")
        y = torch.randint(0, 10, (128,), device="cuda")
        adv = attack.perturb(x, y)
        print(b, torch.cuda.memory_allocated() / 2**20)
