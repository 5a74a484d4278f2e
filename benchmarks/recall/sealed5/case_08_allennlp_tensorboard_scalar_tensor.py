# Recall case 08 (sealed5): trainer logs metric/loss tensors to TensorBoard without converting them to Python numbers
# Thread: https://github.com/allenai/allennlp/pull/1423
# Reported: tensors (and their history) were handed to the TensorBoard writer every batch
# Confirmed cause: merged PR by an AllenNLP maintainer explicitly detaches scalars by calling item before logging to tensorboard
# Class: tensors handed to a logging/reporting call
import torch
from torch.utils.tensorboard import SummaryWriter


class TensorboardWriter:
    def __init__(self, log_dir):
        self._train_log = SummaryWriter(log_dir)

    def add_train_scalar(self, name, value, global_step):
        self._train_log.add_scalar(name, value, global_step)  # leak: ANY


def train_epoch(model, loader, optimizer, writer, global_step):
    model.train()
    for batch in loader:
        optimizer.zero_grad()
        output = model(**batch)
        loss = output["loss"]
        loss.backward()
        optimizer.step()
        global_step += 1
        writer.add_train_scalar("loss/loss_train", loss, global_step)
        for name, param in model.named_parameters():
            if param.grad is not None:
                writer.add_train_scalar("gradient_norm/" + name, param.grad.norm(), global_step)
    return global_step
