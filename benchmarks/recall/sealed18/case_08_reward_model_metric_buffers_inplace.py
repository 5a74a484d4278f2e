# Recall case 08 (sealed18): reward-model training writes the graph-carrying loss and rewards into preallocated GPU metric buffers by index assignment
# Thread: https://github.com/allenai/open-instruct/pull/363
# Reported: memory use of the reward-modeling run keeps climbing over the course of training (the maintainer's memory chart in the PR), while the same run with the fix stays flat
# Confirmed cause: the per-micro-batch metrics are stored with `losses[idx] = loss` etc. into buffers created once before the loop; the index assignment is recorded by autograd, so each buffer becomes part of the graph and chains every step's history onto the previous one; the maintainer's merged fix performs the metric bookkeeping inside `torch.no_grad()`
# Class: tensors handed to logging/reporting/meters (in-place write of attached tensors into persistent metric buffers)
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


def get_reward(model, query_responses, pad_token_id):
    attention_mask = query_responses != pad_token_id
    output = model(input_ids=query_responses, attention_mask=attention_mask)
    return output.logits.squeeze(-1)


def train_reward_model(args, accelerator, model, optimizer, scheduler, train_dataset, collator, tokenizer, writer, device):
    dataloader = DataLoader(train_dataset, batch_size=args.per_device_train_batch_size, shuffle=True, collate_fn=collator)
    model, optimizer, dataloader = accelerator.prepare(model, optimizer, dataloader)

    losses = torch.zeros((args.gradient_accumulation_steps,), device=device)
    accuracies = torch.zeros((args.gradient_accumulation_steps,), device=device)
    chosen_rewards = torch.zeros((args.gradient_accumulation_steps,), device=device)
    rejected_rewards = torch.zeros((args.gradient_accumulation_steps,), device=device)
    reward_margin = torch.zeros((args.gradient_accumulation_steps,), device=device)
    local_metrics = torch.zeros((5,), device=device)
    training_step = 0
    gradient_accumulation_idx = 0
    episode = 0
    model.train()

    for _ in range(args.num_train_epochs):
        for data in dataloader:
            episode += args.micro_batch_size
            training_step += 1
            n_chosen = data["input_ids_chosen"].shape[0]
            query_responses = torch.cat((data["input_ids_chosen"], data["input_ids_rejected"]), dim=0)
            with accelerator.accumulate(model):
                predicted_reward = get_reward(model, query_responses, tokenizer.pad_token_id)
                chosen_reward = predicted_reward[:n_chosen]
                rejected_reward = predicted_reward[n_chosen:]
                accuracy = (chosen_reward > rejected_reward).float().mean()
                loss = -F.logsigmoid(chosen_reward - rejected_reward).mean()
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()

            losses[gradient_accumulation_idx] = loss  # leak: ANY
            accuracies[gradient_accumulation_idx] = accuracy
            chosen_rewards[gradient_accumulation_idx] = chosen_reward.mean()  # leak: ANY
            rejected_rewards[gradient_accumulation_idx] = rejected_reward.mean()  # leak: ANY
            reward_margin[gradient_accumulation_idx] = (chosen_reward - rejected_reward).mean()  # leak: ANY
            gradient_accumulation_idx = (gradient_accumulation_idx + 1) % args.gradient_accumulation_steps

            if training_step % args.gradient_accumulation_steps == 0:
                scheduler.step()
                local_metrics[0] = accuracies.mean()
                local_metrics[1] = losses.mean()
                local_metrics[2] = chosen_rewards.mean()
                local_metrics[3] = rejected_rewards.mean()
                local_metrics[4] = reward_margin.mean()
                global_metrics = accelerator.reduce(local_metrics, reduction="mean").tolist()
                metrics = {
                    "episode": episode,
                    "train/rm/accuracy": global_metrics[0],
                    "train/rm/loss": global_metrics[1],
                    "train/rm/chosen_rewards": global_metrics[2],
                    "train/rm/rejected_rewards": global_metrics[3],
                    "train/rm/reward_margin": global_metrics[4],
                    "train/rm/lr": scheduler.get_last_lr()[0],
                }
                if accelerator.is_main_process:
                    for key, value in metrics.items():
                        writer.add_scalar(key, value, episode)
    return model
