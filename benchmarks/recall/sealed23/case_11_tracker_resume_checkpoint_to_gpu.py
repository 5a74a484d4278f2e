# Recall case 11 (sealed23): tracker trainer resumes from its latest checkpoint (network, optimizer state, stats) with torch.load and no map_location, so every saved CUDA tensor is deserialized onto the GPU next to the live network
# Thread: https://github.com/chenxin-dlut/TransT/issues/61
# Reported: the reporter asked why the checkpoint loader passes map_location='cpu' although the model was saved from the GPU: after removing that argument, reloading the checkpoint when resuming interrupted training runs out of GPU memory
# Confirmed cause: reporter-only: the reporter's own A/B (with the repository's map_location='cpu' resuming fits; without it the resume runs out of GPU memory); no maintainer reply. The mechanism is torch.load's documented default: saved CUDA tensors (net and optimizer state) are restored on the GPU they were saved from, next to the live modules, before load_state_dict copies them
# Class: torch.load onto the GPU
import glob
import os

import torch


class BaseTrainer:
    """Trains an actor (network + loss) and saves/loads checkpoints of the whole training state."""

    def __init__(self, actor, loaders, optimizer, settings, lr_scheduler=None):
        self.actor = actor
        self.loaders = loaders
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.settings = settings
        self.epoch = 0
        self.stats = {}
        self._checkpoint_dir = os.path.join(settings.env.workspace_dir, 'checkpoints')
        self.device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
        self.actor.to(self.device)

    def train(self, max_epochs, load_latest=False):
        if load_latest:
            self.load_checkpoint()
        for epoch in range(self.epoch + 1, max_epochs + 1):
            self.epoch = epoch
            self.train_epoch()
            if self.lr_scheduler is not None:
                self.lr_scheduler.step()
            self.save_checkpoint()

    def train_epoch(self):
        raise NotImplementedError

    def save_checkpoint(self):
        net = self.actor.net.module if hasattr(self.actor.net, 'module') else self.actor.net
        state = {
            'epoch': self.epoch,
            'actor_type': type(self.actor).__name__,
            'net_type': type(net).__name__,
            'net': net.state_dict(),
            'optimizer': self.optimizer.state_dict(),
            'stats': self.stats,
            'settings': self.settings,
        }
        path = os.path.join(self._checkpoint_dir, '{}_ep{:04d}.pth.tar'.format(type(net).__name__, self.epoch))
        torch.save(state, path)

    def load_checkpoint(self, checkpoint=None):
        net = self.actor.net.module if hasattr(self.actor.net, 'module') else self.actor.net
        net_type = type(net).__name__
        if checkpoint is None:
            checkpoint_list = sorted(glob.glob(os.path.join(self._checkpoint_dir, '{}_ep*.pth.tar'.format(net_type))))
            if not checkpoint_list:
                print('No matching checkpoint file found')
                return False
            checkpoint_path = checkpoint_list[-1]
        else:
            checkpoint_path = checkpoint

        checkpoint_dict = torch.load(checkpoint_path)  # leak: ANY

        assert net_type == checkpoint_dict['net_type'], 'Network is not of correct type.'
        for key in ('epoch', 'net', 'optimizer', 'stats'):
            if key == 'net':
                net.load_state_dict(checkpoint_dict[key])
            elif key == 'optimizer':
                self.optimizer.load_state_dict(checkpoint_dict[key])
            else:
                setattr(self, key, checkpoint_dict[key])
        if self.lr_scheduler is not None:
            self.lr_scheduler.last_epoch = self.epoch
        return True
