# Recall case 07 (sealed9): the training script switches autograd anomaly detection on process-wide and leaves it on for the whole run
# Thread: https://github.com/GuyTevet/motion-diffusion-model/pull/81
# Reported: low GPU utilization / slow epochs while training the motion diffusion model (issue #80)
# Confirmed cause: a bare torch.autograd.set_detect_anomaly(True) in the training loop kept anomaly mode on for every step; merged one-line PR scopes it with `with`, a later tester measured 45 s -> 30 s per epoch
# Class: runtime debugging tool (anomaly detection) left on during training
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class MDM(nn.Module):
    def __init__(self, njoints=263, latent=512, layers=8):
        super().__init__()
        self.input_process = nn.Linear(njoints, latent)
        layer = nn.TransformerEncoderLayer(latent, 4, 1024, batch_first=True)
        self.seqTransEncoder = nn.TransformerEncoder(layer, layers)
        self.output_process = nn.Linear(latent, njoints)
        self.embed_timestep = nn.Embedding(1000, latent)

    def forward(self, x, t):
        h = self.input_process(x) + self.embed_timestep(t)[:, None]
        return self.output_process(self.seqTransEncoder(h))


class TrainLoop:
    def __init__(self, model, data, num_steps=600000):
        self.model = model
        self.data = data
        self.num_steps = num_steps
        self.opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def run_step(self, motion):
        t = torch.randint(0, 1000, (motion.shape[0],), device=motion.device)
        noise = torch.randn_like(motion)
        pred = self.model(motion + noise, t)
        loss = F.mse_loss(pred, motion)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def run_loop(self):
        torch.autograd.set_detect_anomaly(True)  # leak: ANY
        step = 0
        while step < self.num_steps:
            for (motion,) in self.data:
                self.run_step(motion.cuda())
                step += 1


if __name__ == "__main__":
    dataset = TensorDataset(torch.randn(4096, 196, 263))
    TrainLoop(MDM().cuda(), DataLoader(dataset, batch_size=64, shuffle=True)).run_loop()
