# Fixed twin of case 01: break the load -> load reference cycle once the recursion is done (pytorch/pytorch#20397)
import torch
from torch import nn


def load_state_dict(model, state_dict):
    """Copy `state_dict` into `model` module by module, like nn.Module.load_state_dict."""
    state_dict = dict(state_dict)  # shallow copy so the caller's dict is left alone
    missing_keys = []

    def load(module, prefix=""):
        for name, tensor in list(module._parameters.items()) + list(module._buffers.items()):
            if tensor is None:
                continue
            key = prefix + name
            if key not in state_dict:
                missing_keys.append(key)
                continue
            with torch.no_grad():
                tensor.copy_(state_dict[key])
        for child_name, child in module._modules.items():
            if child is not None:
                load(child, prefix + child_name + ".")

    load(model)
    load = None  # break the load -> load reference cycle so the copied tensors die now
    return missing_keys


def main():
    blstm = nn.LSTM(1024, 1024, bidirectional=True).cuda()
    fake_input = torch.empty(10, 10, 1024, device="cuda").uniform_()
    for step in range(10000):
        with torch.no_grad():
            output, _ = blstm(fake_input)
        # re-sync the weights from a snapshot each step (e.g. from a target network)
        snapshot = {k: v.clone() for k, v in blstm.state_dict().items()}
        load_state_dict(blstm, snapshot)
        if step % 100 == 0:
            print(step, torch.cuda.memory_allocated() / 2**20, "MiB")


if __name__ == "__main__":
    main()
