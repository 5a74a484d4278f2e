# Recall case 19 (sealed4): CT post-processing training script computes the validation loss with autograd on
# Thread: https://github.com/CambridgeCIA/LION/issues/115
# Reported: unnecessary memory use during the validation step of example_scripts/FBPConvNet_train.py, going from 11 GB to 18 GB
# Confirmed cause: the validation loop after model.eval() ran model(sinogram) and the loss without torch.no_grad(); maintainer (AnderBiguri): "Indeed! ... indeed this is a bug"
# Class: evaluation loop without torch.no_grad()
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class FBPConvNet(nn.Module):
    """FBP followed by a residual U-Net (the FBP operator is stubbed by a fixed linear back-projection here)."""

    def __init__(self, n_angles=360, n_det=900, img=512, ch=64):
        super().__init__()
        self.register_buffer("backproj", torch.randn(n_det, img) / n_det)
        self.img = img
        self.down = nn.Sequential(nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU())
        self.mid = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(ch, 2 * ch, 3, padding=1), nn.ReLU(),
                                 nn.ConvTranspose2d(2 * ch, ch, 2, stride=2))
        self.up = nn.Sequential(nn.Conv2d(2 * ch, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, 1, 1))

    def forward(self, sino):
        fbp = (sino @ self.backproj).mean(dim=-2, keepdim=True).expand(-1, -1, self.img, -1)
        d = self.down(fbp)
        return fbp + self.up(torch.cat([d, self.mid(d)], dim=1))


device = torch.device("cuda:0")
train_ds = TensorDataset(torch.randn(2000, 1, 360, 900), torch.randn(2000, 1, 512, 512))
val_ds = TensorDataset(torch.randn(400, 1, 360, 900), torch.randn(400, 1, 512, 512))
lidc_dataloader = DataLoader(train_ds, batch_size=4, shuffle=True)
lidc_validation = DataLoader(val_ds, batch_size=4, shuffle=True)

model = FBPConvNet().to(device)
loss_fcn = torch.nn.MSELoss()
optimiser = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.99))
epochs = 100
min_valid_loss = np.inf
total_loss = np.zeros(epochs)

for epoch in range(epochs):
    model.train()
    train_loss = 0.0
    for sinogram, target_reconstruction in lidc_dataloader:
        sinogram, target_reconstruction = sinogram.to(device), target_reconstruction.to(device)
        optimiser.zero_grad()
        reconstruction = model(sinogram)
        loss = loss_fcn(reconstruction, target_reconstruction)
        loss.backward()
        train_loss += loss.item()
        optimiser.step()
    total_loss[epoch] = train_loss

    # Validation
    valid_loss = 0.0
    model.eval()
    for sinogram, target_reconstruction in lidc_validation:
        sinogram, target_reconstruction = sinogram.to(device), target_reconstruction.to(device)
        reconstruction = model(sinogram)  # leak: ANY
        loss = loss_fcn(target_reconstruction, reconstruction)
        valid_loss += loss.item()

    print(f"Epoch {epoch + 1} Training Loss: {train_loss / len(lidc_dataloader)} Validation Loss: {valid_loss / len(lidc_validation)}")
    if min_valid_loss > valid_loss:
        min_valid_loss = valid_loss
        torch.save(model.state_dict(), "FBPConvNet_min_val.pt")
