# Recall case 63: a LambdaLR subclass hands its own bound method to the base class
# Thread: https://github.com/huggingface/transformers/issues/1134
# Reported: fine-tuning BERT in a k-fold cross-validation loop, GPU memory is not released
#   between folds even after deleting the model and optimizer, and a later fold runs out of
#   memory; dropping the warmup scheduler makes the problem go away.
# Confirmed cause: the thread and the fixing PR (#1832, "change schedulers to functions"):
#   `WarmupLinearSchedule` subclasses `LambdaLR` and passes `self.lr_lambda` to it, so the
#   scheduler keeps a bound method of itself -- a reference cycle that also holds the optimizer
#   (and through it the parameters and their state) until the cycle collector happens to run.
#   The schedules were rewritten as functions returning a `LambdaLR` built on a closure.
# Class: reference cycle through a stored bound method (scheduler -> optimizer -> model)
import torch
from torch.optim.lr_scheduler import LambdaLR
from sklearn.model_selection import KFold


class WarmupLinearSchedule(LambdaLR):
    def __init__(self, optimizer, warmup_steps, t_total, last_epoch=-1):
        self.warmup_steps = warmup_steps
        self.t_total = t_total
        super(WarmupLinearSchedule, self).__init__(optimizer, self.lr_lambda, last_epoch=last_epoch)  # leak: ANY

    def lr_lambda(self, step):
        if step < self.warmup_steps:
            return float(step) / float(max(1, self.warmup_steps))
        return max(0.0, float(self.t_total - step) / float(max(1.0, self.t_total - self.warmup_steps)))


def run_cross_validation(build_model, dataset, make_loader, args, n_splits=5):
    scores = []
    for fold, (train_idx, valid_idx) in enumerate(KFold(n_splits=n_splits).split(dataset)):
        model = build_model().to(args.device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
        train_loader = make_loader(dataset, train_idx, shuffle=True)
        t_total = len(train_loader) * args.num_train_epochs
        scheduler = WarmupLinearSchedule(optimizer, warmup_steps=args.warmup_steps, t_total=t_total)
        for epoch in range(args.num_train_epochs):
            model.train()
            for batch in train_loader:
                batch = {k: v.to(args.device) for k, v in batch.items()}
                loss = model(**batch)[0]
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
        scores.append(args.evaluate(model, make_loader(dataset, valid_idx, shuffle=False)))
        del model, optimizer, scheduler
        torch.cuda.empty_cache()
    return scores
