# Fixed twin of case 11: accumulate Python numbers (loss.item()) into the epoch totals, the form the reporter shows commented out
# Thread: https://github.com/pytorch/pytorch/issues/144181
# Reported: averaging the discriminator/generator losses with epoch_disc_sum += loss_disc and epoch_gen_sum += loss_gen_all eats about 3 MB of RAM per step (about 10 GB over a 3500-step epoch) until the epoch ends
# Confirmed cause: the reporter isolated the two running sums as the cause (the .item() form, left commented out in the report, does not grow): adding the attached loss tensors chains every step's loss graph into the epoch totals, so nothing from the epoch can be freed until the totals are reset
# Class: total_loss += loss (two running sums in a GAN loop)
import torch


def train_epoch(net_g, net_d, optim_g, optim_d, scaler, data_iterator, discriminator_loss, generator_loss, device):
    epoch_disc_sum = 0.0
    epoch_gen_sum = 0.0
    n_steps = 0
    for batch_idx, (phone, pitch, spec, wave) in data_iterator:
        use_amp = device.type == "cuda"
        with torch.autocast(device_type=device.type, enabled=use_amp):
            y_hat = net_g(phone, pitch, spec)
            y_d_hat_r, y_d_hat_g = net_d(wave, y_hat.detach())
            loss_disc = discriminator_loss(y_d_hat_r, y_d_hat_g)
        epoch_disc_sum += loss_disc.item()
        optim_d.zero_grad()
        scaler.scale(loss_disc).backward()
        scaler.unscale_(optim_d)
        torch.nn.utils.clip_grad_norm_(net_d.parameters(), max_norm=1000.0)
        scaler.step(optim_d)

        with torch.autocast(device_type=device.type, enabled=use_amp):
            _, y_d_hat_g = net_d(wave, y_hat)
            loss_gen_all = generator_loss(y_d_hat_g, y_hat, wave)
        epoch_gen_sum += loss_gen_all.item()
        optim_g.zero_grad()
        scaler.scale(loss_gen_all).backward()
        scaler.unscale_(optim_g)
        torch.nn.utils.clip_grad_norm_(net_g.parameters(), max_norm=1000.0)
        scaler.step(optim_g)
        scaler.update()
        n_steps += 1

    avg_disc = epoch_disc_sum / max(n_steps, 1)
    avg_gen = epoch_gen_sum / max(n_steps, 1)
    return float(avg_disc), float(avg_gen)
