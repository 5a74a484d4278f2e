# Recall case 13 (sealed): the trainer keeps a GPU copy of the best model's weights, and
#   evaluates with autograd on
# Thread: https://github.com/facebookresearch/pytext/pull/204
# Reported: training larger models runs out of GPU memory although a training step alone fits.
# Confirmed cause: the maintainers' PR ("GPU OOM optimizations - use torch.no_grad() and save
#   best model to disk"): "We save the state_dict of the current best model in memory, which
#   takes up space. The fix is to save to disk and reload", and "Eval takes unnecessary memory
#   because we're not using the torch.no_grad() context".
# Class: a second copy of the model kept on the device (best weights), plus eval with grad on
import copy

import torch


class Trainer:
    def __init__(self, epochs, report_every=100):
        self.epochs = epochs
        self.report_every = report_every

    def run_epoch(self, model, data_iter, optimizer=None, metric_reporter=None):
        training = optimizer is not None
        model.train(training)
        for batch_id, (inputs, targets, context) in enumerate(data_iter):
            logits = model(*inputs)  # leak: ANY
            loss = model.get_loss(logits, targets, context)
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            metric_reporter.add_batch_stats(batch_id, logits.detach(), targets, loss.item())
        return metric_reporter.report_metric(stage="train" if training else "eval")

    def train(self, train_iter, eval_iter, model, optimizer, metric_reporter):
        best_metric = None
        best_model_state = None
        for epoch in range(1, self.epochs + 1):
            self.run_epoch(model, train_iter, optimizer, metric_reporter)
            eval_metric = self.run_epoch(model, eval_iter, None, metric_reporter)
            if best_metric is None or metric_reporter.compare_metric(eval_metric, best_metric):
                best_metric = eval_metric
                best_model_state = copy.deepcopy(model.state_dict())  # leak: ANY
        if best_model_state is not None:
            model.load_state_dict(best_model_state)
        return model, best_metric
