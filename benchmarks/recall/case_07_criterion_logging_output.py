# Recall case 07: a criterion's logging dict carries the loss tensor into the trainer's meters
# Thread: https://github.com/facebookresearch/fairseq/issues/2255
# Reported: host (not GPU) memory grows as masked-LM training proceeds.
# Confirmed cause: `logging_output = {'loss': loss, ...}` in criterions/masked_lm.py hands the
#   loss with its graph to the trainer, which aggregates logging outputs into meters; fixed
#   upstream by storing `loss.data` (maintainers: `.detach()` is the preferred spelling).
# Class: a value pulled out of a dict keeps the graph; ints in the same dict are not graphs
import torch
import torch.nn.functional as F


class MaskedLmLoss:
    def __init__(self, padding_idx):
        self.padding_idx = padding_idx

    def __call__(self, model, sample):
        masked_tokens = sample["target"].ne(self.padding_idx)
        sample_size = masked_tokens.int().sum().item()
        logits = model(**sample["net_input"], masked_tokens=masked_tokens)[0]
        targets = sample["target"][masked_tokens]
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                               reduction="sum", ignore_index=self.padding_idx)
        logging_output = {
            "loss": loss,  # leak: ML101
            "ntokens": sample["ntokens"],
            "nsentences": sample["nsentences"],
            "sample_size": sample_size,
        }
        return loss, sample_size, logging_output


def train(model, criterion, optimizer, epoch_itr, log_interval=100):
    model.train()
    meters = {}
    for i, sample in enumerate(epoch_itr):
        sample = {k: v.cuda() if torch.is_tensor(v) else v for k, v in sample.items()}
        optimizer.zero_grad()
        loss, sample_size, log = criterion(model, sample)
        (loss / sample_size).backward()
        optimizer.step()
        meters["loss"] = meters.get("loss", 0) + log["loss"]  # leak: ML101
        meters["sample_size"] = meters.get("sample_size", 0) + log["sample_size"]
        if (i + 1) % log_interval == 0:
            print(f"loss {float(meters['loss']) / meters['sample_size']:.3f}")
            meters = {}
