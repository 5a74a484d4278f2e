# Fixed twin of case 05: Benchmark.run resets and removes its activation hooks before returning
# Thread: https://github.com/NeuroBench/neurobench/issues/184
# Reported: memory leak when the benchmark is run to measure accuracy during pre-training while the model keeps changing (MSWC example)
# Confirmed cause: Benchmark.run added forward hooks that append every layer output to lists and left them registered after the run; maintainers fixed it (commit de4ad19) by resetting and removing the hooks at the end of run()
# Class: forward hooks that store what they see, registered per run and never removed
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class ActivationHook:
    def __init__(self, layer):
        self.activation_outputs = []
        self.hook = layer.register_forward_hook(self.hook_fn)

    def hook_fn(self, layer, inputs, output):
        self.activation_outputs.append(output)

    def reset(self):
        self.activation_outputs = []

    def close(self):
        self.hook.remove()


def detect_activations(model):
    for hook in model.activation_hooks:
        hook.reset()
        hook.close()
    model.activation_hooks = [ActivationHook(m) for m in model.modules() if isinstance(m, (nn.ReLU, nn.Sigmoid))]


def activation_sparsity(model, preds, data):
    total = sum(o.numel() for h in model.activation_hooks for o in h.activation_outputs)
    zeros = sum((o == 0).sum().item() for h in model.activation_hooks for o in h.activation_outputs)
    return zeros / max(total, 1)


class Benchmark:
    def __init__(self, model, dataloader, workload_metrics):
        self.model, self.dataloader, self.workload_metrics = model, dataloader, workload_metrics

    def run(self):
        results = {}
        detect_activations(self.model)
        n = len(self.dataloader.dataset)
        for data, target in self.dataloader:
            preds = self.model(data).argmax(-1)
            for name, fn in self.workload_metrics.items():
                results[name] = results.get(name, 0.0) + fn(self.model, preds, (data, target)) * data.size(0) / n
            for hook in self.model.activation_hooks:
                hook.reset()
        for hook in self.model.activation_hooks:
            hook.reset()
            hook.close()
        self.model.activation_hooks = []
        return results


def accuracy(model, preds, data):
    return (preds == data[1]).float().mean().item()


class SNNLikeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.activation_hooks = []
        self.net = nn.Sequential(nn.Linear(201, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 35))

    def forward(self, x):
        return self.net(x)


if __name__ == "__main__":
    train = DataLoader(TensorDataset(torch.randn(20000, 201), torch.randint(0, 35, (20000,))), batch_size=256, shuffle=True)
    test = DataLoader(TensorDataset(torch.randn(2000, 201), torch.randint(0, 35, (2000,))), batch_size=256)
    model = SNNLikeNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    benchmark = Benchmark(model, test, {"accuracy": accuracy, "activation_sparsity": activation_sparsity})
    for epoch in range(50):
        model.train()
        for x, y in train:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            print(epoch, benchmark.run())
