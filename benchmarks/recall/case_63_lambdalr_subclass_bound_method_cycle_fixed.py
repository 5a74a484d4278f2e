# Fixed twin of case 63: the schedule is a function returning a LambdaLR over a closure,
#   so no scheduler holds a bound method of itself.
# Thread: https://github.com/huggingface/transformers/issues/1134
# Class: reference cycle through a stored bound method (scheduler -> optimizer -> model)
import torch
from torch.optim.lr_scheduler import LambdaLR
from sklearn.model_selection import KFold


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, last_epoch=-1):
    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        return max(0.0, float(num_training_steps - current_step) / float(max(1, num_training_steps - num_warmup_steps)))

    return LambdaLR(optimizer, lr_lambda, last_epoch)


def run_cross_validation(build_model, dataset, make_loader, args, n_splits=5):
    scores = []
    for fold, (train_idx, valid_idx) in enumerate(KFold(n_splits=n_splits).split(dataset)):
        model = build_model().to(args.device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
        train_loader = make_loader(dataset, train_idx, shuffle=True)
        t_total = len(train_loader) * args.num_train_epochs
        scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, t_total)
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
