# Fixed twin of case 01: empty self.report on non-master ranks too before returning from flush_report (and detach the batch report), as merged in PR #939
# Thread: https://github.com/facebookresearch/mmf/pull/939
# Reported: a memory leak in the test reporter during prediction runs (stated in the maintainer's PR, no separate user issue with numbers): on processes other than master the data collected by the reporter was never flushed, so it grew with every batch/dataset predicted
# Confirmed cause: the maintainer's fix (PR #939, commit 44ae4715, "Memory leak in test reporter"): processors other than master now also add to the report, but TestReporter.flush_report returned early on non-master ranks before resetting self.report, so the gathered prediction results (tensors gathered from all ranks) kept accumulating in every non-master process; the fix empties self.report on those ranks too (and detaches the batch Report in the prediction loop)
# Class: reporting/tracking object keeps the results it is handed and is flushed on one rank only
import json
import os

import torch
import torch.distributed as dist

from mmf_stub import Report, convert_batch_to_sample_list, gather_tensor, to_device

CANDIDATE_FIELDS = ["id", "question_id", "image_id", "captions", "scores"]


def is_master():
    return not dist.is_initialized() or dist.get_rank() == 0


class TestReporter:
    def __init__(self, datamodules, report_folder, dataset_type="test"):
        self.datamodules = datamodules
        self.dataset_names = list(datamodules.keys())
        self.dataset_type = dataset_type
        self.report_folder = report_folder
        self.report = []
        self.current_datamodule_idx = -1
        self.current_datamodule = None
        self.current_dataloader = None

    def next_dataset(self, flush_report=True):
        if self.current_datamodule_idx >= 0:
            if flush_report:
                self.flush_report()
            else:
                self.report = []
        self.current_datamodule_idx += 1
        if self.current_datamodule_idx == len(self.datamodules):
            return False
        self.current_datamodule = self.datamodules[self.dataset_names[self.current_datamodule_idx]]
        return True

    def flush_report(self):
        if not is_master():
            # empty the report in all processes to avoid any leaks
            self.report = []
            return
        name = self.current_datamodule.dataset_name
        filepath = os.path.join(self.report_folder, f"{name}_{self.dataset_type}.json")
        with open(filepath, "w") as f:
            json.dump(self.report, f)
        self.report = []

    def get_dataloader(self):
        self.current_dataloader = getattr(self.current_datamodule, f"{self.dataset_type}_dataloader")()
        return self.current_dataloader

    def prepare_batch(self, batch):
        batch = convert_batch_to_sample_list(batch)
        batch.dataset_name = self.current_dataloader.dataset.dataset_name
        batch.dataset_type = self.dataset_type
        return batch

    def reshape_and_gather(self, report, key):
        if key in report:
            if report[key].dim() == 1:
                report[key] = gather_tensor(report[key]).view(-1)
            else:
                gathered = gather_tensor(report[key])
                report[key] = gathered.view(-1, *gathered.shape[2:])
        return report

    def add_to_report(self, report, model):
        # every process gathers the candidate fields of all processes
        for key in CANDIDATE_FIELDS:
            report = self.reshape_and_gather(report, key)
        results = self.current_dataloader.dataset.format_for_prediction(report)
        if hasattr(model, "format_for_prediction"):
            results = model.format_for_prediction(results, report)
        self.report = self.report + results


def prediction_loop(model, reporter, device):
    with torch.no_grad():
        model.eval()
        while reporter.next_dataset():
            dataloader = reporter.get_dataloader()
            for batch in dataloader:
                prepared_batch = to_device(reporter.prepare_batch(batch), device)
                model_output = model(prepared_batch)
                report = Report(prepared_batch, model_output)
                reporter.add_to_report(report, model)
                report.detach()
        model.train()
