# Fixed twin of case 13: the best weights go to disk and are reloaded at the end; evaluation
#   runs with grad disabled.
# Thread: https://github.com/facebookresearch/pytext/pull/204
# Class: a second copy of the model kept on the device (best weights), plus eval with grad on
import torch


class Trainer:
    def __init__(self, epochs, report_every=100):
        self.epochs = epochs
        self.report_every = report_every

    def run_epoch(self, model, data_iter, optimizer=None, metric_reporter=None):
        training = optimizer is not None
        model.train(training)
        for batch_id, (inputs, targets, context) in enumerate(data_iter):
            with torch.set_grad_enabled(training):
                logits = model(*inputs)
                loss = model.get_loss(logits, targets, context)
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            metric_reporter.add_batch_stats(batch_id, logits.detach(), targets, loss.item())
        return metric_reporter.report_metric(stage="train" if training else "eval")

    def train(self, train_iter, eval_iter, model, optimizer, metric_reporter,
              best_model_path="best_model.pt"):
        best_metric = None
        saved_best = False
        for epoch in range(1, self.epochs + 1):
            self.run_epoch(model, train_iter, optimizer, metric_reporter)
            eval_metric = self.run_epoch(model, eval_iter, None, metric_reporter)
            if best_metric is None or metric_reporter.compare_metric(eval_metric, best_metric):
                best_metric = eval_metric
                torch.save(model.state_dict(), best_model_path)
                saved_best = True
        if saved_best:
            model.load_state_dict(torch.load(best_model_path, map_location="cpu"))
        return model, best_metric
