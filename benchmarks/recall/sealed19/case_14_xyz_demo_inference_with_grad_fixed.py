# Fixed twin of case 14: each model call in the demo is wrapped in torch.no_grad()
# Thread: https://github.com/mahmoudnafifi/CIE_XYZ_NET/issues/2
# Reported: running the PyTorch demo on larger images uses unnecessary (GPU) memory
# Confirmed cause: the demo calls the model (forward, forward_srgb2xyz, forward_xyz2srgb) without torch.no_grad(), so the activations of each full-size image are kept for a backward pass that never runs; the author said the no_grad was only in the unreleased evaluation code and updated the demos to wrap each model call in torch.no_grad()
# Class: inference without no_grad
import os

import cv2
import numpy as np
import torch


def from_image_to_tensor(img):
    img = img[:, :, ::-1].astype(np.float32) / 255.0
    return torch.from_numpy(img.copy()).permute(2, 0, 1).unsqueeze(0)


def from_tensor_to_image(tensor):
    return tensor.squeeze(0).permute(1, 2, 0).detach().cpu().numpy()[:, :, ::-1]


def out_of_gamut_clipping(img):
    return np.clip(img, 0.0, 1.0)


def run_demo(ciexyzNet, imgfiles, task, out_dir, device):
    ciexyzNet.eval()
    for filename in imgfiles:
        in_img = cv2.imread(filename)
        if in_img is None:
            raise Exception("Image not found!")
        in_img_tensor = from_image_to_tensor(in_img).to(device=device, dtype=torch.float32)
        name = os.path.splitext(os.path.basename(filename))[0]

        if task == "srgb-2-xyz-2-srgb":
            with torch.no_grad():
                output_XYZ, output_sRGB = ciexyzNet(in_img_tensor)
            output_XYZ = out_of_gamut_clipping(from_tensor_to_image(output_XYZ))
            output_sRGB = out_of_gamut_clipping(from_tensor_to_image(output_sRGB))
            cv2.imwrite(os.path.join(out_dir, name + "_XYZ_reconstructed.png"), (output_XYZ * 65535).astype(np.uint16))
            cv2.imwrite(os.path.join(out_dir, name + "_sRGB_re-rendered.png"), (output_sRGB * 255).astype(np.uint8))
        elif task == "srgb-2-xyz":
            with torch.no_grad():
                output_XYZ = ciexyzNet.forward_srgb2xyz(in_img_tensor)
            output_XYZ = out_of_gamut_clipping(from_tensor_to_image(output_XYZ))
            cv2.imwrite(os.path.join(out_dir, name + "_XYZ_reconstructed.png"), (output_XYZ * 65535).astype(np.uint16))
        else:
            with torch.no_grad():
                output_sRGB = ciexyzNet.forward_xyz2srgb(in_img_tensor)
            output_sRGB = out_of_gamut_clipping(from_tensor_to_image(output_sRGB))
            cv2.imwrite(os.path.join(out_dir, name + "_sRGB_re-rendered.png"), (output_sRGB * 255).astype(np.uint8))
