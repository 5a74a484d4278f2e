# Recall case 01 (sealed4): WGAN-GP training loop appends the raw d_loss / g_loss tensors to history lists every step
# Thread: https://github.com/mulkong/f-AnoGAN_with_Pytorch/issues/3
# Reported: GPU memory keeps increasing while training the f-AnoGAN MNIST notebook until it runs out
# Confirmed cause: d_losses.append(d_loss) / g_losses.append(g_loss) kept every step's loss tensor and its graph; the reporter switched to d_loss.item() / g_loss.item() and the growth stopped
# Class: loss tensors appended to a Python history list for later plotting (missing .item())
import torch
import torch.nn as nn
import torch.autograd as autograd
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
latent_dim = 100
img_shape = (1, 28, 28)
n_epochs = 200
n_critic = 5
lambda_gp = 10


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(
            nn.Linear(latent_dim, 128), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(128, 256), nn.BatchNorm1d(256), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(256, 784), nn.Tanh(),
        )

    def forward(self, z):
        return self.model(z).view(z.size(0), *img_shape)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Linear(784, 256), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(256, 128), nn.LeakyReLU(0.2, inplace=True),
        )
        self.last_layer = nn.Linear(128, 1)

    def forward(self, img):
        return self.last_layer(self.features(img.view(img.size(0), -1)))


def compute_gradient_penalty(D, real_samples, fake_samples):
    alpha = torch.rand(real_samples.size(0), 1, 1, 1, device=device)
    interpolates = (alpha * real_samples + (1 - alpha) * fake_samples).requires_grad_(True)
    d_interpolates = D(interpolates)
    gradients = autograd.grad(
        outputs=d_interpolates, inputs=interpolates,
        grad_outputs=torch.ones_like(d_interpolates),
        create_graph=True, retain_graph=True, only_inputs=True,
    )[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


dataloader = DataLoader(
    datasets.MNIST("./data", train=True, download=True,
                   transform=transforms.Compose([transforms.ToTensor(), transforms.Normalize([0.5], [0.5])])),
    batch_size=64, shuffle=True,
)

generator = Generator().to(device)
discriminator = Discriminator().to(device)
optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))

d_losses = []
g_losses = []
for epoch in range(n_epochs):
    for i, (imgs, _) in enumerate(dataloader):
        real_imgs = imgs.to(device)

        optimizer_D.zero_grad()
        z = torch.randn(imgs.size(0), latent_dim, device=device)
        fake_imgs = generator(z)
        real_validity = discriminator(real_imgs)
        fake_validity = discriminator(fake_imgs.detach())
        gradient_penalty = compute_gradient_penalty(discriminator, real_imgs.data, fake_imgs.data)
        d_loss = -torch.mean(real_validity) + torch.mean(fake_validity) + lambda_gp * gradient_penalty
        d_loss.backward()
        optimizer_D.step()

        optimizer_G.zero_grad()
        if i % n_critic == 0:
            fake_imgs = generator(z)
            fake_validity = discriminator(fake_imgs)
            g_loss = -torch.mean(fake_validity)
            g_loss.backward()
            optimizer_G.step()

            d_losses.append(d_loss)  # leak: ANY
            g_losses.append(g_loss)  # leak: ANY

    print(f"[Epoch {epoch}/{n_epochs}] [D loss: {d_losses[-1]:.4f}] [G loss: {g_losses[-1]:.4f}]")

torch.save(generator.state_dict(), "generator.pt")
torch.save(discriminator.state_dict(), "discriminator.pt")
