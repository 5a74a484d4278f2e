# Fixed twin of case 58: the references are dropped as soon as the loss exists.
# Thread: https://github.com/allenai/open-instruct/pull/777
# Class: waste: large intermediates kept alive across iterations by loop variables
import torch


def train_epoch(model, accelerator, active_dataloader, optimizer, lr_scheduler, args, embedding_size):
    total_loss = 0
    model.train()
    for step, batch in enumerate(active_dataloader):
        with accelerator.accumulate(model):
            outputs = model(**batch, use_cache=False)
            if args.reduce_loss == "mean":
                loss = outputs.loss
                del outputs
            else:
                logits = outputs.logits
                del outputs
                labels = batch["labels"]
                shift_logits = logits[..., :-1, :].contiguous()
                del logits
                shift_labels = labels[..., 1:].contiguous()
                loss_fct = torch.nn.CrossEntropyLoss(reduction="sum")
                shift_logits = shift_logits.view(-1, embedding_size)
                shift_labels = shift_labels.view(-1).to(shift_logits.device)
                loss = loss_fct(shift_logits, shift_labels)
                del shift_logits
            total_loss += loss.detach().float()
            accelerator.backward(loss)
            if accelerator.sync_gradients and args.clip_grad_norm > 0:
                accelerator.clip_grad_norm_(model.parameters(), args.clip_grad_norm)
            optimizer.step()
            optimizer.zero_grad()
            lr_scheduler.step()
    return total_loss
