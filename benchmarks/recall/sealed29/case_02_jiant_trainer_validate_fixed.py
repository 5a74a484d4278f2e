# Thread: https://github.com/nyu-mll/jiant/pull/718
# Reported: evaluation inside the trainer's validation pass keeps intermediate state for
#   every forward, costing extra memory and time during eval-mode computation.
# Confirmed cause: the validation loop ran the model with autograd enabled (model.eval() only
#   changes dropout/batch-norm); the merged pull request wraps the evaluation forward in
#   torch.no_grad() "This stops storing intermediate state during eval-mode computations,
#   which saves some time/memory".
# Class: evaluation run with grad enabled
import torch


class SamplingMultiTaskTrainer:
    def __init__(self, model, val_iterators, cuda_device=0):
        self._model = model
        self._val_iterators = val_iterators
        self._cuda_device = cuda_device

    def _calculate_validation_performance(self, task, n_examples_overall):
        self._model.eval()
        all_val_metrics = {"%s_loss" % task.name: 0.0}
        n_batches = 0
        for batch in self._val_iterators[task.name]:
            batch = {k: v.cuda(self._cuda_device) for k, v in batch.items()}
            with torch.no_grad():
                out = self._model.forward(task, batch)
            all_val_metrics["%s_loss" % task.name] += out["loss"].item()
            n_examples_overall += out["n_exs"]
            n_batches += 1
        all_val_metrics["%s_loss" % task.name] /= max(n_batches, 1)
        task_metrics = task.get_metrics(reset=True)
        all_val_metrics.update(task_metrics)
        return n_examples_overall, all_val_metrics

    def _validate(self, epoch, tasks):
        n_examples_overall = 0
        all_metrics = {}
        for task in tasks:
            n_examples_overall, task_metrics = self._calculate_validation_performance(
                task, n_examples_overall)
            all_metrics.update(task_metrics)
        self._model.train()
        return all_metrics
