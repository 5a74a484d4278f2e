# Fixed twin of case 01: the statistic is updated with loss.detach().
# Thread: https://github.com/NVIDIA/DeepLearningExamples/issues/1102
# Reported: host RAM of BERT pretraining grows after every optimization step until the box dies.
# Confirmed cause: `stats.device_stat('average_loss').add_(loss)` adds the loss, graph and all,
#   into a statistics tensor that lives for the whole run, so each step's graph stays reachable
#   (maintainer: "loss is a part of the graph ... the previous loss tensors/graph are retained");
#   fixed with `loss.detach()` (NVIDIA/DeepLearningExamples#1104).
# Class: accumulation into a long-lived tensor by an in-place method (add_), not `+=`
import torch
from torch.utils.data import DataLoader


class SyncFreeStats:
    """Running statistics kept on the GPU so logging needs no host sync every step."""

    def __init__(self):
        self.device_stats = {}

    def add_stat(self, name, dtype=torch.float32):
        self.device_stats[name] = torch.zeros(1, dtype=dtype, device="cuda")

    def device_stat(self, name):
        return self.device_stats[name]

    def host_stat_value(self, name):
        return self.device_stats[name].item()


def train(model, criterion, optimizer, dataset, args):
    loader = DataLoader(dataset, batch_size=args.train_batch_size, shuffle=True, num_workers=4)
    stats = SyncFreeStats()
    stats.add_stat("average_loss")
    model.train()
    global_step = 0
    for step, batch in enumerate(loader):
        input_ids, segment_ids, input_mask, mlm_labels, nsp_labels = [t.cuda() for t in batch]
        prediction_scores, seq_relationship_score = model(input_ids, segment_ids, input_mask)
        loss = criterion(prediction_scores, seq_relationship_score, mlm_labels, nsp_labels)
        loss = loss / args.gradient_accumulation_steps
        loss.backward()
        stats.device_stat("average_loss").add_(loss.detach())
        if (step + 1) % args.gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            global_step += 1
            if global_step % args.log_freq == 0:
                average = stats.host_stat_value("average_loss") / args.log_freq
                print(f"step {global_step} average_loss {average:.4f}")
                stats.device_stat("average_loss").zero_()
