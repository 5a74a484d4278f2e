# Thread: https://github.com/rasbt/LLMs-from-scratch/pull/473
# Reported: in the DPO-from-scratch notebook (ch07/04) the frozen reference model was run inside the
#   per-batch loss with autograd on, so every training step also built and kept a graph through the
#   reference GPT and backward filled .grad for its parameters; memory use was far above what DPO needs
#   (raised in #472).
# Confirmed cause: the maintainer's PR: the reference model "was unnecessarily computing gradient
#   information, which wasted memory resources"; the fix puts the two reference_model log-prob
#   computations in compute_dpo_loss_batch under torch.no_grad().
# Class: frozen reference/critic model called with grad enabled inside the training loss
import copy

import torch
import torch.nn.functional as F


def compute_logprobs(logits, labels, selection_mask=None):
    # shift so that token t is scored by the logits of position t-1
    labels = labels[:, 1:].clone()
    logits = logits[:, :-1, :]
    token_log_probs = torch.gather(F.log_softmax(logits, dim=-1), -1, labels.unsqueeze(-1)).squeeze(-1)
    if selection_mask is None:
        return token_log_probs.mean(-1)
    mask = selection_mask[:, 1:].clone()
    return (token_log_probs * mask).sum(-1) / mask.sum(-1)


def compute_dpo_loss(model_chosen_logprobs, model_rejected_logprobs,
                     reference_chosen_logprobs, reference_rejected_logprobs, beta=0.1):
    policy_margin = model_chosen_logprobs - model_rejected_logprobs
    reference_margin = reference_chosen_logprobs - reference_rejected_logprobs
    losses = -F.logsigmoid(beta * (policy_margin - reference_margin))
    chosen_rewards = (model_chosen_logprobs - reference_chosen_logprobs).detach()
    rejected_rewards = (model_rejected_logprobs - reference_rejected_logprobs).detach()
    return losses.mean(), chosen_rewards.mean(), rejected_rewards.mean()


def compute_dpo_loss_batch(batch, policy_model, reference_model, beta):
    policy_chosen_log_probas = compute_logprobs(policy_model(batch["chosen"]), batch["chosen"], batch["chosen_mask"])
    policy_rejected_log_probas = compute_logprobs(policy_model(batch["rejected"]), batch["rejected"], batch["rejected_mask"])

    ref_chosen_log_probas = compute_logprobs(reference_model(batch["chosen"]), batch["chosen"], batch["chosen_mask"])  # leak: ANY
    ref_rejected_log_probas = compute_logprobs(reference_model(batch["rejected"]), batch["rejected"], batch["rejected_mask"])  # leak: ANY

    return compute_dpo_loss(
        model_chosen_logprobs=policy_chosen_log_probas,
        model_rejected_logprobs=policy_rejected_log_probas,
        reference_chosen_logprobs=ref_chosen_log_probas,
        reference_rejected_logprobs=ref_rejected_log_probas,
        beta=beta,
    )


def train_model_dpo_simple(policy_model, reference_model, train_loader, optimizer, num_epochs, beta):
    tracking = {"train_losses": [], "train_chosen_rewards": [], "train_rejected_rewards": []}
    for epoch in range(num_epochs):
        policy_model.train()
        for batch in train_loader:
            optimizer.zero_grad()
            loss, chosen_rewards, rejected_rewards = compute_dpo_loss_batch(batch, policy_model, reference_model, beta)
            loss.backward()
            optimizer.step()
            tracking["train_losses"].append(loss.item())
            tracking["train_chosen_rewards"].append(chosen_rewards.item())
            tracking["train_rejected_rewards"].append(rejected_rewards.item())
        print(f"epoch {epoch + 1}: loss {tracking['train_losses'][-1]:.3f}")
    return tracking


def main(model, train_loader, device):
    policy_model = model.to(device)
    reference_model = copy.deepcopy(model).to(device)
    reference_model.eval()
    optimizer = torch.optim.AdamW(policy_model.parameters(), lr=5e-6, weight_decay=0.01)
    return train_model_dpo_simple(policy_model, reference_model, train_loader, optimizer, num_epochs=1, beta=0.1)
