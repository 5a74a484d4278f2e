# Recall case 10 (sealed5): vocoder trainer's evaluation step runs generator and discriminators with autograd enabled
# Thread: https://github.com/kan-bayashi/ParallelWaveGAN/pull/26
# Reported: additional memory consumption during evaluation
# Confirmed cause: maintainer's merged bugfix PR adds torch.no_grad() to evaluation
# Class: evaluation helper running forward passes with grad on
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, criterion, data_loader, device):
        self.model = model
        self.criterion = criterion
        self.data_loader = data_loader
        self.device = device
        self.total_eval_loss = {}

    def _eval_step(self, batch):  # leak: ANY
        x, y = [t.to(self.device) for t in batch]
        y_ = self.model["generator"](*x) if isinstance(x, (list, tuple)) else self.model["generator"](x)
        sc_loss, mag_loss = self.criterion["stft"](y_.squeeze(1), y.squeeze(1))
        p_ = self.model["discriminator"](y_)
        adv_loss = F.mse_loss(p_, p_.new_ones(p_.size()))
        p = self.model["discriminator"](y)
        dis_loss = F.mse_loss(p, p.new_ones(p.size())) + F.mse_loss(p_, p_.new_zeros(p_.size()))
        for name, val in (("sc", sc_loss), ("mag", mag_loss), ("adv", adv_loss), ("dis", dis_loss)):
            self.total_eval_loss[name] = self.total_eval_loss.get(name, 0.0) + val.item()

    def _eval_epoch(self):
        for k in self.model:
            self.model[k].eval()
        for batch in self.data_loader["dev"]:
            self._eval_step(batch)
        for k in self.model:
            self.model[k].train()
