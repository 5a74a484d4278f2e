# Recall case 21 (sealed6): validator scores each miner model by computing losses with autograd enabled
# Thread: https://github.com/macrocosm-os/pretraining/pull/104
# Reported: validators needed far more GPU memory than necessary when evaluating miner models
# Confirmed cause: compute_losses() ran the forward pass and loss under gradient tracking, saving activations for a backward that never happens; merged PR computes the losses under torch.no_grad() to save memory
# Class: evaluation helper (loss computation) run without no_grad
import math
import typing

import torch
from transformers import AutoModelForCausalLM


def compute_losses(model, batches: typing.List[torch.Tensor], device: str) -> typing.List[float]:
    model.to(device)
    model.eval()
    losses = []
    for batch in batches:
        try:
            inputs = batch.to(device)
            logits = model(inputs).logits  # leak: ANY
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = inputs[..., 1:].contiguous()
            loss_fct = torch.nn.CrossEntropyLoss()
            shift_logits = shift_logits.view(-1, model.config.vocab_size)
            shift_labels = shift_labels.view(-1)
            loss = loss_fct(shift_logits, shift_labels).item()
            losses.append(loss)
        except Exception as e:
            print(f"Exception in compute_losses: {e}")
            losses.append(math.inf)
    return losses


if __name__ == "__main__":
    uids = list(range(16))
    batches = [torch.randint(0, 50257, (1, 1024)) for _ in range(64)]
    losses_per_uid = {}
    for uid in uids:
        model = AutoModelForCausalLM.from_pretrained("gpt2-large")
        losses_per_uid[uid] = compute_losses(model, batches, device="cuda")
        del model
        torch.cuda.empty_cache()
    print({u: sum(l) / len(l) for u, l in losses_per_uid.items()})
