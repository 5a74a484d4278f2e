# Recall case 28 (sealed): a micro-batch loop collects each step's model outputs, graph attached
# Thread: https://github.com/verl-project/verl/issues/6698
# Reported: RL policy training with the FSDP engine grows GPU memory with the mini-batch size,
#   not the micro-batch size: shrinking micro-batches or offloading does not help and real runs
#   run out of memory while small tests pass.
# Confirmed cause: the fixing PR (#6699, merged; the Megatron follow-up #7874 restates it):
#   `forward_step` returns `model_output` (log-probs, entropy, ...) still attached to the
#   autograd graph inside the dict that `forward_backward_batch` appends to `output_lst` for the
#   whole mini-batch; entries the loss does not backpropagate through keep their graphs and
#   saved activations alive until the last micro-batch. Fixed by detaching `model_output`
#   before it is stored.
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
            "model_output": model_output,  # leak: ANY
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
