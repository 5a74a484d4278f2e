# Recall case 06: the reduced loss dict merged into the meter's update dict under no_grad
# Thread: https://github.com/facebookresearch/mmf/pull/560
# Reported: GPU and CPU out-of-memory errors in long MMF training runs.
# Confirmed cause: `meter_update_dict.update(reduced_loss_dict)` stores the losses "with the
#   gradient and computation graph" in the meter; the no_grad block around it does not help,
#   the tensors were made before it (fix approved by the maintainers: store
#   `reduced_loss_dict[key].item()`).
# Class: a container of graph-carrying values copied into a long-lived meter
from collections import defaultdict, deque

import torch


class SmoothedValue:
    def __init__(self, window_size=20):
        self.deque = deque(maxlen=window_size)
        self.total = 0.0
        self.count = 0

    def update(self, value, batch_size):
        self.deque.append(value * batch_size)
        self.count += batch_size
        self.total += value * batch_size


class Meter:
    def __init__(self):
        self.meters = defaultdict(SmoothedValue)

    def update(self, update_dict, batch_size):
        for key, value in update_dict.items():
            self.meters[key].update(value, batch_size)


def reduce_dict(dictionary):
    # single process: nothing to all-reduce
    return dictionary


class TrainerReportingMixin:
    def update_meter(self, report, meter=None, eval_mode=False):
        if meter is None:
            meter = self.meter
        if not eval_mode:
            loss_dict = report.losses
            reduced_loss_dict = reduce_dict(loss_dict)
        with torch.no_grad():
            meter_update_dict = {}
            if not eval_mode:
                total_loss_key = report.dataset_type + "/total_loss"
                reduced_loss = sum(loss.mean() for loss in reduced_loss_dict.values())
                meter_update_dict.update({total_loss_key: reduced_loss})
                meter_update_dict.update(reduced_loss_dict)  # leak: ML101
            meter.update(meter_update_dict, report.batch_size)

    def run_training_epoch(self):
        self.meter = Meter()
        for batch in self.train_loader:
            self.optimizer.zero_grad(set_to_none=True)
            report = self.model(batch)
            loss = sum(loss.mean() for loss in report.losses.values())
            loss.backward()
            self.optimizer.step()
            self.update_meter(report)
