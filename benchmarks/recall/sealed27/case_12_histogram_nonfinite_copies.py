# Thread: https://github.com/wandb/wandb/pull/2761
# Reported: wandb.watch(model, log="gradients"/"all") uses excess GPU memory when it builds the
#   parameter/gradient histograms, enough to OOM large models.
# Confirmed cause: log_tensor_stats always filtered NaNs and then infs out of the flattened
#   (GPU) tensor with two boolean-mask indexings, each of which allocates a full-size copy of the
#   tensor on the GPU on every logging step; the merged fix skips the filtering when every value
#   is finite and otherwise builds a single copy.
# Class: tensors handed to a logger copied on the GPU
import torch
import wandb


class TorchHistory:
    def __init__(self, num_bins: int = 64):
        self._num_bins = num_bins

    def log_tensor_stats(self, tensor, name: str):
        if isinstance(tensor, (tuple, list)):
            while isinstance(tensor, (tuple, list)) and isinstance(tensor[0], (tuple, list)):
                tensor = [item for sublist in tensor for item in sublist]
            tensor = torch.cat([t.detach().reshape(-1) for t in tensor])

        flat = tensor.detach().reshape(-1)
        if flat.is_sparse:
            flat = flat.to_dense()

        # histograms cannot represent nan or inf, drop them
        flat = flat[~torch.isnan(flat)]  # leak: ANY
        flat = flat[~torch.isinf(flat)]  # leak: ANY

        if flat.numel() == 0:
            wandb.run._log({name: wandb.Histogram(np_histogram=([0], [0.0, 1.0]))}, commit=False)
            return

        tmin = flat.min().item()
        tmax = flat.max().item()
        counts = flat.histc(bins=self._num_bins, min=tmin, max=tmax)
        counts = counts.cpu().detach().clone()
        bins = torch.linspace(tmin, tmax, steps=self._num_bins + 1)
        wandb.run._log({name: wandb.Histogram(np_histogram=(counts.tolist(), bins.tolist()))}, commit=False)


def add_log_parameters_hook(module: torch.nn.Module, history: TorchHistory, prefix: str = ""):
    def parameter_log_hook(mod, inputs, outputs):
        if not mod.training:
            return
        for pname, param in mod.named_parameters():
            history.log_tensor_stats(param.detach(), "parameters/" + prefix + pname)

    return module.register_forward_hook(parameter_log_hook)
