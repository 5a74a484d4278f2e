# Thread: https://github.com/keras-team/keras/issues/23110 (fixed by https://github.com/keras-team/keras/pull/23111)
# Reported: with the torch backend, calling predict_on_batch patch by patch in a loop grows GPU
#   memory linearly until OOM; each prediction should free its memory when the next one starts.
# Confirmed cause: the torch tree helpers pass tree_flatten an is_leaf lambda that closes over
#   `structure` (the nest of GPU tensors); tree_flatten's self-referencing helper closure holds the
#   lambda, so the tensors sit in a reference cycle until the cyclic GC happens to run. The merged
#   fix makes the lambda capture only id(structure).
# Class: tensors captured in a closure (lambda) that outlives the call through a reference cycle
import torch
from torch.utils import _pytree as torch_tree


def traverse(func, structure, top_down=True):
    def traverse_children():
        children, treedef = torch_tree.tree_flatten(
            structure,
            is_leaf=lambda x: x is not structure,  # leak: ANY
        )
        if treedef.num_nodes == 1 and treedef.num_leaves == 1:
            return structure
        return torch_tree.tree_unflatten(
            [traverse(func, c, top_down=top_down) for c in children],
            treedef,
        )

    if top_down:
        ret = func(structure)
        if ret is None:
            return traverse_children()
        return ret
    traversed = traverse_children()
    ret = func(traversed)
    return traversed if ret is None else ret


def convert_to_numpy(outputs):
    return traverse(
        lambda x: x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else None,
        outputs,
    )


def predict_on_batch(model, patch):
    with torch.no_grad():
        outputs = {"mask": model(patch), "logits": model(patch)}
    return convert_to_numpy(outputs)


def sliding_window_inference(model, patches, output_volume):
    for coords, patch in patches:
        pred = predict_on_batch(model, patch.cuda())
        output_volume[coords] = pred["mask"]
    return output_volume
