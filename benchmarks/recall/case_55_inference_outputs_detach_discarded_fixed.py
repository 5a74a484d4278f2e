# Fixed twin of case 55: the detached host copy is kept instead of the device output.
# Thread: https://github.com/MDIL-SNU/SevenNet/issues/187
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
        output = output.detach().to("cpu")
        recorder.update(output)
        output_list.extend(to_atom_graph_list(output))

    errors = recorder.epoch_forward()
    return output_list, errors
