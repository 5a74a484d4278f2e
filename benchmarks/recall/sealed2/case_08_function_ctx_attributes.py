# Recall case 08 (sealed2): a custom autograd.Function keeps intermediate tensors as ctx attributes
# Thread: https://github.com/pyro-ppl/pyro/pull/1049
# Reported: memory leaks when sampling from the OMT multivariate normal during SVI.
# Confirmed cause: the merged PR ("never write `ctx.blah = blah`. memory leaks may arise"): the
#   forward stored `ctx.white` and `ctx.z` (z is part of the output) as plain attributes; the fix
#   saves them with `ctx.save_for_backward(z, white, scale_tril)` and reads `ctx.saved_tensors`.
# Class: tensors (one of them feeding the output) stored on ctx instead of save_for_backward
import torch
from torch.autograd import Function
from torch.distributions import MultivariateNormal


class _OMTMVNSample(Function):
    @staticmethod
    def forward(ctx, loc, scale_tril, shape):
        ctx.white = loc.new_empty(shape).normal_()  # leak: ANY
        ctx.z = torch.matmul(ctx.white, scale_tril.t())  # leak: ANY
        ctx.save_for_backward(scale_tril)
        return loc + ctx.z

    @staticmethod
    def backward(ctx, grad_output):
        (L,) = ctx.saved_tensors
        z, epsilon = ctx.z, ctx.white
        dim = L.shape[0]
        g = grad_output
        loc_grad = g.reshape(-1, dim).sum(0)
        identity = torch.eye(dim, dtype=L.dtype, device=L.device)
        R_inv = torch.linalg.solve_triangular(L.t(), identity, upper=True)
        z_ja = z.unsqueeze(-1)
        g_R_inv = torch.matmul(g, R_inv).unsqueeze(-2)
        epsilon_jb = epsilon.unsqueeze(-2)
        g_ja = g.unsqueeze(-1)
        diff_L_ab = 0.5 * (g_ja * epsilon_jb + g_R_inv * z_ja).reshape(-1, dim, dim).sum(0)
        L_grad = torch.tril(diff_L_ab)
        return loc_grad, L_grad, None


class OMTMultivariateNormal(MultivariateNormal):
    has_rsample = True

    def __init__(self, loc, scale_tril):
        super().__init__(loc, scale_tril=scale_tril)

    def rsample(self, sample_shape=torch.Size()):
        return _OMTMVNSample.apply(self.loc, self.scale_tril, sample_shape + self.loc.shape)


def fit(target_log_prob, dim, steps=5000, num_samples=32, device="cuda"):
    loc = torch.zeros(dim, device=device, requires_grad=True)
    raw_L = torch.eye(dim, device=device).requires_grad_()
    optimizer = torch.optim.Adam([loc, raw_L], lr=1e-2)
    for step in range(steps):
        q = OMTMultivariateNormal(loc, torch.tril(raw_L))
        z = q.rsample((num_samples,))
        elbo = (target_log_prob(z) - q.log_prob(z)).mean()
        optimizer.zero_grad()
        (-elbo).backward()
        optimizer.step()
        if step % 500 == 0:
            print(step, elbo.item())
    return loc.detach(), torch.tril(raw_L).detach()
