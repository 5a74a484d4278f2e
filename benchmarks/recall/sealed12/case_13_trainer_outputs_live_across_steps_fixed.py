# Fixed twin of case 13: outputs and loss_dict are deleted at the end of each loop iteration, before the next train_step
# Thread: https://github.com/coqui-ai/Trainer/pull/104
# Reported: training OverFlow crashed with CUDA OOM after ~9k steps although the dataset is ~300 batches (2 MB allocation failing with 12 GB allocated); described on the PyTorch forums
# Confirmed cause: in train_epoch the outputs returned by train_step (model outputs with their graph-referenced tensors) stay bound until the next train_step returns, doubling peak memory; the PR author reports freeing them as soon as possible fixed the crash (PR open, not merged — medium/weak)
# Class: loop variable holding last step's model outputs while the next step runs (free too late)
import time

import torch


class Trainer:
    def __init__(self, model, optimizer, criterion, train_loader, device="cuda"):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.criterion = criterion
        self.train_loader = train_loader
        self.device = device
        self.total_steps_done = 0
        self.keep_avg_train = {}

    def train_step(self, batch, batch_n_steps, step, loader_start_time):
        x, y = (t.to(self.device) for t in batch)
        outputs = self.model(x)
        loss_dict = self.criterion(outputs, y)
        self.optimizer.zero_grad()
        loss_dict["loss"].backward()
        self.optimizer.step()
        return outputs, loss_dict

    def update_averages(self, loss_dict):
        for k, v in loss_dict.items():
            self.keep_avg_train[k] = 0.98 * self.keep_avg_train.get(k, float(v)) + 0.02 * float(v)

    def train_epoch(self):
        self.model.train()
        batch_num_steps = len(self.train_loader)
        loader_start_time = time.time()
        for cur_step, batch in enumerate(self.train_loader):
            outputs, loss_dict = self.train_step(batch, batch_num_steps, cur_step, loader_start_time)
            if outputs is None:
                print(" [!] `train_step()` retuned `None` outputs. Skipping training step.")
                continue
            self.update_averages(loss_dict)
            self.total_steps_done += 1
            del outputs, loss_dict
            loader_start_time = time.time()
