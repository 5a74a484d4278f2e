# Fixed twin of case 03: load_accelerator_state loads the model and optimizer state dicts with map_location="cpu"
# Thread: https://github.com/huggingface/accelerate/pull/299
# Reported: resuming with --num_processes 4 used 66 GB on the first GPU and 20 GB on the others; with 8 processes it crashed (issue #296)
# Confirmed cause: save_state runs on process 0 only, so the saved tensors are tagged cuda:0; torch.load without map_location in every process materialises them on GPU 0. Merged PR by the maintainer loads them on CPU first
# Class: checkpoint loaded by every rank without map_location (all copies land on the saving device)
import os

import torch
import torch.nn as nn
from accelerate import Accelerator

MODEL_NAME = "pytorch_model.bin"
OPTIMIZER_NAME = "optimizer.bin"


def load_accelerator_state(input_dir, models, optimizers, process_index):
    for i, model in enumerate(models):
        weights_name = f"{MODEL_NAME}" if i == 0 else f"{MODEL_NAME[:-4]}_{i}.bin"
        input_model_file = os.path.join(input_dir, weights_name)
        models[i].load_state_dict(torch.load(input_model_file, map_location="cpu"))
    for i, opt in enumerate(optimizers):
        optimizer_name = f"{OPTIMIZER_NAME}" if i == 0 else f"{OPTIMIZER_NAME[:-4]}_{i}.bin"
        input_optimizer_file = os.path.join(input_dir, optimizer_name)
        optimizers[i].load_state_dict(torch.load(input_optimizer_file, map_location="cpu"))
    print(f"process {process_index}: state loaded")


def main(save_dir="ckpt"):
    accelerator = Accelerator()
    model = nn.Sequential(nn.Linear(4096, 4096), nn.GELU(), nn.Linear(4096, 4096))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, optimizer = accelerator.prepare(model, optimizer)
    if os.path.isdir(save_dir):
        load_accelerator_state(save_dir, [accelerator.unwrap_model(model)], [optimizer],
                               accelerator.process_index)
    for step in range(1000):
        x = torch.randn(16, 4096, device=accelerator.device)
        loss = model(x).pow(2).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
