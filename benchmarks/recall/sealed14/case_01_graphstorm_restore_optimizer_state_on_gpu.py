# Recall case 01 (sealed14): optimizer checkpoint is unpickled straight onto the GPU it was saved from before load_state_dict copies it again
# Thread: https://github.com/awslabs/graphstorm/issues/344
# Reported: GPU OOM inside restore_model -> load_opt_state -> th.load when resuming a model trained on the same hardware
# Confirmed cause: th.load without map_location materialises the saved CUDA optimizer state on the device; maintainer's merged PR #438 loads it on CPU
# Class: torch.load of an optimizer checkpoint without map_location='cpu' while the model already occupies the GPU
import os
import torch as th
import torch.nn as nn


class GSgnnModel(nn.Module):
    def __init__(self, in_dim=768, hid=1024, n_layers=4):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(in_dim if i == 0 else hid, hid) for i in range(n_layers)])
        self.decoder = nn.Linear(hid, 40)

    def forward(self, x):
        for layer in self.layers:
            x = th.relu(layer(x))
        return self.decoder(x)


def load_opt_state(path, dense_opts, lm_opts, sparse_opts):
    """Restore optimizer states written by save_opt_state (saved from cuda:0)."""
    checkpoint = th.load(os.path.join(path, "optimizers.bin"))  # leak: ANY
    for i, opt in enumerate(dense_opts):
        opt.load_state_dict(checkpoint["dense"][i])
    for i, opt in enumerate(lm_opts):
        opt.load_state_dict(checkpoint["lm"][i])
    for i, opt in enumerate(sparse_opts):
        opt.load_state_dict(checkpoint["sparse"][i])


class GSgnnTrainer:
    def __init__(self, model, device):
        self._model = model.to(device)
        self.device = device
        self.dense_opts = [th.optim.Adam(self._model.parameters(), lr=1e-3)]
        self.lm_opts, self.sparse_opts = [], []

    def restore_model(self, model_path):
        state = th.load(os.path.join(model_path, "model.bin"), map_location="cpu")
        self._model.load_state_dict(state)
        load_opt_state(model_path, self.dense_opts, self.lm_opts, self.sparse_opts)


def main(restore_model_path):
    device = th.device("cuda:0")
    trainer = GSgnnTrainer(GSgnnModel(), device)
    trainer.restore_model(restore_model_path)


if __name__ == "__main__":
    main("/data/ogbn-arxiv-nc/models/epoch-0")
