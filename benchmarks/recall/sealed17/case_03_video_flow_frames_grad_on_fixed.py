# Fixed twin of case 03: the frame loop runs under `with torch.inference_mode():`, so no autograd buffers are kept
# Thread: https://github.com/msu-video-group/memfof/issues/5
# Reported: running the pretrained model over consecutive full-HD frame triplets goes out of memory on a 40 GB GPU, although the model is advertised to need only a few GB at 1080p
# Confirmed cause: the maintainer explained that without torch.no_grad()/torch.inference_mode() autograd keeps the intermediate buffers of the whole forward for a backward that never comes; wrapping inference in torch.inference_mode() brings memory down to the advertised figure
# Class: evaluation / inference without no_grad
import os

import numpy as np
import torch
from memfof import MEMFOF


def load_frames(video_dir):
    frames = []
    for name in sorted(os.listdir(video_dir)):
        img = np.load(os.path.join(video_dir, name))  # H x W x 3 uint8 frame
        frames.append(torch.from_numpy(img).permute(2, 0, 1).float())
    return frames


def estimate_video_flow(video_dir, out_dir, device="cuda"):
    model = MEMFOF.from_pretrained("egorchistov/optical-flow-MEMFOF-Tartan-T-TSKH").eval().to(device)
    frames = load_frames(video_dir)
    os.makedirs(out_dir, exist_ok=True)
    with torch.inference_mode():
        for i in range(1, len(frames) - 1):
            triplet = torch.stack(frames[i - 1:i + 2]).unsqueeze(0).to(device)  # [B=1, T=3, C=3, H, W]
            backward_flow, forward_flow = model(triplet)["flow"][-1].unbind(dim=1)
            np.save(os.path.join(out_dir, f"{i:06d}_fw.npy"), forward_flow[0].detach().cpu().numpy())
            np.save(os.path.join(out_dir, f"{i:06d}_bw.npy"), backward_flow[0].detach().cpu().numpy())
