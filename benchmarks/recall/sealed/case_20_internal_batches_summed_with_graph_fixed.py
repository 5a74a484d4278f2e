# Fixed twin of case 20: each internal batch's attributions are detached before they are summed.
# Thread: https://github.com/meta-pytorch/captum/pull/633
# Class: a chunked loop whose running total keeps every chunk's graph
import torch


def _batch_attribution(attr_method, num_examples, internal_batch_size, n_steps, **kwargs):
    step_sizes_full, alphas_full = attr_method._approx_steps(n_steps)
    total_attr = None
    cumulative_steps = 0
    while cumulative_steps < n_steps:
        start_step = cumulative_steps
        end_step = min(start_step + internal_batch_size // num_examples, n_steps)
        batch_steps = end_step - start_step
        current_attr = attr_method._attribute(
            **kwargs,
            n_steps=batch_steps,
            step_sizes_and_alphas=(step_sizes_full[start_step:end_step],
                                   alphas_full[start_step:end_step]),
        )
        current_attr = tuple(attr.detach() for attr in current_attr)
        if total_attr is None:
            total_attr = current_attr
        else:
            total_attr = tuple(current + prev for current, prev in zip(current_attr, total_attr))
        cumulative_steps = end_step
    return total_attr


class LayerConductance:
    def __init__(self, forward_func, layer):
        self.forward_func = forward_func
        self.layer = layer

    def _approx_steps(self, n_steps):
        alphas = torch.linspace(0, 1, n_steps + 1)
        return [1.0 / n_steps] * n_steps, alphas[1:].tolist()

    def _attribute(self, inputs, baselines, target, n_steps, step_sizes_and_alphas):
        step_sizes, alphas = step_sizes_and_alphas
        scaled = torch.cat([baselines + a * (inputs - baselines) for a in alphas]).requires_grad_()
        saved = {}
        handle = self.layer.register_forward_hook(lambda m, i, o: saved.__setitem__("out", o))
        try:
            out = self.forward_func(scaled)[:, target].sum()
        finally:
            handle.remove()
        layer_grads, = torch.autograd.grad(out, saved["out"])
        layer_out = saved["out"].view(n_steps, inputs.shape[0], -1)
        grads = layer_grads.view(n_steps, inputs.shape[0], -1)
        return ((layer_out[1:] - layer_out[:-1]) * grads[:-1]).sum(0),

    def attribute(self, inputs, baselines=None, target=0, n_steps=50, internal_batch_size=None):
        baselines = torch.zeros_like(inputs) if baselines is None else baselines
        return _batch_attribution(self, inputs.shape[0], internal_batch_size or inputs.shape[0] * n_steps,
                                  n_steps + 1, inputs=inputs, baselines=baselines, target=target)[0]
