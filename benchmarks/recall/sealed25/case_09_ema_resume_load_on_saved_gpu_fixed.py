# Fixed twin of case 09: load the EMA checkpoint with map_location='cpu' (commit f098fda2); load_state_dict then copies the weights to wherever the EMA model lives
# Thread: https://github.com/huggingface/pytorch-image-models/issues/72
# Reported: resuming an 8-GPU distributed (AMP) training run from a checkpoint went CUDA out of memory, with memory piling up on device 0; the reporter narrowed the memory explosion on device 0 down to the EMA model resume, which runs once in every process
# Confirmed cause: the maintainer pointed at ModelEma._load_checkpoint, the one checkpoint load that did not map the storages (the main resume already loads with map_location='cpu'), and committed f098fda2 "Add map_location='cpu' to ModelEma resume, should improve #72"; without it every rank deserializes the whole checkpoint (weights, EMA weights, optimizer state) onto cuda:0, the GPU it was saved from, before copying the EMA weights to its own device; the issue was closed
# Class: torch.load of a GPU-saved checkpoint without map_location in every DDP rank (tensors land on the saving GPU, cuda:0)
import logging
import os
from collections import OrderedDict
from copy import deepcopy

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from timm_stub import create_model, create_optimizer, resume_checkpoint, parse_args


class ModelEma:
    """Keeps an exponential moving average of the model's state_dict."""

    def __init__(self, model, decay=0.9999, device='', resume=''):
        self.ema = deepcopy(model)
        self.ema.eval()
        self.decay = decay
        self.device = device
        if device:
            self.ema.to(device=device)
        self.ema_has_module = hasattr(self.ema, 'module')
        if resume:
            self._load_checkpoint(resume)
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def _load_checkpoint(self, checkpoint_path):
        checkpoint = torch.load(checkpoint_path, map_location='cpu')
        assert isinstance(checkpoint, dict)
        if 'state_dict_ema' in checkpoint:
            new_state_dict = OrderedDict()
            for k, v in checkpoint['state_dict_ema'].items():
                if self.ema_has_module:
                    name = 'module.' + k if not k.startswith('module') else k
                else:
                    name = k
                new_state_dict[name] = v
            self.ema.load_state_dict(new_state_dict)
            logging.info("Loaded state_dict_ema")
        else:
            logging.warning("Failed to find state_dict_ema, starting from loaded model weights")

    def update(self, model):
        needs_module = hasattr(model, 'module') and not self.ema_has_module
        with torch.no_grad():
            msd = model.state_dict()
            for k, ema_v in self.ema.state_dict().items():
                if needs_module:
                    k = 'module.' + k
                model_v = msd[k].detach()
                if self.device:
                    model_v = model_v.to(device=self.device)
                ema_v.copy_(ema_v * self.decay + (1. - self.decay) * model_v)


def main():
    args = parse_args()
    args.distributed = int(os.environ.get('WORLD_SIZE', '1')) > 1
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend='nccl', init_method='env://')

    model = create_model(args.model, num_classes=args.num_classes)
    model.cuda()
    optimizer = create_optimizer(args, model)

    resume_state, resume_epoch = {}, None
    if args.resume:
        # the main checkpoint is loaded with map_location='cpu' inside resume_checkpoint
        resume_state, resume_epoch = resume_checkpoint(model, args.resume)
    if resume_state and 'optimizer' in resume_state:
        optimizer.load_state_dict(resume_state['optimizer'])
    del resume_state

    model_ema = None
    if args.model_ema:
        # created after .cuda() but before the DDP wrapper, in every process
        model_ema = ModelEma(model, decay=args.model_ema_decay,
                             device='cpu' if args.model_ema_force_cpu else '',
                             resume=args.resume)

    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank])

    loss_fn = nn.CrossEntropyLoss().cuda()
    start_epoch = resume_epoch or 0
    for epoch in range(start_epoch, args.epochs):
        for input, target in args.loader:
            input, target = input.cuda(), target.cuda()
            loss = loss_fn(model(input), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if model_ema is not None:
                model_ema.update(model)


if __name__ == '__main__':
    main()
