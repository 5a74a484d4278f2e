# Recall case 10 (sealed25): contrastive image-text training script resumes by loading the checkpoint straight onto the training GPU, and the loaded dict stays referenced in main() for the whole run
# Thread: https://github.com/mlfoundations/open_clip/issues/154
# Reported: resuming a ViT-g/14 run used more VRAM than the first run with the same settings (the same configuration no longer fit after a resume)
# Confirmed cause: the resume branch of main() did torch.load(args.resume, map_location=device), so the checkpoint's weights and optimizer state were materialized on the GPU next to the already-placed model, and `checkpoint` remains a live local of main() through the training loop; a contributor's commit loading it on the CPU first was reported "working" by the reporter and merged by the maintainer as PR #156 ("Load checkpoint on cpu, then loads into already on gpu model"; load_state_dict copies the CPU tensors into the GPU model)
# Class: torch.load with map_location set to the GPU for a resume whose result is only copied into existing modules (an extra GPU copy that lives as long as the loading frame)
import logging
import os

import torch
from torch import optim
from torch.cuda.amp import GradScaler

from open_clip_stub import (create_model_and_transforms, get_data, cosine_lr, evaluate,
                            train_one_epoch, init_distributed_device, parse_args)


def main():
    args = parse_args()
    device = init_distributed_device(args)

    model, preprocess_train, preprocess_val = create_model_and_transforms(
        args.model, args.pretrained, precision=args.precision, device=device)

    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device])

    optimizer = None
    scaler = None
    if args.train_data:
        exclude = lambda n, p: p.ndim < 2 or "bn" in n or "ln" in n or "bias" in n or 'logit_scale' in n
        named_parameters = list(model.named_parameters())
        gain_or_bias_params = [p for n, p in named_parameters if exclude(n, p) and p.requires_grad]
        rest_params = [p for n, p in named_parameters if not exclude(n, p) and p.requires_grad]
        optimizer = optim.AdamW(
            [{"params": gain_or_bias_params, "weight_decay": 0.},
             {"params": rest_params, "weight_decay": args.wd}],
            lr=args.lr, betas=(args.beta1, args.beta2), eps=args.eps)
        scaler = GradScaler() if args.precision == "amp" else None

    # optionally resume from a checkpoint
    start_epoch = 0
    if args.resume is not None:
        if os.path.isfile(args.resume):
            checkpoint = torch.load(args.resume, map_location=device)  # leak: ANY
            if 'epoch' in checkpoint:
                start_epoch = checkpoint["epoch"]
                sd = checkpoint["state_dict"]
                if not args.distributed and next(iter(sd.items()))[0].startswith('module'):
                    sd = {k[len('module.'):]: v for k, v in sd.items()}
                model.load_state_dict(sd)
                if optimizer is not None:
                    optimizer.load_state_dict(checkpoint["optimizer"])
                if scaler is not None and 'scaler' in checkpoint:
                    scaler.load_state_dict(checkpoint['scaler'])
                logging.info(f"=> resuming checkpoint '{args.resume}' (epoch {start_epoch})")
            else:
                model.load_state_dict(checkpoint)
                logging.info(f"=> loaded checkpoint '{args.resume}' (epoch {start_epoch})")
        else:
            logging.info("=> no checkpoint found at '{}'".format(args.resume))

    data = get_data(args, (preprocess_train, preprocess_val), epoch=start_epoch)
    total_steps = data["train"].dataloader.num_batches * args.epochs
    scheduler = cosine_lr(optimizer, args.lr, args.warmup, total_steps)

    for epoch in range(start_epoch, args.epochs):
        train_one_epoch(model, data, epoch, optimizer, scaler, scheduler, args, None)
        completed_epoch = epoch + 1
        if 'val' in data:
            evaluate(model, data, completed_epoch, args, None)
        checkpoint_dict = {
            "epoch": completed_epoch,
            "name": args.name,
            "state_dict": model.state_dict(),
            "optimizer": optimizer.state_dict(),
        }
        if scaler is not None:
            checkpoint_dict["scaler"] = scaler.state_dict()
        torch.save(checkpoint_dict, os.path.join(args.checkpoint_path, f"epoch_{completed_epoch}.pt"))


if __name__ == "__main__":
    main()
