# Fixed twin of case 50: the figures are closed once saved, and a non-interactive backend is used.
# Thread: https://github.com/AIS-Bonn/OCVP-object-centric-video-prediction/pull/3
# Class: plotting objects created per logging step and never released (host memory)
import matplotlib
import numpy as np
import torch

matplotlib.use("Agg")
from matplotlib import pyplot as plt  # noqa: E402


def visualize_sequence(sequence, savepath=None, tag="sequence", n_cols=10, tb_writer=None, iter=0):
    """Grid with the frames of one sequence."""
    n_frames = sequence.shape[0]
    n_rows = int(np.ceil(n_frames / n_cols))
    fig, ax = plt.subplots(n_rows, n_cols)
    fig.set_size_inches(3 * n_cols, 3 * n_rows)
    frames = []
    for i in range(n_frames):
        row, col = i // n_cols, i % n_cols
        a = ax[row, col] if n_rows > 1 else ax[col]
        f = sequence[i].permute(1, 2, 0).cpu().detach().clamp(0, 1)
        a.imshow(f)
        a.set_title(f"Frame {i}")
        a.axis("off")
        frames.append(f)
    plt.tight_layout()
    if savepath is not None:
        plt.savefig(savepath)
    if tb_writer is not None:
        tb_writer.add_images(tag, torch.stack(frames).permute(0, 3, 1, 2), iter)
    plt.close(fig)


class Trainer:
    def __init__(self, model, optimizer, train_loader, writer, plots_path, exp_params):
        self.model = model
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.writer = writer
        self.plots_path = plots_path
        self.exp_params = exp_params
        self.iter_ = 0

    def train_one_epoch(self, epoch):
        self.model.train()
        for i, (videos, _) in enumerate(self.train_loader):
            videos = videos.cuda()
            recons, _ = self.model(videos)
            loss = torch.nn.functional.mse_loss(recons, videos)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if self.iter_ % self.exp_params["image_log_frequency"] == 0:
                visualize_sequence(videos[0], savepath=f"{self.plots_path}/target_{self.iter_}.png",
                                   tag="target", tb_writer=self.writer, iter=self.iter_)
                visualize_sequence(recons[0], savepath=f"{self.plots_path}/recons_{self.iter_}.png",
                                   tag="recons", tb_writer=self.writer, iter=self.iter_)
            self.iter_ += 1
