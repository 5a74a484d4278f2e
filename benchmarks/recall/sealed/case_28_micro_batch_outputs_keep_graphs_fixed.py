# Fixed twin of case 28: the stored model_output is detached; the loss still uses the live one.
# Thread: https://github.com/verl-project/verl/issues/6698
# Class: per-micro-batch outputs kept with their graph until the mini-batch ends
import torch


class FSDPEngineWithLMHead:
    def __init__(self, module, loss_fn, logprobs_from_logits):
        self.module = module
        self.loss_fn = loss_fn
        self.logprobs_from_logits = logprobs_from_logits

    def forward_step(self, micro_batch, loss_function, forward_only):
        logits = self.module(input_ids=micro_batch["input_ids"],
                             attention_mask=micro_batch["attention_mask"]).logits
        log_probs = self.logprobs_from_logits(logits, micro_batch["responses"])
        entropy = -(logits.softmax(-1) * logits.log_softmax(-1)).sum(-1)
        model_output = {"log_probs": log_probs, "entropy": entropy}
        if forward_only:
            return None, {"model_output": model_output}
        loss, metrics = loss_function(model_output=model_output, data=micro_batch)
        output = {
            "model_output": {k: v.detach() for k, v in model_output.items()},
            "loss": loss.detach().item(),
            "metrics": metrics,
        }
        return loss, output

    def forward_backward_batch(self, data, loss_function, micro_batch_size, forward_only=False):
        output_lst = []
        micro_batches = data.split(micro_batch_size)
        for micro_batch in micro_batches:
            with torch.set_grad_enabled(not forward_only), torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                loss, output = self.forward_step(micro_batch, loss_function, forward_only)
            if not forward_only:
                (loss / len(micro_batches)).backward()
            output_lst.append(output)
        return output_lst
