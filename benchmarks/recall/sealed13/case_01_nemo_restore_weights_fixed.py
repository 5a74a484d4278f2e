# Fixed twin of case 01: torch.load maps the checkpoint to CPU (map_location="cpu") before load_state_dict copies it into the GPU module
# Thread: https://github.com/NVIDIA-NeMo/Speech/pull/1483
# Reported: benchmarking Megatron-BERT, the main process held a large block of CUDA memory that was only the loaded state dict
# Confirmed cause: torch.load(restore_path) restores tensors onto the device they were saved from (cuda), doubling weight memory; merged fix loads with map_location='cpu' (reviewer asked for the 'cpu' form)
# Class: torch.load of a GPU-saved checkpoint without map_location before load_state_dict
import os
import logging

import torch
import torch.nn as nn

logging.basicConfig(level=logging.INFO)


class MegatronBertEncoder(nn.Module):
    def __init__(self, vocab_size=30522, hidden=1024, layers=24, heads=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        layer = nn.TransformerEncoderLayer(hidden, heads, 4 * hidden, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self._restore_path = None

    def forward(self, input_ids):
        return self.encoder(self.embed(input_ids))

    def restore_weights(self, restore_path: str):
        """Restore module weights from a single (non model-parallel) checkpoint file."""
        self._restore_path = restore_path
        if os.path.isfile(restore_path):
            logging.info(f"restore_path: {restore_path} is a file, assuming no model parallelism")
            state_dict = torch.load(restore_path, map_location="cpu")
            if "model" in state_dict:
                state_dict = state_dict["model"]
            self.load_state_dict(state_dict, strict=False)
            logging.info(f"weights restored from {restore_path}")
        else:
            raise ValueError(f"restore_path {restore_path} not found")


def build_encoder(restore_path, device="cuda"):
    model = MegatronBertEncoder().to(device)
    model.restore_weights(restore_path)
    model.eval()
    return model


if __name__ == "__main__":
    enc = build_encoder("megatron_bert_345m.pt")
    ids = torch.randint(0, 30522, (8, 128), device="cuda")
    with torch.no_grad():
        out = enc(ids)
    logging.info(f"allocated after restore: {torch.cuda.memory_allocated() / 2**20:.0f} MiB")
