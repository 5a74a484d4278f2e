# Thread: https://github.com/fangwei123456/spikingjelly/pull/738 (closes https://github.com/fangwei123456/spikingjelly/issues/737)
# Reported: memory keeps climbing across evaluations when an OutputMonitor is built to measure firing
#   rates each time the model is evaluated, although the monitor variable is deleted afterwards.
# Confirmed cause: the monitor's forward hook lives on the still-alive neuron modules and its closure
#   holds the monitor, so `del` never reaches the monitor's cleanup; every old monitor stays hooked
#   and keeps appending the spikes it sees. The merged fix gives monitors an explicit close() /
#   context-manager lifetime that removes the hooks and drops the records.
# Class: observer storing the inputs it sees, attached again on every call and never detached
import torch
import torch.nn as nn
from spikingjelly.activation_based import layer, neuron, functional, monitor


class SNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            layer.Flatten(),
            layer.Linear(28 * 28, 256),
            neuron.LIFNode(tau=2.0),
            layer.Linear(256, 10),
            neuron.LIFNode(tau=2.0),
        )
        functional.set_step_mode(self, "m")

    def forward(self, x_seq):
        return self.net(x_seq)


def evaluate_firing_rates(model, test_loader, device="cuda", T=20):
    model.eval()
    correct, total = 0, 0
    with monitor.OutputMonitor(model, neuron.LIFNode) as spike_seq_monitor:
        with torch.no_grad():
            for img, label in test_loader:
                img, label = img.to(device), label.to(device)
                x_seq = img.unsqueeze(0).repeat(T, 1, 1, 1, 1)
                out_fr = model(x_seq).mean(0)
                correct += (out_fr.argmax(1) == label).sum().item()
                total += label.numel()
                functional.reset_net(model)
        rates = [r.mean().item() for r in spike_seq_monitor.records]
    return correct / total, rates


def train(model, train_loader, test_loader, epochs=50, device="cuda", T=20):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        model.train()
        for img, label in train_loader:
            img, label = img.to(device), label.to(device)
            x_seq = img.unsqueeze(0).repeat(T, 1, 1, 1, 1)
            out_fr = model(x_seq).mean(0)
            loss = nn.functional.mse_loss(out_fr, nn.functional.one_hot(label, 10).float())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            functional.reset_net(model)
        acc, rates = evaluate_firing_rates(model, test_loader, device, T)
        print(f"epoch {epoch}: acc={acc:.4f} mean firing rate={sum(rates) / max(len(rates), 1):.4f}")
