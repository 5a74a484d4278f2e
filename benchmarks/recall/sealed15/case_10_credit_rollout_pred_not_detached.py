# Recall case 10 (sealed15): CREDIT multi-step training feeds y_pred back as the next input without detaching it on steps that are not backpropagated
# Thread: https://github.com/NCAR/miles-credit/pull/174
# Reported: memory grows with the number of forecast steps in multi-step (rollout) training; the computational graph of earlier steps is still alive
# Confirmed cause: the merged PR (reviewer: 'change seems reasonable'): when forecast_step is not in backprop_on_timestep, y_pred keeps its computational graph and is fed into the next step's input, so graphs chain across the rollout; y_pred is now detached and re-assigned
# Class: autoregressive rollout state (prediction fed back as input) never detached
import torch
import torch.nn as nn
import torch.nn.functional as F


class WeatherModel(nn.Module):
    def __init__(self, channels=70):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(2 * channels, 256, 3, padding=1), nn.GELU(), nn.Conv2d(256, channels, 3, padding=1))

    def forward(self, x):
        b, t, c, h, w = x.shape
        return self.net(x.reshape(b, t * c, h, w)).unsqueeze(1)


def train_one_epoch(model, optimizer, trainloader, device, forecast_len=12, backprop_on_timestep=(1, 12)):
    model.train()
    for batch in trainloader:
        x = batch["x"].to(device)
        optimizer.zero_grad()
        for forecast_step in range(1, forecast_len + 1):
            y = batch["y"][:, forecast_step - 1:forecast_step].to(device)
            y_pred = model(x)  # leak: ANY
            if forecast_step in backprop_on_timestep:
                loss = F.mse_loss(y_pred, y)
                loss.backward()
                y_pred = y_pred.detach()
            x = torch.cat([x[:, 1:], y_pred], dim=1)  # leak: ANY
        optimizer.step()


if __name__ == "__main__":
    dev = torch.device("cuda")
    m = WeatherModel().to(dev)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    loader = [{"x": torch.randn(2, 2, 70, 192, 288), "y": torch.randn(2, 12, 70, 192, 288)} for _ in range(100)]
    train_one_epoch(m, opt, loader, dev)
