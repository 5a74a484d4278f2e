# Thread: https://github.com/Aoi-hosizora/FFDNet_pytorch/issues/4
# Reported: with CUDA enabled, training takes little over 1 GB, but every validation pass (after
#   5 epochs) dies with "CUDA out of memory", whatever the size of the training data.
# Confirmed cause: the per-epoch sums train_losses / val_losses were built with `+=` on the loss
#   tensors, so every batch's autograd graph stayed referenced by the running sum; during
#   validation (no backward ever frees it) all the activations of the whole pass were kept. The
#   reporter fixed it: "I solved this problem by adding float() ... train_losses +=
#   float(train_loss), val_losses += float(val_loss)".
# Class: running sum of loss tensors kept with their graph (training and validation)
import time

import torch
import torch.nn as nn
import torch.optim as optim


def add_batch_noise(images, noise_sigma):
    return images + torch.randn_like(images) * noise_sigma


def train(args, model, train_dataloader, val_dataloader, train_noises, val_noises):
    device = torch.device("cuda" if args.cuda else "cpu")
    model = model.to(device)
    loss_fn = nn.MSELoss(reduction="sum")
    optimizer = optim.Adam(model.parameters(), lr=args.learning_rate)

    for epoch_idx in range(args.epoches):
        loss_idx = 0
        train_losses = 0
        model.train()
        start_time = time.time()
        for batch_idx, batch_data in enumerate(train_dataloader):
            for int_noise_sigma in train_noises:
                noise_sigma = int_noise_sigma / 255
                new_images = add_batch_noise(batch_data, noise_sigma).to(device)
                sigma_map = torch.full((new_images.shape[0],), noise_sigma, device=device)

                images_pred = model(new_images, sigma_map)
                train_loss = loss_fn(images_pred, batch_data.to(device))
                train_losses += train_loss  # leak: ANY
                loss_idx += 1

                optimizer.zero_grad()
                train_loss.backward()
                optimizer.step()
        train_losses /= loss_idx
        print(f"Epoch {epoch_idx + 1}, Avg_Train_Loss: {train_losses}, {int(time.time() - start_time)}s")

        if (epoch_idx + 1) % args.val_epoch != 0:
            continue
        loss_idx = 0
        val_losses = 0
        model.eval()
        for batch_idx, batch_data in enumerate(val_dataloader):
            for int_noise_sigma in val_noises:
                noise_sigma = int_noise_sigma / 255
                new_images = add_batch_noise(batch_data, noise_sigma).to(device)
                sigma_map = torch.full((new_images.shape[0],), noise_sigma, device=device)

                images_pred = model(new_images, sigma_map)
                val_loss = loss_fn(images_pred, batch_data.to(device))
                val_losses += val_loss  # leak: ANY
                loss_idx += 1
        val_losses /= loss_idx
        print(f"Epoch {epoch_idx + 1}, Avg_Val_Loss: {val_losses}")

        if (epoch_idx + 1) % args.save_checkpoints == 0:
            torch.save(model.state_dict(), args.model_path + "net_checkpoint.pth")
