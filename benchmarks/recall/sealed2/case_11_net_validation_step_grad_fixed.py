# Fixed twin of case 11: validation_step runs under torch.no_grad() (the fix of skorch#219).
# Thread: https://github.com/skorch-dev/skorch/issues/218
# Reported: fit() of a PointNet fails with CUDA out of memory; memory grows after every validation batch.
# Confirmed cause: `validation_step()` calls the module outside `torch.no_grad()`, so each validation
#   prediction (kept for scoring) carries its graph; the reporter's fix wrapped the step in
#   `torch.no_grad()`, and the maintainer confirmed ("we failed to change this when pytorch 0.4 was
#   introduced") and fixed it that way (skorch#219).
# Class: a validation step of a training wrapper without no_grad, its predictions kept for the epoch
import torch


class NeuralNet:
    def __init__(self, module, criterion, optimizer, lr=0.01, max_epochs=10, device="cuda"):
        self.module_ = module.to(device)
        self.criterion_ = criterion()
        self.optimizer_ = optimizer(self.module_.parameters(), lr=lr)
        self.max_epochs = max_epochs
        self.device = device
        self.history = []

    def infer(self, x):
        return self.module_(x.to(self.device))

    def get_loss(self, y_pred, y_true):
        return self.criterion_(y_pred, y_true.to(self.device))

    def train_step(self, Xi, yi):
        self.module_.train(True)
        self.optimizer_.zero_grad()
        y_pred = self.infer(Xi)
        loss = self.get_loss(y_pred, yi)
        loss.backward()
        self.optimizer_.step()
        return {"loss": loss, "y_pred": y_pred}

    def validation_step(self, Xi, yi):
        self.module_.train(False)
        with torch.no_grad():
            y_pred = self.infer(Xi)
            loss = self.get_loss(y_pred, yi)
        return {"loss": loss, "y_pred": y_pred}

    def fit_loop(self, train_loader, valid_loader):
        for epoch in range(self.max_epochs):
            train_losses = []
            for Xi, yi in train_loader:
                step = self.train_step(Xi, yi)
                train_losses.append(step["loss"].item())
            valid_losses, valid_preds = [], []
            for Xi, yi in valid_loader:
                step = self.validation_step(Xi, yi)
                valid_losses.append(step["loss"].item())
                valid_preds.append(step["y_pred"])
            y_valid = torch.cat([yi for _, yi in valid_loader]).to(self.device)
            accuracy = (torch.cat(valid_preds).argmax(1) == y_valid).float().mean().item()
            self.history.append({"epoch": epoch, "train_loss": sum(train_losses) / len(train_losses),
                                 "valid_loss": sum(valid_losses) / len(valid_losses), "valid_acc": accuracy})
            print(self.history[-1])
        return self
