# Recall case 07 (sealed3): NearestEmbed autograd.Function stashes the argmin index tensor directly on ctx
# Thread: https://github.com/nadavbh12/VQ-VAE/pull/5
# Reported: with PyTorch 0.4 on multiple GPUs the "argmin" tensor was never deleted from GPU memory; another user
#   confirms "I was wondering why the memory was piling up"
# Confirmed cause: ctx.argmin = argmin kept the tensor outside autograd's saved-tensor management; merged PR uses
#   ctx.save_for_backward(argmin) and reads it back from ctx.saved_tensors
# Class: custom autograd.Function storing a tensor as a ctx attribute instead of save_for_backward
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function


class NearestEmbedFunc(Function):
    @staticmethod
    def forward(ctx, input, emb):
        # input: (B, D, H, W) ; emb: (D, K)
        ctx.batch_size = input.size(0)
        ctx.num_latents = int(input.numel() / (input.size(0) * input.size(1)))
        ctx.emb_dim = emb.size(0)
        ctx.num_emb = emb.size(1)
        ctx.input_type = type(input)
        ctx.dims = list(range(len(input.size())))

        x_expanded = input.unsqueeze(-1)
        num_arbitrary_dims = len(ctx.dims) - 2
        emb_expanded = emb.view(emb.shape[0], *([1] * num_arbitrary_dims), emb.shape[1]) if num_arbitrary_dims else emb
        dist = torch.norm(x_expanded - emb_expanded, 2, 1)
        _, argmin = dist.min(-1)
        shifted_shape = [input.shape[0], *list(input.shape[2:]), input.shape[1]]
        result = emb.t().index_select(0, argmin.view(-1)).view(shifted_shape).permute(0, ctx.dims[-1], *ctx.dims[1:-1])
        ctx.argmin = argmin  # leak: ANY
        ctx.mark_non_differentiable(argmin)
        return result.contiguous(), argmin

    @staticmethod
    def backward(ctx, grad_output, argmin=None):
        grad_input = grad_emb = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output
        if ctx.needs_input_grad[1]:
            argmin = ctx.argmin  # leak: ANY
            latent_indices = torch.arange(ctx.num_emb, device=argmin.device).type_as(argmin)
            idx_choices = (argmin.view(-1, 1) == latent_indices.view(1, -1)).type_as(grad_output)
            n_idx_choice = idx_choices.sum(0)
            n_idx_choice[n_idx_choice == 0] = 1
            idx_avg_choices = idx_choices / n_idx_choice
            grad_output = grad_output.permute(0, *ctx.dims[2:], 1).contiguous()
            grad_output = grad_output.view(ctx.batch_size * ctx.num_latents, ctx.emb_dim)
            grad_emb = torch.sum(grad_output.data.view(-1, ctx.emb_dim, 1) * idx_avg_choices.view(-1, 1, ctx.num_emb), 0)
        return grad_input, grad_emb


class VQ_CVAE(nn.Module):
    def __init__(self, d=256, k=512):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, d, 4, 2, 1), nn.ReLU(), nn.Conv2d(d, d, 4, 2, 1))
        self.decoder = nn.Sequential(nn.ConvTranspose2d(d, d, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(d, 3, 4, 2, 1))
        self.emb = nn.Parameter(torch.rand(d, k))

    def forward(self, x):
        z_e = self.encoder(x)
        z_q, _ = NearestEmbedFunc.apply(z_e, self.emb)
        emb, _ = NearestEmbedFunc.apply(z_e.detach(), self.emb)
        return torch.tanh(self.decoder(z_q)), z_e, emb


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.DataParallel(VQ_CVAE()).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=2e-4)
    for step in range(100000):
        x = torch.rand(128, 3, 32, 32, device=device)
        recon, z_e, emb = model(x)
        loss = F.mse_loss(recon, x) + F.mse_loss(emb, z_e.detach()) + 0.25 * F.mse_loss(z_e, emb.detach())
        opt.zero_grad()
        loss.backward()
        opt.step()
