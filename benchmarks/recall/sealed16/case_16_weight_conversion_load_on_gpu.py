# Recall case 16 (sealed16): weight-conversion helper reloads the converted state dict with torch.load onto the GPU it was saved from
# Thread: https://github.com/DavidLandup0/deepvision/pull/81
# Reported: converting/loading PyTorch-based networks directly on the GPU sometimes throws CUDA OOM on some devices
# Confirmed cause: the merged PR (citing the PyTorch forum thread on OOM when resuming): the weights are now saved and loaded back mapped to the CPU and only then pushed to the model's device, instead of being deserialized straight onto the GPU next to the live model
# Class: torch.load without map_location materialises a second copy of the weights on the GPU
import os
import tempfile

import torch


def convert_weights(tf_model, pt_model, mapping):
    device = next(pt_model.parameters()).device
    state = pt_model.state_dict()
    for pt_name, tf_name in mapping.items():
        value = torch.from_numpy(tf_model.get_layer(tf_name).get_weights()[0])
        state[pt_name] = value.to(device)
    path = os.path.join(tempfile.gettempdir(), "converted.pt")
    torch.save(state, path)
    pt_model.load_state_dict(torch.load(path))  # leak: ANY
    return pt_model
