# Fixed twin of case 02: training_forward transfers a shallow copy of the split, so the splits list keeps only CPU tensors
# Thread: https://github.com/Lightning-AI/pytorch-lightning/pull/532
# Reported: with truncated_bptt_steps > 1 on a single GPU, GPU memory keeps accumulating over the segments of a batch
# Confirmed cause: each tbptt split is moved to the GPU in place inside the list returned by tbptt_split_batch, so the splits list keeps every GPU copy alive after training_step returns, until the whole batch is done; the merged fix passes a local copy of the split to the transfer so the GPU tensors go out of scope after each segment (maintainer: good catch)
# Class: container keeps device copies of already-processed batch segments
import copy

import torch


class Trainer:
    def __init__(self, model, truncated_bptt_steps, root_gpu=0):
        self.model = model
        self.truncated_bptt_steps = truncated_bptt_steps
        self.root_gpu = root_gpu
        self.hiddens = None

    def transfer_batch_to_gpu(self, batch, gpu_id):
        if isinstance(batch, torch.Tensor):
            return batch.cuda(gpu_id)
        if isinstance(batch, list):
            for i, x in enumerate(batch):
                batch[i] = self.transfer_batch_to_gpu(x, gpu_id)
            return batch
        return batch

    def training_forward(self, batch, batch_idx, opt_idx, hiddens):
        batch = self.transfer_batch_to_gpu(copy.copy(batch), self.root_gpu)
        return self.model.training_step(batch, batch_idx, hiddens)

    def run_training_batch(self, batch, batch_idx, optimizer):
        splits = self.model.tbptt_split_batch(batch, self.truncated_bptt_steps)
        for split_idx, split_batch in enumerate(splits):
            output = self.training_forward(split_batch, batch_idx, 0, self.hiddens)
            loss = output["loss"]
            self.hiddens = output["hiddens"].detach()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
