# Recall case 06 (sealed13): fit() moves the entire validation tensor to the GPU once, although the batched predict helper already copies batches to the GPU itself
# Thread: https://github.com/jmschrei/bpnet-lite/issues/13
# Reported: VRAM burden in ChromBPNet.fit for large genomic datasets: the whole X_valid is copied to the GPU before training
# Confirmed cause: `X_valid = X_valid.cuda(non_blocking=True)` is unnecessary because predict() moves each batch to the GPU and back; the maintainer agreed it should live on the CPU and fixed it in the next patch
# Class: whole evaluation set placed on the device up front instead of per batch
import torch
import torch.nn as nn


def predict(model, X, batch_size=64, device="cuda"):
    """Batched prediction: moves one batch at a time to the device and the result back to CPU."""
    outs = []
    with torch.no_grad():
        for start in range(0, X.shape[0], batch_size):
            xb = X[start:start + batch_size].to(device)
            outs.append(model(xb).cpu())
    return torch.cat(outs)


class ChromBPNet(nn.Module):
    def __init__(self, n_filters=512, n_layers=8, trimming=1057):
        super().__init__()
        self.iconv = nn.Conv1d(4, n_filters, 21, padding=10)
        self.rconvs = nn.ModuleList([nn.Conv1d(n_filters, n_filters, 3, padding=2 ** i, dilation=2 ** i)
                                     for i in range(1, n_layers + 1)])
        self.fconv = nn.Conv1d(n_filters, 1, 75, padding=37)
        self.trimming = trimming

    def forward(self, X):
        h = torch.relu(self.iconv(X))
        for conv in self.rconvs:
            h = h + torch.relu(conv(h))
        return self.fconv(h).squeeze(1)

    def fit(self, training_data, optimizer, X_valid, y_valid, max_epochs=50, validation_iter=100):
        X_valid = X_valid.cuda(non_blocking=True)  # leak: ANY
        y_valid_counts = y_valid.sum(dim=-1)
        iteration = 0
        for epoch in range(max_epochs):
            for X, y in training_data:
                X, y = X.cuda(), y.cuda()
                optimizer.zero_grad()
                loss = nn.functional.mse_loss(self(X), y)
                loss.backward()
                optimizer.step()
                if iteration % validation_iter == 0:
                    self.eval()
                    y_hat = predict(self, X_valid, batch_size=64)
                    corr = torch.corrcoef(torch.stack([y_hat.sum(-1), y_valid_counts]))[0, 1]
                    print(epoch, iteration, loss.item(), corr.item())
                    self.train()
                iteration += 1


if __name__ == "__main__":
    model = ChromBPNet().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    X_valid = torch.randn(200000, 4, 2114)
    y_valid = torch.randn(200000, 2114)
    train = [(torch.randn(64, 4, 2114), torch.randn(64, 2114)) for _ in range(100)]
    model.fit(train, opt, X_valid, y_valid, max_epochs=1)
