# Fixed twin of case 54: the logged slice is copied to the host.
# Thread: https://github.com/KempnerInstitute/overcomplete/issues/5
# Class: tensors handed to a logging helper kept on the device (a view keeps the whole storage)
from collections import defaultdict

import torch


def l2(x, dims=None):
    return x.square().sum(dims).sqrt() if dims is not None else x.norm()


def l0_eps(x, eps=1e-6):
    return (x.abs() > eps).float().sum(-1)


def _log_metrics(monitoring, logs, model, z, loss, optimizer):
    if monitoring == 0:
        return
    if monitoring > 0:
        logs["lr"].append(optimizer.param_groups[0]["lr"])
        logs["step_loss"].append(loss.item())
    if monitoring > 1:
        logs["z"].append(z.detach().cpu()[::10])
        logs["z_l2"].append(l2(z).item())
        logs["dictionary_sparsity"].append(l0_eps(model.get_dictionary()).mean().item())
        for name, param in model.named_parameters():
            if param.grad is not None:
                logs[f"params_norm_{name}"].append(l2(param).item())
                logs[f"params_grad_norm_{name}"].append(l2(param.grad).item())


def train_sae(model, dataloader, criterion, optimizer, nb_epochs=20, device="cuda", monitoring=1):
    logs = defaultdict(list)
    for epoch in range(nb_epochs):
        model.train()
        for batch in dataloader:
            x = batch.to(device, non_blocking=True)
            optimizer.zero_grad()
            z_pre, z, x_hat = model(x)
            loss = criterion(x, x_hat, z_pre, z, model.get_dictionary())
            loss.backward()
            optimizer.step()
            _log_metrics(monitoring, logs, model, z, loss, optimizer)
    return logs
