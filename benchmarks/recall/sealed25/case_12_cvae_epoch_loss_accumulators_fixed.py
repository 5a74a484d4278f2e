# Fixed twin of case 12: accumulate loss.item(), bce_loss.item() and kl_loss.item() (commit 65b82bf, PR #19)
# Thread: https://github.com/girafe-ai/ml-course/pull/19
# Reported: memory leak while running the convolutional CVAE homework: "all these losses are added into one graph, and training eats several gigabytes"
# Confirmed cause: the merged PR (maintainer: "Thanks for the fix!", commit 65b82bf): train() adds loss, bce_loss and kl_loss, tensors still attached to the graph, into loss_accumulator / bce_acc / kl_acc, so each accumulator becomes a tensor whose graph holds every batch of the epoch; the fix accumulates loss.item(), bce_loss.item() and kl_loss.item()
# Class: running loss sum built from graph-attached loss tensors (total_loss += loss)
import numpy as np
import torch
import torchvision
import tqdm
from torch import nn
from torchvision import transforms

device = torch.device('cuda:0') if torch.cuda.is_available() else torch.device('cpu')


class Rescale(object):
    def __call__(self, image):
        image = image - image.min()
        return image / image.max()


class Flatten(nn.Module):
    def forward(self, x):
        return torch.flatten(x, start_dim=1, end_dim=-1)


class RestoreShape(nn.Module):
    def __init__(self, initial_shape):
        super().__init__()
        self.initial_shape = initial_shape

    def forward(self, x):
        return x.view([-1] + list(self.initial_shape))


train_loader = torch.utils.data.DataLoader(
    dataset=torchvision.datasets.MNIST(root='./', train=True, download=True,
                                       transform=transforms.Compose([transforms.ToTensor(), Rescale()])),
    batch_size=256, shuffle=True, num_workers=1)
test_loader = torch.utils.data.DataLoader(
    dataset=torchvision.datasets.MNIST(root='./', train=False,
                                       transform=transforms.Compose([transforms.ToTensor(), Rescale()])),
    batch_size=256, shuffle=False, num_workers=1)


class ConvolutionalCVAE(nn.Module):
    def __init__(self, intermediate_dims, latent_dim, input_shape):
        super().__init__()
        input_dim = int(np.prod(input_shape))
        self.encoder = nn.Sequential(
            Flatten(),
            nn.Linear(input_dim, intermediate_dims[0]), nn.ReLU(),
            nn.BatchNorm1d(intermediate_dims[0]), nn.Dropout(0.3),
            nn.Linear(intermediate_dims[0], intermediate_dims[1]), nn.ReLU(),
            nn.BatchNorm1d(intermediate_dims[1]), nn.Dropout(0.3))
        self.mu_repr = nn.Linear(intermediate_dims[1], latent_dim)
        self.log_sigma_repr = nn.Linear(intermediate_dims[1], latent_dim)
        self.decoder = nn.Sequential(
            nn.Linear(latent_dim, intermediate_dims[1]), nn.LeakyReLU(),
            nn.BatchNorm1d(intermediate_dims[1]), nn.Dropout(0.3),
            nn.Linear(intermediate_dims[1], intermediate_dims[0]), nn.LeakyReLU(),
            nn.BatchNorm1d(intermediate_dims[0]), nn.Dropout(0.3),
            nn.Linear(intermediate_dims[0], input_dim), nn.Sigmoid(),
            RestoreShape(input_shape))

    def forward(self, x):
        latent_repr = self.encoder(x)
        mu_values = self.mu_repr(latent_repr)
        log_sigma_values = self.log_sigma_repr(latent_repr)
        raw_sample = torch.randn_like(mu_values)
        latent_sample = mu_values + raw_sample * torch.exp(log_sigma_values)
        return self.decoder(latent_sample), latent_sample, mu_values, log_sigma_values


example_x = next(iter(train_loader))[0][0]
model = ConvolutionalCVAE([256, 128], 2, example_x.shape).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-4)
loss_func = torch.nn.modules.loss.BCELoss()


def get_test_predictions(model, test_loader):
    model.eval()
    mu_list, log_sigma_list = [], []
    for test_batch in test_loader:
        out = model(test_batch[0].to(device))
        _, _, mu_values, log_sigma_values = [x.detach().cpu() for x in out]
        mu_list.append(mu_values)
        log_sigma_list.append(log_sigma_values)
    return torch.cat(mu_list, dim=0), torch.cat(log_sigma_list, dim=0)


def train(num_epochs):
    epochs, latent_distrs = [], []
    for epoch_num in tqdm.trange(num_epochs):
        model.train()
        loss_accumulator = 0.
        bce_acc = 0.
        kl_acc = 0.
        for batch_x, batch_label in train_loader:
            batch_x = batch_x.to(device)
            predictions, latent, mu_values, log_sigma_values = model(batch_x)

            kl_loss = 0.5 * torch.sum(torch.exp(2 * log_sigma_values) + mu_values ** 2
                                      - 1. - 2 * log_sigma_values) / batch_x.shape[0]
            bce_loss = 28 * 28 * loss_func(predictions, batch_x)
            loss = (bce_loss + kl_loss) / 2. / 28. / 28.
            loss.backward()
            opt.step()
            opt.zero_grad()

            loss_accumulator += loss.item() / (len(train_loader.dataset))
            bce_acc += bce_loss.item() / (len(train_loader.dataset))
            kl_acc += kl_loss.item() / (len(train_loader.dataset))

        if epoch_num % 5 == 0:
            print('Epoch num: {}\nTraining loss={:.4f}, KL divergence={:.4f}, BCE Loss={:.4f}'.format(
                epoch_num, loss_accumulator, kl_acc, bce_acc))
            epochs.append(epoch_num)
            latent_distrs.append(get_test_predictions(model, test_loader))
    return epochs, latent_distrs


epochs, latent_distrs = train(50)
