# Fixed twin of case 17: clearing the hooks also deletes the tensors they parked on the modules.
# Thread: https://github.com/jmschrei/tangermeme/pull/84
# Class: tensors stashed on modules by hooks, not cleared when the hooks are removed
import torch


def _f_hook(module, inputs, outputs):
    module.input = inputs[0].clone().detach()
    module.output = outputs.clone().detach()


def _nonlinear(module, grad_input, grad_output):
    delta_in = module.input[: module.input.shape[0] // 2] - module.input[module.input.shape[0] // 2:]
    delta_out = module.output[: module.output.shape[0] // 2] - module.output[module.output.shape[0] // 2:]
    delta_in = torch.cat([delta_in, delta_in])
    delta_out = torch.cat([delta_out, delta_out])
    return (torch.where(delta_in.abs() > 1e-6, grad_output[0] * delta_out / delta_in, grad_input[0]),)


def _register_hooks(module):
    module._handles = [module.register_forward_hook(_f_hook),
                       module.register_full_backward_hook(_nonlinear)]


def _clear_hooks(module):
    for handle in getattr(module, "_handles", []):
        handle.remove()
    module._handles = []
    if hasattr(module, "input"):
        del module.input
    if hasattr(module, "output"):
        del module.output


def deep_lift_shap(model, X, target=0, n_shuffles=20, device="cuda"):
    nonlinear = [m for m in model.modules() if isinstance(m, (torch.nn.ReLU, torch.nn.Sigmoid))]
    for m in nonlinear:
        _register_hooks(m)
    try:
        attributions = []
        for x in X:
            refs = x[None].repeat(n_shuffles, 1, 1)[:, :, torch.randperm(x.shape[-1])]
            inputs = torch.cat([x[None].repeat(n_shuffles, 1, 1), refs]).to(device).requires_grad_()
            out = model(inputs)[:, target].sum()
            grad, = torch.autograd.grad(out, inputs)
            attributions.append((grad[:n_shuffles] * (inputs[:n_shuffles] - inputs[n_shuffles:]))
                                .mean(0).detach().cpu())
    finally:
        for m in nonlinear:
            _clear_hooks(m)
    return torch.stack(attributions)


def explain_models(model_paths, X, load_model):
    models = {path: load_model(path).cuda().eval() for path in model_paths}
    results = {}
    for path, model in models.items():
        results[path] = deep_lift_shap(model, X)
        with torch.no_grad():
            results[path + ":pred"] = model(X.cuda()).cpu()
    return results
