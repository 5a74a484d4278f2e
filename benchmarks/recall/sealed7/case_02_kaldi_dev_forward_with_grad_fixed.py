# Fixed twin of case 02: the dev/test forward runs under torch.no_grad(), so no graph is built or kept
# Thread: https://github.com/mravanelli/pytorch-kaldi/pull/41
# Reported: GPU memory climbs steadily during the dev (not training) forward pass, forcing much smaller batch sizes
# Confirmed cause: forward for dev/test was not under torch.no_grad(), so graphs (incl. recurrent state) accumulate across minibatches; PR merged after the maintainer tested it
# Class: evaluation forward (eval branch of a shared train/eval loop) with grad enabled
import torch
import torch.nn as nn


class LiGRU(nn.Module):
    def __init__(self, inp_dim, hidden, n_out):
        super().__init__()
        self.wx = nn.Linear(inp_dim, hidden)
        self.uh = nn.Linear(hidden, hidden, bias=False)
        self.out = nn.Linear(hidden, n_out)

    def forward(self, x):
        h = torch.zeros(x.shape[1], self.uh.in_features, device=x.device)
        hs = []
        for t in range(x.shape[0]):
            h = torch.relu(self.wx(x[t]) + self.uh(h))
            hs.append(h)
        return self.out(torch.stack(hs))


def forward_model(model, cost, inp, lab):
    out = model(inp)
    out = out.view(-1, out.shape[-1])
    loss = cost(out, lab.view(-1))
    err = (out.argmax(1) != lab.view(-1)).float().mean()
    return {"loss_final": loss, "err_final": err}


def run_nn(model, optimizer, batches, to_do):
    cost = nn.CrossEntropyLoss()
    loss_sum = 0
    err_sum = 0
    if to_do == "train":
        model.train()
    else:
        model.eval()
    for inp, lab in batches:
        inp, lab = inp.cuda(), lab.cuda()
        if to_do == "train":
            outs_dict = forward_model(model, cost, inp, lab)
            optimizer.zero_grad()
            outs_dict["loss_final"].backward()
            optimizer.step()
        else:
            with torch.no_grad():
                outs_dict = forward_model(model, cost, inp, lab)
        loss_sum = loss_sum + outs_dict["loss_final"].detach()
        err_sum = err_sum + outs_dict["err_final"]
    return float(loss_sum) / len(batches), float(err_sum) / len(batches)


if __name__ == "__main__":
    model = LiGRU(40, 550, 1900).cuda()
    opt = torch.optim.RMSprop(model.parameters(), lr=0.0008)
    dev = [(torch.randn(200, 8, 40), torch.randint(0, 1900, (200, 8))) for _ in range(300)]
    print(run_nn(model, opt, dev, "valid"))
