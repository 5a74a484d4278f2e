# Thread: https://github.com/OpenXAIProject/pnpxai/pull/110
# Reported: running an explainability Experiment over a data set kept GPU memory
#   growing: every model output, explanation and evaluation stayed on the GPU.
# Confirmed cause: the merged PR ("add cache device, free gpu memory for cache")
#   establishes that ExperimentCache stored outputs/explanations/evaluations in its
#   global dict exactly as produced, i.e. as CUDA tensors, for the whole run; the
#   fix moves every cached value to a cache device that defaults to the CPU.
# Class: dict cache holding GPU tensors for the life of the object
from typing import Any, Optional, Union

import torch


def to_device(data, device: torch.device):
    if torch.is_tensor(data):
        return data.to(device)
    if isinstance(data, (list, tuple)):
        return type(data)(to_device(item, device) for item in data)
    if isinstance(data, dict):
        return {key: to_device(value, device) for key, value in data.items()}
    return data


class ExperimentCache:
    _OUTPUT_KEY = "output"
    _EXPLANATION_KEY = "explanation"
    _EVALUATION_KEY = "evaluation"
    _DATA_KEY = "data"

    def __init__(self, cache_device: Optional[Union[torch.device, str]] = None):
        if isinstance(cache_device, str):
            cache_device = torch.device(cache_device)
        self._device = cache_device if cache_device is not None else torch.device("cpu")
        self._global_cache = {}

    def to_device(self, x):
        return to_device(x, self._device)

    def _get_key(self, data_id: int, explainer_id: Optional[int] = None,
                 metric_id: Optional[int] = None) -> str:
        key = f"{self._DATA_KEY}_{data_id}"
        if explainer_id is not None:
            key += f"_{self._EXPLANATION_KEY}_{explainer_id}"
        if metric_id is not None:
            key += f"_{self._EVALUATION_KEY}_{metric_id}"
        return key

    def get_output(self, data_id: int) -> Optional[Any]:
        return self._global_cache.get(self._get_key(data_id), None)

    def set_output(self, data_id: int, output: Any):
        self._global_cache[self._get_key(data_id)] = self.to_device(output)

    def set_explanation(self, data_id: int, explainer_id: int, explanation: Any):
        self._global_cache[self._get_key(data_id, explainer_id)] = self.to_device(explanation)

    def set_evaluation(self, data_id: int, explainer_id: int, metric_id: int,
                       evaluation: Any):
        key = self._get_key(data_id, explainer_id, metric_id)
        self._global_cache[key] = self.to_device(evaluation)


def run_experiment(model, data, explainers, cache: ExperimentCache):
    device = next(model.parameters()).device
    for data_id, (inputs, targets) in enumerate(data):
        inputs = inputs.to(device)
        targets = targets.to(device)
        outputs = model(inputs)
        cache.set_output(data_id, outputs)
        for explainer_id, explainer in enumerate(explainers):
            attributions = explainer.attribute(inputs, targets)
            cache.set_explanation(data_id, explainer_id, attributions)
    return cache
