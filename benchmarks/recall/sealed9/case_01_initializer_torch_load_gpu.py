# Recall case 01 (sealed9): pretrained weights are torch.load-ed back onto the GPU they were saved from, doubling GPU weight memory
# Thread: https://github.com/allenai/allennlp/pull/4712
# Reported: applying a PretrainedModelInitializer to a model already on the GPU put a second full copy of the weights in GPU memory
# Confirmed cause: torch.load without map_location restores tensors to their saved CUDA device; merged PR loads the weights to the CPU first
# Class: torch.load of a GPU checkpoint without map_location inside an initializer/helper
import re

import torch
import torch.nn as nn


class PretrainedModelInitializer:
    """Copies matching parameters from a serialized state dict into a module."""

    def __init__(self, weights_file_path: str, parameter_name_overrides=None):
        self.weights = torch.load(weights_file_path)  # leak: ANY
        self.parameter_name_overrides = parameter_name_overrides or {}

    def __call__(self, tensor: torch.Tensor, parameter_name: str) -> None:
        if parameter_name in self.parameter_name_overrides:
            parameter_name = self.parameter_name_overrides[parameter_name]
        source = self.weights[parameter_name]
        if tensor.size() != source.size():
            raise ValueError(f"size mismatch for {parameter_name}")
        tensor.data.copy_(source.data)


class InitializerApplicator:
    def __init__(self, regexes):
        self._initializers = [(re.compile(r), init) for r, init in regexes]

    def __call__(self, module: nn.Module) -> None:
        for name, param in module.named_parameters():
            for regex, initializer in self._initializers:
                if regex.search(name):
                    initializer(param, name)
                    break


class Tagger(nn.Module):
    def __init__(self, vocab=50000, dim=1024, n_tags=40):
        super().__init__()
        self.embedder = nn.Embedding(vocab, dim)
        self.encoder = nn.LSTM(dim, dim, num_layers=2, batch_first=True)
        self.tag_projection = nn.Linear(dim, n_tags)


def main(pretrained_path: str = "pretrained/weights.th"):
    device = torch.device("cuda")
    model = Tagger().to(device)
    initializer = PretrainedModelInitializer(pretrained_path)
    applicator = InitializerApplicator([("embedder|encoder", initializer)])
    applicator(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 50000, (32, 64), device=device)
    for _ in range(100):
        optimizer.zero_grad()
        states, _ = model.encoder(model.embedder(tokens))
        loss = model.tag_projection(states).logsumexp(-1).mean()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
