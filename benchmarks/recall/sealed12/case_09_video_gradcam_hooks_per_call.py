# Recall case 09 (sealed12): grad_cam() registers a forward and a backward hook on the observed layer on every call and never removes them
# Thread: https://github.com/shinkyo0513/Towards-Visually-Explaining-Video-Understanding-Networks-With-Perturbation/issues/10
# Reported: running grad_cam many times in main.py: hooks get registered again on every call and the stored activation is stale
# Confirmed cause: register_forward_hook / register_full_backward_hook were called inside grad_cam() for every batch without keeping/removing the handles, so hooks pile up on the model; reported with corrected code by the user, issue closed
# Class: module hooks registered inside a per-batch function, handles discarded (never removed)
import torch
import torch.nn.functional as F

observ_grad_ = None
observ_actv_ = None


def backward_hook(m, i_grad, o_grad):
    global observ_grad_
    observ_grad_ = o_grad[0]


def forward_hook(m, i, o):
    global observ_actv_
    observ_actv_ = o


def grad_cam(inputs, labels, model, device, layer_name, norm_vis=True):
    model.eval()
    bs, ch, nt, h, w = inputs.shape
    observ_layer = model
    for name in layer_name.split("."):
        observ_layer = getattr(observ_layer, name)
    observ_layer.register_forward_hook(forward_hook)  # leak: ANY
    observ_layer.register_full_backward_hook(backward_hook)  # leak: ANY

    inputs = inputs.to(device).requires_grad_()
    model.zero_grad()
    outputs = model(inputs)
    onehot = torch.zeros_like(outputs)
    onehot[torch.arange(bs), labels] = 1.0
    outputs.backward(gradient=onehot)

    weights = observ_grad_.mean(dim=(2, 3, 4), keepdim=True)
    cam = F.relu((weights * observ_actv_).sum(dim=1, keepdim=True))
    cam = F.interpolate(cam, size=(nt, h, w), mode="trilinear", align_corners=False)
    if norm_vis:
        flat = cam.view(bs, -1)
        cam = ((flat - flat.min(1, keepdim=True)[0]) /
               (flat.max(1, keepdim=True)[0] - flat.min(1, keepdim=True)[0] + 1e-8)).view_as(cam)
    return cam.detach().cpu()


def visualize_dataset(model, loader, device="cuda", layer_name="layer4"):
    maps = []
    for inputs, labels in loader:
        maps.append(grad_cam(inputs, labels, model, device, layer_name))
    return maps
