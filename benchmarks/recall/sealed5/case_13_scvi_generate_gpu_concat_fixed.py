# Fixed twin of case 13: each batch's samples are moved to the CPU before concatenation
# Thread: https://github.com/scverse/scvi-tools/pull/469
# Reported: high GPU memory when generating posterior predictive samples for a whole dataset (issue #468)
# Confirmed cause: all generated batches were held on the GPU until the final torch.cat; maintainer's merged PR moves them to cpu first
# Class: predict/generate loop collecting per-batch results on the device
import torch
import torch.distributions as dist


class Posterior:
    def __init__(self, model, data_loader, device="cuda"):
        self.model = model.to(device)
        self.data_loader = data_loader
        self.device = device

    @torch.no_grad()
    def generate(self, n_samples=100):
        x_new = []
        x_old = []
        for tensors in self.data_loader:
            sample_batch = tensors[0].to(self.device)
            px_rate, px_r = self.model.inference(sample_batch, n_samples=n_samples)
            p = px_rate / (px_rate + px_r)
            gen = dist.NegativeBinomial(total_count=px_r, probs=p).sample()
            x_old.append(sample_batch.cpu())
            x_new.append(gen.cpu())
        x_old = torch.cat(x_old)
        x_new = torch.cat(x_new)
        return x_new.numpy(), x_old.numpy()
