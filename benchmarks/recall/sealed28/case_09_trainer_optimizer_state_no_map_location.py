# Thread: https://github.com/huggingface/transformers/pull/4403
# Reported: resuming multi-GPU (torch.distributed) training from a checkpoint folder runs out of
#   memory on GPU 0: every process puts its copy of the optimizer state on the first card.
# Confirmed cause: Trainer.train restored optimizer.pt with a bare torch.load, so the Adam state came
#   back on the device it was saved from ("cuda:0", written by the local master) in every process;
#   the merged PR passes map_location=self.args.device so each rank loads it onto its own GPU.
# Class: torch.load of a checkpoint onto the GPU it was saved from, on every DDP rank
import os

import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class Trainer:
    def __init__(self, model, args, train_dataset, data_collator):
        self.model = model
        self.args = args
        self.train_dataset = train_dataset
        self.data_collator = data_collator
        self.global_step = 0

    def get_train_dataloader(self):
        sampler = DistributedSampler(self.train_dataset) if self.args.local_rank != -1 else None
        return DataLoader(
            self.train_dataset,
            batch_size=self.args.train_batch_size,
            sampler=sampler,
            shuffle=sampler is None,
            collate_fn=self.data_collator,
        )

    def get_optimizer(self):
        no_decay = ["bias", "LayerNorm.weight"]
        grouped = [
            {"params": [p for n, p in self.model.named_parameters() if not any(nd in n for nd in no_decay)],
             "weight_decay": self.args.weight_decay},
            {"params": [p for n, p in self.model.named_parameters() if any(nd in n for nd in no_decay)],
             "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(grouped, lr=self.args.learning_rate, eps=self.args.adam_epsilon)

    def train(self, model_path=None):
        train_dataloader = self.get_train_dataloader()
        model = self.model
        model.to(self.args.device)
        optimizer = self.get_optimizer()

        # resume the optimizer from an earlier run's checkpoint folder
        if model_path is not None and os.path.isfile(os.path.join(model_path, "optimizer.pt")):
            optimizer.load_state_dict(torch.load(os.path.join(model_path, "optimizer.pt")))  # leak: ANY

        if self.args.local_rank != -1:
            model = torch.nn.parallel.DistributedDataParallel(
                model,
                device_ids=[self.args.local_rank],
                output_device=self.args.local_rank,
                find_unused_parameters=True,
            )

        model.train()
        for epoch in range(int(self.args.num_train_epochs)):
            for inputs in train_dataloader:
                inputs = {k: v.to(self.args.device) for k, v in inputs.items()}
                loss = model(**inputs)[0]
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                optimizer.step()
                model.zero_grad()
                self.global_step += 1
        return self.global_step
