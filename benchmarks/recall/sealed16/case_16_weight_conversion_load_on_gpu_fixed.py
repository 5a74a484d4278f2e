# Fixed twin of case 16: load the converted weights with map_location='cpu' and move the model back to its device afterwards
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
    pt_model.to("cpu")
    pt_model.load_state_dict(torch.load(path, map_location="cpu"))
    pt_model.to(device)
    return pt_model
