# Fixed twin of case 02: at the end of train(), move the model to the CPU, delete the reference, run gc.collect() and torch.cuda.empty_cache(), as merged in the PR
# Thread: https://github.com/ogx-ai/ogx/pull/770
# Reported: in the long-running post-training provider, GPU memory stays occupied after a fine-tuning job finishes (more than 6 GB still held after training a Llama 3.2 3B model), so later jobs and other work in the same server start from a GPU that is already partly full
# Confirmed cause: the maintainers' merged PR ("Free up memory after post training finishes") attributes it to the recipe's model reference outliving training; it explicitly moves the model to the CPU, deletes the reference, runs gc.collect() and torch.cuda.empty_cache() at the end of train(), and measured ~1 GB in use afterwards instead of >6 GB
# Class: object lifetime: model built per task/job stays referenced (on the device) after the job is done
import gc
import logging
import time
from typing import Any, Dict, List, Tuple

import torch
from torch import nn
from torch.optim import AdamW

log = logging.getLogger(__name__)


class LoraFinetuningSingleDevice:
    def __init__(self, config, job_uuid, training_config, model_builder, datasetio_api):
        self.job_uuid = job_uuid
        self.training_config = training_config
        self.model_builder = model_builder
        self.datasetio_api = datasetio_api
        self._device = torch.device("cuda")
        self.total_epochs = training_config.n_epochs
        self.max_steps_per_epoch = training_config.max_steps_per_epoch
        self.epochs_run = 0

    async def setup(self) -> None:
        base_state_dict = torch.load(self.training_config.checkpoint_path, map_location="cpu")
        self._model = await self._setup_model(base_state_dict)
        self._optimizer = AdamW(
            [p for p in self._model.parameters() if p.requires_grad],
            lr=self.training_config.lr,
        )
        self._loss_fn = nn.CrossEntropyLoss(ignore_index=-100)
        self._dataloader = await self._setup_data()

    async def _setup_model(self, base_state_dict) -> nn.Module:
        model = self.model_builder()
        model.load_state_dict(base_state_dict, strict=False)
        return model.to(self._device)

    async def _setup_data(self):
        rows = await self.datasetio_api.get_rows_paginated(self.training_config.dataset_id)
        return rows

    async def _loss_step(self, batch: Dict[str, torch.Tensor]) -> torch.Tensor:
        labels = batch.pop("labels")
        logits = self._model(**batch)
        return self._loss_fn(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))

    async def save_checkpoint(self, epoch: int) -> str:
        state_dict = {k: v.cpu() for k, v in self._model.state_dict().items()}
        path = f"{self.training_config.output_dir}/{self.job_uuid}_epoch{epoch}.pt"
        torch.save(state_dict, path)
        return path

    async def train(self) -> Tuple[Dict[str, Any], List[str]]:
        self._optimizer.zero_grad()
        t0 = time.perf_counter()
        memory_stats = {}
        checkpoints = []
        for curr_epoch in range(self.epochs_run, self.total_epochs):
            for idx, batch in enumerate(self._dataloader):
                if idx >= self.max_steps_per_epoch:
                    break
                batch = {k: v.to(self._device) for k, v in batch.items()}
                loss = await self._loss_step(batch)
                loss.backward()
                self._optimizer.step()
                self._optimizer.zero_grad(set_to_none=True)
                log.info("epoch %d step %d loss %.4f", curr_epoch, idx, loss.item())
            memory_stats = {"peak_allocated": torch.cuda.max_memory_allocated()}
            self.epochs_run += 1
            checkpoints.append(await self.save_checkpoint(epoch=curr_epoch))
        log.info("training took %.1fs", time.perf_counter() - t0)
        # clean up the memory after training finishes
        self._model.to("cpu")
        del self._model
        gc.collect()
        torch.cuda.empty_cache()
        return (memory_stats, checkpoints)


class TorchtunePostTrainingImpl:
    def __init__(self, config, datasetio_api, model_builder):
        self.config = config
        self.datasetio_api = datasetio_api
        self.model_builder = model_builder
        self.jobs_status = {}
        self.checkpoints_dict = {}

    async def supervised_fine_tune(self, job_uuid, training_config):
        recipe = LoraFinetuningSingleDevice(
            self.config, job_uuid, training_config, self.model_builder, self.datasetio_api
        )
        await recipe.setup()
        resources_allocated, checkpoints = await recipe.train()
        self.checkpoints_dict[job_uuid] = checkpoints
        self.jobs_status[job_uuid] = {"status": "completed", "resources_allocated": resources_allocated}
        return job_uuid
