# Recall case 10 (sealed2): an accuracy test every 100 steps, inside the training loop, with autograd on
# Thread: https://github.com/pytorch/pytorch/issues/4050
# Reported: training runs until the first test at step 100; the next training forward then dies with OOM.
# Confirmed cause: the maintainers: the test forward builds a graph that is never backpropagated and
#   stays referenced by `out`, `eq`, `predict_label` while the next training batch runs ("you are
#   holding that test graph"); fix by not building it (`volatile` then, `torch.no_grad()` now) or by
#   dropping the references after the test.
# Class: an evaluation forward with grad on, interleaved in the training loop, whose outputs outlive it
import torch

from p3d_model import P3D199
from data import read_batch


def main(files, labels, test_files, test_labels, step=100000):
    model = P3D199(num_classes=101).cuda()
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    i = 1
    while i < step:
        if i % 100 == 0:
            test_data, test_label = read_batch(test_files, test_labels)
            out = model(test_data.float().cuda())  # leak: ANY
            _, predict_label = torch.max(out, dim=1)
            eq = torch.eq(predict_label, test_label.cuda())
            print("test accuracy", eq.float().mean().item())
        else:
            data, data_label = read_batch(files, labels)
            out = model(data.float().cuda())
            loss = criterion(out, data_label.cuda())
            print(i, loss.item())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        i = i + 1
    torch.save(model.state_dict(), "p3d199.pth")


if __name__ == "__main__":
    from data import load_split
    main(*load_split("train"), *load_split("test"))
