# Recall case 01 (sealed19): language-model head appends each micro-batch's loss (still carrying its custom-Function grad_fn) to the shared losses dict used for logging
# Thread: https://github.com/ServiceNow/Fast-LLM/pull/486
# Reported: with many depth-first micro-batches per step (>= 128) GPU memory grew by about 164 MiB per micro-batch until H100s ran out of memory
# Confirmed cause: the loss returned by the fused logits-loss forward/backward is the tensor that the wrap_forward_backward autograd Function outputs, so its grad_fn holds the Function ctx and the backward context (stage input/output CUDA tensors); appending that tensor to context.losses for reporting kept every micro-batch's context alive until the step ended; the merged fix detaches the losses before appending them
# Class: per-micro-batch loss entries kept with their autograd graph in a dict that lives for the whole step
import torch


def wrap_forward_backward(forward, backward):
    class Function(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            outputs = forward(*args)
            ctx.context = outputs[-1]
            return outputs[:-1]

        @staticmethod
        def backward(ctx, *grad_outputs):
            return backward(*grad_outputs, ctx.context), None, None

    return Function.apply


def _logits_loss_forward(input_, weight, labels):
    logits = (input_ @ weight.t()).float()
    loss = torch.nn.functional.cross_entropy(logits, labels)
    grad_logits = logits.softmax(-1)
    grad_logits[torch.arange(labels.numel()), labels] -= 1
    grad_input = (grad_logits / labels.numel()).to(input_.dtype) @ weight
    return loss, (input_, weight, grad_input)


def _logits_loss_backward(grad_output, context):
    input_, weight, grad_input = context
    return grad_input * grad_output


class LanguageModelHead(torch.nn.Module):
    def __init__(self, hidden_size, vocab_size, loss_name="language_model_loss"):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(vocab_size, hidden_size) * 0.02)
        self._loss_name = loss_name
        self._forward_backward = wrap_forward_backward(_logits_loss_forward, _logits_loss_backward)

    def forward(self, hidden_states, labels, losses):
        (total_loss,) = self._forward_backward(hidden_states, self.weight.detach(), labels)
        if losses is not None:
            losses[self._loss_name].append(total_loss)  # leak: ANY
        return total_loss


def run_step(head, micro_batches, optimizer):
    losses = {"language_model_loss": []}
    for hidden_states, labels in micro_batches:
        hidden_states = hidden_states.detach().requires_grad_(True)
        loss = head(hidden_states, labels, losses)
        loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return {name: torch.stack(values).mean().item() for name, values in losses.items()}
