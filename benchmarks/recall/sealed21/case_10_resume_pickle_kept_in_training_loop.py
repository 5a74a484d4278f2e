# Recall case 10 (sealed21): GAN training loop unpickles the resume checkpoint onto the GPU and keeps it in a local for the whole run
# Thread: https://github.com/autonomousvision/projected-gan/pull/47
# Reported: training fits on a single 8 GB GPU from scratch, but resuming from a snapshot runs out of CUDA memory (the checkpoint pickle wastes over 1 GB); see also issue #45 (resume always OOMs at a batch size that trains fine)
# Confirmed cause: the loaded snapshot dict (G, D, G_ema and progress tensors, restored on the device they were saved from) stays referenced by resume_data for the rest of training_loop; the merged PR deletes it after its values are copied into the live networks (the maintainer had also switched unpickling of tensors to map_location='cpu' the day before)
# Class: checkpoint loaded onto the GPU and kept alive after use
import copy
import pickle

import torch


class SnapshotUnpickler(pickle.Unpickler):
    # tensors inside the pickle are restored on the CUDA device they were saved from
    pass


def load_network_pkl(f):
    data = SnapshotUnpickler(f).load()
    for key in ("G", "D", "G_ema"):
        assert isinstance(data[key], torch.nn.Module)
    return data


def copy_params_and_buffers(src_module, dst_module):
    src = dict(src_module.named_parameters())
    src.update(dict(src_module.named_buffers()))
    for name, tensor in list(dst_module.named_parameters()) + list(dst_module.named_buffers()):
        if name in src:
            tensor.copy_(src[name].detach()).requires_grad_(tensor.requires_grad)


def training_loop(G, D, loader, phases, resume_pkl=None, rank=0, total_kimg=25000, batch_size=8):
    device = torch.device("cuda", rank)
    cur_nimg = torch.tensor(0, dtype=torch.long, device=device)
    G = G.train().requires_grad_(False).to(device)
    D = D.train().requires_grad_(False).to(device)
    G_ema = copy.deepcopy(G).eval()

    if resume_pkl is not None and rank == 0:
        with open(resume_pkl, "rb") as f:
            resume_data = load_network_pkl(f)  # leak: ANY
        for name, module in [("G", G), ("D", D), ("G_ema", G_ema)]:
            with torch.no_grad():
                copy_params_and_buffers(resume_data[name], module)
        cur_nimg = resume_data["progress"]["cur_nimg"].to(device)  # leak: ANY

    data_iter = iter(loader)
    while cur_nimg.item() < total_kimg * 1000:
        real_img, real_c = next(data_iter)
        real_img = real_img.to(device).to(torch.float32) / 127.5 - 1
        for phase in phases:
            phase.opt.zero_grad(set_to_none=True)
            phase.module.requires_grad_(True)
            loss = phase.loss(G, D, real_img, real_c.to(device))
            loss.backward()
            phase.module.requires_grad_(False)
            phase.opt.step()
        with torch.no_grad():
            for p_ema, p in zip(G_ema.parameters(), G.parameters()):
                p_ema.copy_(p.lerp(p_ema, 0.999))
        cur_nimg += batch_size
    return G_ema
