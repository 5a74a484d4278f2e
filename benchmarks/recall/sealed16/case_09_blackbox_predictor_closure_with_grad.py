# Recall case 09 (sealed16): factory returns a numpy predictor closure for explainers that runs the torch model with autograd on (and in train mode)
# Thread: https://github.com/SeldonIO/alibi/pull/784
# Reported: black-box explanations of torch models computed gradients for every perturbation batch, only to detach them afterwards: extra computation and memory, especially for large models
# Confirmed cause: the merged, reviewed refactor of the predict function: .detach() after the forward meant gradients/graphs were still built; the fix runs the model in eval mode under no_grad
# Class: predictor closure used by explainers with grad enabled (waste per call)
import numpy as np
import torch
import torch.nn as nn


def blackbox_predictor(model: nn.Module, device="cuda"):
    def predict(x: np.ndarray) -> np.ndarray:
        x_t = torch.as_tensor(x, dtype=torch.float32, device=device)
        probs = model(x_t).softmax(dim=-1)  # leak: ANY
        return probs.detach().cpu().numpy()
    return predict


def anchor_search(predict, instance, n_samples=10000, n_rounds=200):
    rng = np.random.default_rng(0)
    coverage = []
    for _ in range(n_rounds):
        perturbed = instance + rng.normal(scale=0.1, size=(n_samples, instance.shape[0]))
        preds = predict(perturbed)
        coverage.append(preds.argmax(1).mean())
    return coverage


if __name__ == "__main__":
    clf = nn.Sequential(nn.Linear(128, 2048), nn.ReLU(), nn.Dropout(0.2), nn.Linear(2048, 10)).cuda()
    predict_fn = blackbox_predictor(clf)
    anchor_search(predict_fn, np.zeros(128))
