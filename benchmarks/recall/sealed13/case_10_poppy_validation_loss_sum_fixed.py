# Fixed twin of case 10: each validation batch loss is converted with .item() before it is summed
# Thread: https://github.com/HongtengXu/PoPPy/pull/2
# Reported: "GPU memory leak bug fixed" (PR title) when fitting Hawkes-process models on GPU with a validation set
# Confirmed cause: `loss += self.loss_function(...)` in validation() accumulates graph-attached tensors (the model runs with grad on); merged fix (owner) accumulates `.item()` instead
# Class: `total += loss` without .item() in an evaluation loop
import time
import logging

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


class HawkesIntensity(nn.Module):
    def __init__(self, num_type=500, memory=64):
        super().__init__()
        self.mu = nn.Embedding(num_type, 1)
        self.alpha = nn.Embedding(num_type, num_type)
        self.decay = nn.Parameter(torch.ones(1))

    def forward(self, batch):
        ci, dts, cjs = batch["ci"], batch["dts"], batch["cjs"]
        kernel = torch.exp(-self.decay * dts)
        excite = (self.alpha(ci).gather(1, cjs) * kernel).sum(dim=1, keepdim=True)
        lambda_t = self.mu(ci) + excite
        Lambda_t = lambda_t * batch["window"]
        return lambda_t, Lambda_t


def neg_log_likelihood(lambda_t, Lambda_t, ci):
    return (Lambda_t - torch.log(lambda_t + 1e-8)).sum()


class PointProcessModel:
    def __init__(self, num_type):
        self.lambda_model = HawkesIntensity(num_type)
        self.loss_function = neg_log_likelihood

    def validation(self, dataloader, use_cuda):
        device = torch.device("cuda:0" if use_cuda else "cpu")
        self.lambda_model.to(device)
        self.lambda_model.eval()
        start = time.time()
        loss = 0
        for batch_idx, batch in enumerate(dataloader):
            batch = {k: v.to(device) for k, v in batch.items()}
            lambda_t, Lambda_t = self.lambda_model(batch)
            loss += self.loss_function(lambda_t, Lambda_t, batch["ci"]).item()
            if batch_idx % 100 == 0:
                logger.info("Validation [%d/%d] Time=%.2fsec", batch_idx, len(dataloader), time.time() - start)
        return loss / len(dataloader)


if __name__ == "__main__":
    model = PointProcessModel(num_type=500)
    loader = [{"ci": torch.randint(0, 500, (512, 1)), "cjs": torch.randint(0, 500, (512, 64)),
               "dts": torch.rand(512, 64), "window": torch.rand(512, 1)} for _ in range(2000)]
    print(model.validation(loader, use_cuda=True))
