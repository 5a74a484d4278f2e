# Recall case 06 (sealed17): road-following regression training sums the loss tensors themselves into train_loss / test_loss (test loop with grad on)
# Thread: https://github.com/NVIDIA-AI-IOT/jetbot/pull/117
# Reported: training the road-following model on the Jetson Nano keeps eating GPU memory over the epochs until the notebook is killed
# Confirmed cause: `train_loss += loss` and `test_loss += loss` add the loss tensors (with their autograd graphs, the test loop also runs with grad on) into running sums that keep every batch's graph alive for the whole epoch, and best_loss keeps one across epochs; the PR accumulates float(loss) instead, and the maintainer acknowledged it as a good catch
# Class: total_loss += loss
import torch
import torch.nn.functional as F
import torch.optim as optim
import torchvision

NUM_EPOCHS = 70
BEST_MODEL_PATH = "best_steering_model_xy.pth"


def build_model(device):
    model = torchvision.models.resnet18(pretrained=True)
    model.fc = torch.nn.Linear(512, 2)
    return model.to(device)


def train(train_loader, test_loader, device=torch.device("cuda")):
    model = build_model(device)
    optimizer = optim.Adam(model.parameters())
    best_loss = 1e9

    for epoch in range(NUM_EPOCHS):
        model.train()
        train_loss = 0.0
        for images, labels in iter(train_loader):
            images = images.to(device)
            labels = labels.to(device)
            optimizer.zero_grad()
            outputs = model(images)
            loss = F.mse_loss(outputs, labels)
            train_loss += loss  # leak: ANY
            loss.backward()
            optimizer.step()
        train_loss /= len(train_loader)

        model.eval()
        test_loss = 0.0
        for images, labels in iter(test_loader):
            images = images.to(device)
            labels = labels.to(device)
            outputs = model(images)
            loss = F.mse_loss(outputs, labels)
            test_loss += loss  # leak: ANY
        test_loss /= len(test_loader)

        print("%f, %f" % (train_loss, test_loss))
        if test_loss < best_loss:
            torch.save(model.state_dict(), BEST_MODEL_PATH)
            best_loss = test_loss
