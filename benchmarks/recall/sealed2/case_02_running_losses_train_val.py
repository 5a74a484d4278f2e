# Recall case 02 (sealed2): three running sums of loss tensors, in the train and in the validation loop
# Thread: https://github.com/samuelyu2002/ImVisible/issues/2
# Reported: training the traffic-light network eats all host RAM after a few epochs.
# Confirmed cause: the maintainer: the running sums `+= loss`, `+= MSE`, `+= cross_entropy` (train and
#   validation) store the computational graphs; changing them all to `.item()` fixed it ("Yes, that
#   was it, now it works fine"), and the maintainer committed the change.
# Class: several running sums of graph-carrying losses, in training and in a validation loop with grad on
import torch
import torch.nn as nn


def train(net, train_loader, val_loader, optimizer, epochs, device, mse_weight=0.5):
    mse_criterion = nn.MSELoss()
    ce_criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        net.train()
        running_loss, running_loss_MSE, running_loss_cross_entropy = 0.0, 0.0, 0.0
        for images, modes, points in train_loader:
            images, modes, points = images.to(device), modes.to(device), points.to(device)
            optimizer.zero_grad()
            pred_classes, pred_direc = net(images)
            cross_entropy = ce_criterion(pred_classes, modes)
            MSE = mse_criterion(pred_direc, points)
            loss = mse_weight * MSE + (1 - mse_weight) * cross_entropy
            loss.backward()
            optimizer.step()
            running_loss += loss  # leak: ANY
            running_loss_MSE += MSE  # leak: ANY
            running_loss_cross_entropy += cross_entropy  # leak: ANY
        n = len(train_loader)
        print(f"epoch {epoch}: loss {running_loss / n:.4f} mse {running_loss_MSE / n:.4f} "
              f"ce {running_loss_cross_entropy / n:.4f}")

        net.eval()
        val_running_loss, val_mse_loss, val_ce_loss = 0.0, 0.0, 0.0
        for images, modes, points in val_loader:
            images, modes, points = images.to(device), modes.to(device), points.to(device)
            pred_classes, pred_direc = net(images)
            cross_entropy = ce_criterion(pred_classes, modes)
            MSE = mse_criterion(pred_direc, points)
            loss = mse_weight * MSE + (1 - mse_weight) * cross_entropy
            val_running_loss += loss  # leak: ANY
            val_mse_loss += MSE  # leak: ANY
            val_ce_loss += cross_entropy  # leak: ANY
        n = len(val_loader)
        print(f"val: loss {val_running_loss / n:.4f} mse {val_mse_loss / n:.4f} ce {val_ce_loss / n:.4f}")
        torch.save(net.state_dict(), f"checkpoint_{epoch}.pth")
