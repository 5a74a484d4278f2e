# Recall case 31: torch.cuda.empty_cache() after every training step
# Thread: https://github.com/huggingface/transformers/issues/31372
# Reported: training is slower after upgrading transformers (8-GPU DeepSpeed run of run_clm.py).
# Confirmed cause: a `torch.cuda.empty_cache()` added to `training_step` (#28769) runs on every
#   step; it frees nothing the next step will not allocate again and forces slow re-allocation.
#   Removed by #31530 ("This line caused training slowdowns"), maintainers agreeing to leave it
#   to users or to an every-N-steps option.
# Class: empty_cache() in the step loop
import torch
from transformers import Trainer


class MemoryFrugalTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        model.train()
        inputs = self._prepare_inputs(inputs)
        with self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)
        del inputs
        torch.cuda.empty_cache()  # leak: ML202
        if self.args.n_gpu > 1:
            loss = loss.mean()
        self.accelerator.backward(loss)
        return loss.detach() / self.args.gradient_accumulation_steps
