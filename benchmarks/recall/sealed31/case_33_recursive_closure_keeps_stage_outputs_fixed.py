# Thread: https://github.com/pytorch/pytorch/pull/136507
# Reported: with pipeline parallelism, forward activation tensors of each stage were kept
#   alive "forever" (until the cyclic GC happened to run) after the stage's backward.
# Confirmed cause: the PR ("[pipelining] fix py ref cycle in stage_backward"): the nested
#   helper extract_tensors_with_grads calls itself recursively, so it closes over a cell that
#   holds the function itself plus stage_output_tensors / output_grad_tensors; the
#   function <-> cell cycle keeps the list of activation tensors alive until gc. Fix: pass the
#   function to itself as an explicit argument so no cycle forms.
# Class: tensors captured in a closure (self-recursive nested function) that outlive the step
import torch


def stage_backward(stage_output, output_grads, input_values):
    """Run backward for one pipeline stage and return grads for its inputs."""
    stage_output_tensors = []
    output_grad_tensors = []

    def extract_tensors_with_grads(output_val, grad_val, extract_tensors_with_grads):
        # the helper receives itself as an argument: it no longer closes over its own name,
        # so no function <-> cell cycle keeps the tensor lists alive
        if isinstance(output_val, torch.Tensor):
            if not output_val.requires_grad and output_val.grad_fn is None:
                return
            stage_output_tensors.append(output_val)
            output_grad_tensors.append(grad_val)
        elif isinstance(output_val, (tuple, list)):
            if grad_val is None:
                return
            for ov, gv in zip(output_val, grad_val):
                extract_tensors_with_grads(ov, gv, extract_tensors_with_grads)
        elif isinstance(output_val, dict):
            if grad_val is None:
                return
            for key in output_val:
                extract_tensors_with_grads(
                    output_val[key], grad_val[key], extract_tensors_with_grads
                )

    extract_tensors_with_grads(stage_output, output_grads, extract_tensors_with_grads)

    torch.autograd.backward(stage_output_tensors, grad_tensors=output_grad_tensors)

    grad_inputs = []
    for val in input_values:
        if isinstance(val, torch.Tensor):
            grad_inputs.append(val.grad)
        else:
            grad_inputs.append(None)
    return tuple(grad_inputs)
