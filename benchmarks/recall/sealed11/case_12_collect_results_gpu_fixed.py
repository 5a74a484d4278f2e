# Fixed twin of case 12: collects the distributed results through a CPU tmpdir (collect_results_cpu) instead of GPU all_gather
# Thread: https://github.com/open-mmlab/mmdetection/pull/1399
# Reported: reviewers warned GPU memory may not suffice when gathering results for a large test set; measured GPU memory during gathering grew from 1.2G to 10G when testing RPN on the training set
# Confirmed cause: collect_results_gpu serialises the whole per-rank result list into a CUDA byte tensor and all_gathers padded copies from every rank onto every GPU; maintainers kept the CPU/tmpdir collector as the default and made GPU collection an opt-in (--gpu_collect)
# Class: distributed gather of full evaluation results through GPU memory (all_gather of every rank's outputs onto every device)
import os
import pickle
import shutil
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class ProposalDataset(Dataset):
    def __len__(self):
        return 118_000

    def __getitem__(self, idx):
        return torch.rand(3, 512, 512)


def collect_results_gpu(result_part, size):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    part_tensor = torch.tensor(bytearray(pickle.dumps(result_part)), dtype=torch.uint8, device="cuda")
    shape_tensor = torch.tensor(part_tensor.shape, device="cuda")
    shape_list = [shape_tensor.clone() for _ in range(world_size)]
    dist.all_gather(shape_list, shape_tensor)
    shape_max = torch.tensor(shape_list).max()
    part_send = torch.zeros(shape_max, dtype=torch.uint8, device="cuda")
    part_send[: shape_tensor[0]] = part_tensor
    part_recv_list = [part_tensor.new_zeros(shape_max) for _ in range(world_size)]
    dist.all_gather(part_recv_list, part_send)
    if rank == 0:
        part_list = [pickle.loads(recv[: shape[0]].cpu().numpy().tobytes())
                     for recv, shape in zip(part_recv_list, shape_list)]
        ordered_results = []
        for res in zip(*part_list):
            ordered_results.extend(list(res))
        return ordered_results[:size]
    return None


def collect_results_cpu(result_part, size, tmpdir=None):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if tmpdir is None:
        dir_tensor = torch.full((512,), 32, dtype=torch.uint8, device="cuda")
        if rank == 0:
            tmpdir = tempfile.mkdtemp()
            encoded = torch.tensor(bytearray(tmpdir.encode()), dtype=torch.uint8, device="cuda")
            dir_tensor[: len(encoded)] = encoded
        dist.broadcast(dir_tensor, 0)
        tmpdir = dir_tensor.cpu().numpy().tobytes().decode().rstrip()
    os.makedirs(tmpdir, exist_ok=True)
    with open(os.path.join(tmpdir, f"part_{rank}.pkl"), "wb") as f:
        pickle.dump(result_part, f)
    dist.barrier()
    if rank != 0:
        return None
    part_list = []
    for i in range(world_size):
        with open(os.path.join(tmpdir, f"part_{i}.pkl"), "rb") as f:
            part_list.append(pickle.load(f))
    ordered_results = []
    for res in zip(*part_list):
        ordered_results.extend(list(res))
    shutil.rmtree(tmpdir)
    return ordered_results[:size]


@torch.no_grad()
def multi_gpu_test(model, data_loader, tmpdir=None):
    model.eval()
    results = []
    for img in data_loader:
        proposals = model(img.cuda(non_blocking=True))
        results.extend(p.cpu().numpy() for p in proposals)
    results = collect_results_cpu(results, len(data_loader.dataset), tmpdir)
    return results


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = nn.Sequential(nn.Conv2d(3, 16, 7, 4, 3), nn.ReLU(), nn.Conv2d(16, 5 * 1000, 1),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Unflatten(1, (1000, 5))).cuda()
    dataset = ProposalDataset()
    loader = DataLoader(dataset, batch_size=1, sampler=DistributedSampler(dataset, shuffle=False), num_workers=2)
    outputs = multi_gpu_test(model, loader, tmpdir="./work_dirs/.eval_tmp")
    if dist.get_rank() == 0:
        print("gathered", len(outputs))


if __name__ == "__main__":
    main()
