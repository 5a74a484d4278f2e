# Recall case 55: inference that needs autograd (forces) keeps every batch's output on the GPU
# Thread: https://github.com/MDIL-SNU/SevenNet/issues/187
# Reported: `sevenn_inference` over a large set of structures leaks GPU memory.
# Confirmed cause: the maintainer: "Can be solved with `.detach().cpu()`" (fixed in PR #199).
#   Forces are gradients of the energy, so the loop runs with grad enabled; each batch's output
#   (still on the device, still holding its graph) is unrolled into `output_list` for the whole
#   run. The line meant to move it, `output.detach().to('cpu')`, discards its result.
# Class: predict loop keeps per-batch outputs (with their graph) on the device
import torch
from tqdm import tqdm

KEY_EDGE_VEC = "edge_vec"


def to_atom_graph_list(batch_output):
    return batch_output.to_data_list()


def inference_main(model, loader, recorder, device="cuda"):
    model.to(device)
    model.set_is_batch_data(True)
    model.eval()

    output_list = []
    for batch in tqdm(loader):
        batch = batch.to(device, non_blocking=True)
        batch[KEY_EDGE_VEC].requires_grad_(True)
        output = model(batch)
        output.detach().to("cpu")  # leak: ANY
        recorder.update(output)
        output_list.extend(to_atom_graph_list(output))  # leak: ANY

    errors = recorder.epoch_forward()
    return output_list, errors
