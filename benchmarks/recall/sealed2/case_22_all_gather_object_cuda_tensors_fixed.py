# Fixed twin of case 22: the per-rank results are moved to the CPU before all_gather_object (the documented fix).
# Thread: https://github.com/pytorch/pytorch/issues/150798
# Reported: with 8 GPUs, the first all_gather_object leaks many GBs: nvidia-smi shows 64 CUDA contexts
#   instead of 8 (plain all_gather does not).
# Confirmed cause: the maintainers (documented in pytorch#150815): object collectives pickle their
#   input, and unpickling a CUDA tensor recreates it on the device it came from, so every rank
#   receives tensors on every other rank's GPU and opens a CUDA context there; "This issue can be
#   avoided by moving tensors to CPU before passing them as inputs to an object collective."
# Class: object collectives (all_gather_object) over objects holding accelerator tensors
import os

import torch
import torch.distributed as dist


def evaluate(model, loader):
    model.eval()
    results = {"scores": [], "labels": [], "ids": []}
    with torch.no_grad():
        for batch in loader:
            inputs = batch["inputs"].cuda(non_blocking=True)
            logits = model(inputs)
            results["scores"].append(torch.sigmoid(logits).cpu())
            results["labels"].append(batch["labels"].cpu())
            results["ids"].extend(batch["ids"])
    return results


def gather_and_score(model, loader):
    local = evaluate(model, loader)
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, local)
    if dist.get_rank() != 0:
        return None
    scores = torch.cat([torch.cat(r["scores"]) for r in gathered])
    labels = torch.cat([torch.cat(r["labels"]) for r in gathered])
    accuracy = ((scores > 0.5).long() == labels).float().mean().item()
    print(f"accuracy over {scores.shape[0]} samples: {accuracy:.4f}")
    return accuracy


def main(build_model, build_loader):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = build_model().cuda()
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    gather_and_score(model, build_loader(rank=dist.get_rank(), world_size=dist.get_world_size()))
    dist.destroy_process_group()
