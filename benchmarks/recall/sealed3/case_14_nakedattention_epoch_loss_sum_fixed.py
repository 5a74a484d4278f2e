# Fixed twin of case 14: epoch loss/accuracy accumulated with += on tensors that carry the batch graph
# Thread: https://github.com/jostmey/NakedAttention/issues/1
# Reported: running the training script in a Kaggle notebook quickly ran out of RAM
# Confirmed cause: e_train += e_batch/len(loader_train) builds one graph that grows over the whole epoch; the reporter's
#   .detach() change brought memory back in bounds and the maintainer applied it ("Fixed. Thanks!!")
# Class: total += loss across batches (running sum keeps every batch graph)
import torch
import torch.nn as nn
import torchvision
import torchvision.transforms as transforms


class NakedAttention(nn.Module):
    def __init__(self, num_features=784, num_classes=10, width=64):
        super().__init__()
        self.query = nn.Linear(1, width)
        self.key = nn.Linear(1, width)
        self.value = nn.Linear(1, width)
        self.out = nn.Linear(width, num_classes)

    def forward(self, x):
        x = x.flatten(1).unsqueeze(-1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        w = torch.softmax(q @ k.transpose(1, 2) / k.size(-1) ** 0.5, dim=-1)
        return self.out((w @ v).mean(1))


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = torchvision.datasets.MNIST("./data", train=True, download=True, transform=transforms.ToTensor())
    loader_train = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True)
    model = NakedAttention().to(device)
    probability = nn.Softmax(dim=1)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)

    for epoch in range(16):
        e_train = 0.0
        a_train = 0.0
        model.train()
        for xs_batch, ys_batch in loader_train:
            xs_batch, ys_batch = xs_batch.to(device), ys_batch.to(device)
            ls_batch = model(xs_batch)
            ps_batch = probability(ls_batch)
            e_batch = loss_fn(ls_batch, ys_batch)
            a_batch = torch.mean((torch.argmax(ps_batch, 1) == ys_batch).float())
            optimizer.zero_grad()
            e_batch.backward(retain_graph=False)
            optimizer.step()
            e_train += e_batch.detach() / len(loader_train)
            a_train += a_batch.detach() / len(loader_train)
        print("epoch", epoch, "loss", float(e_train), "accuracy", float(a_train))


if __name__ == "__main__":
    main()
