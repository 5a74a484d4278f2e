# Recall case 02 (sealed25): per-micro-batch training report (losses and outputs with their graph) merged into the update's combined report
# Thread: https://github.com/facebookresearch/mmf/pull/846
# Reported: a memory leak in the training loop (stated in the maintainer's PR, no separate user issue with numbers): memory held by the trainer grew because the report produced by each training batch kept its autograd history while it was accumulated and passed on for logging
# Confirmed cause: the maintainer's fix (PR #846, commit 88554958, "Fix a memory leak which is caused as first report in training loop is not detached while generating a new one"): run_training_batch returns the Report built from the batch and the model output, its losses still attached to the graph; the first report of an update becomes combined_report and later micro-batches are torch.cat-ed / += -ed into it, so the graphs of every micro-batch stay reachable from the combined report that is kept for the meter and the callbacks; the fix detaches each report right after run_training_batch (Report.detach added)
# Class: loss/output dict returned per micro-batch and accumulated without detach
from collections import OrderedDict

import torch

from mmf_stub import clip_gradients, to_device


class Report(OrderedDict):
    def __init__(self, batch, model_output=None):
        super().__init__()
        model_output = model_output or {}
        self.batch_size = batch.get_batch_size()
        for arg in (batch, model_output):
            for key, item in arg.items():
                self[key] = item

    def __setattr__(self, key, value):
        self[key] = value

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key)

    def accumulate_tensor_fields_and_loss(self, report, field_list):
        for key in field_list:
            if key in self and isinstance(self[key], torch.Tensor):
                self[key] = torch.cat((self[key], report[key]), dim=0)
        for key, value in report.losses.items():
            if key in self.losses and isinstance(self.losses[key], torch.Tensor):
                self.losses[key] += value


class TrainerTrainingLoopMixin:
    def training_loop(self):
        should_start_update = True
        for idx, batch in enumerate(self.train_loader):
            if should_start_update:
                combined_report = None
                self.optimizer.zero_grad()
                num_batches_for_this_update = self.training_config.update_frequency
                should_start_update = False

            report = self.run_training_batch(batch, num_batches_for_this_update)  # leak: ANY

            # accumulate necessary params (including loss) for metric calculation
            if combined_report is None:
                combined_report = report  # leak: ANY
            else:
                combined_report.accumulate_tensor_fields_and_loss(report, self.metrics.required_params)
                combined_report.batch_size += report.batch_size

            self.on_batch_end(report=combined_report, meter=self.meter)

            if (idx + 1) % self.training_config.update_frequency:
                continue

            self._finish_update()
            should_start_update = True
            if self.num_updates % self.log_interval == 0:
                combined_report.metrics = self.metrics(combined_report, combined_report)
                self.meter.update_from_report(combined_report)
            self.on_update_end(report=combined_report, meter=self.meter)

    def run_training_batch(self, batch, loss_divisor):
        prepared_batch = to_device(batch, self.device)
        with torch.cuda.amp.autocast(enabled=self.training_config.fp16):
            model_output = self.model(prepared_batch)
            report = Report(prepared_batch, model_output)
        for key, value in report.losses.items():
            report.losses[key] = value.mean() / loss_divisor
        loss = sum(report.losses.values())
        self.scaler.scale(loss).backward()
        return report

    def _finish_update(self):
        if self.training_config.clip_gradients:
            clip_gradients(self.model, self.optimizer, self.num_updates)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.num_updates += 1
