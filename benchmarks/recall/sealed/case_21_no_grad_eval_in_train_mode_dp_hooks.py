# Recall case 21 (sealed): evaluation under no_grad with the DP-wrapped model still in train mode
# Thread: https://github.com/meta-pytorch/opacus/issues/176
# Reported: with Opacus attached, evaluating inside `with torch.no_grad():` leaks memory:
#   activations pile up during the test loop.
# Confirmed cause: the reporter, acknowledged by the maintainers: the per-sample-gradient forward
#   hooks capture each layer's activations whenever the module is in training mode; under
#   no_grad there is no backward pass to consume them, so they are never released. "Setting
#   model.eval() will fix the issue."
# Class: forward hooks that store per-call state, run in train mode without backward
import torch
import torch.nn.functional as F
from opacus import PrivacyEngine


def train(model, device, train_loader, optimizer, epoch):
    model.train()
    for data, target in train_loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()


def test(model, device, test_loader):
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)  # leak: ANY
            correct += output.argmax(dim=1).eq(target).sum().item()
    return correct / len(test_loader.dataset)


def main(model, train_loader, test_loader, epochs, device="cuda"):
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    privacy_engine = PrivacyEngine(
        model,
        sample_rate=train_loader.batch_size / len(train_loader.dataset),
        noise_multiplier=1.1,
        max_grad_norm=1.0,
    )
    privacy_engine.attach(optimizer)
    for epoch in range(1, epochs + 1):
        train(model, device, train_loader, optimizer, epoch)
        accuracy = test(model, device, test_loader)
        print(f"epoch {epoch}: acc {accuracy:.4f} eps {privacy_engine.get_privacy_spent(1e-5)[0]:.2f}")
