# Thread: https://github.com/lanpa/tensorboardX/issues/204
# Reported: host memory keeps growing over a long run that logs train/val curves every step with
#   SummaryWriter.add_scalars (the docs warn it "keeps logged scalars in memory").
# Confirmed cause: tensorboardX's add_scalars appends every logged value to the writer's
#   scalar_dict, which is only emptied by a manual export_scalars_to_json call, so the dict grows
#   with every step; add_scalar no longer keeps values in memory (maintainer lanpa, and #135).
# Class: logger / experiment tracker keeps a copy of every logged value
import torch
import torch.nn as nn
from tensorboardX import SummaryWriter


def fit(model, train_loader, val_batch, optimizer, criterion, device, epochs, log_dir="runs/exp"):
    writer = SummaryWriter(log_dir)
    step = 0
    val_x, val_y = val_batch[0].to(device), val_batch[1].to(device)
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()

            model.eval()
            with torch.no_grad():
                val_loss = criterion(model(val_x), val_y)
            model.train()

            writer.add_scalar("loss/train", loss.item(), step)
            writer.add_scalar("loss/val", val_loss.item(), step)
            step += 1
    writer.close()


if __name__ == "__main__":
    device = torch.device("cuda")
    model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = [(torch.randn(64, 128), torch.randint(0, 10, (64,))) for _ in range(1000)]
    fit(model, loader, loader[0], optimizer, nn.CrossEntropyLoss(), device, epochs=100)
