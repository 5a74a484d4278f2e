# Recall case 24: worker_init_fn builds a distributed helper whose constructor sets the CUDA device
# Thread: https://github.com/ai2cm/ace/pull/1396
# Reported: torch.OutOfMemoryError during backward in a config that otherwise fits: six inline
#   inference loaders with 4 workers each left 24 idle CUDA contexts holding 12.2 GiB per GPU.
# Confirmed cause: the loaders' `worker_init_fn` enters a `Distributed` context so each worker
#   knows its rank; constructing the backend called `torch.cuda.set_device`, creating a ~520 MiB
#   CUDA context in every worker (merged fix: workers read rank/world size from the environment
#   and skip device and process-group initialisation).
# Class: CUDA in DataLoader workers, indirectly (an object whose __init__ touches CUDA)
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


class TorchDistributed:
    def __init__(self):
        self.rank = int(os.environ.get("RANK", 0))
        self.world_size = int(os.environ.get("WORLD_SIZE", 1))
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(self.local_rank)
        if self.world_size > 1 and not dist.is_initialized():
            dist.init_process_group(backend="nccl")


class InferenceDataset(torch.utils.data.Dataset):
    def __init__(self, files, n_timesteps):
        self.files = files
        self.n_timesteps = n_timesteps
        self.data_parallel_rank = 0
        self.total_data_parallel_ranks = 1

    def __len__(self):
        return self.n_timesteps // self.total_data_parallel_ranks

    def __getitem__(self, idx):
        t = idx * self.total_data_parallel_ranks + self.data_parallel_rank
        return torch.load(self.files[t], map_location="cpu")


def _forkserver_worker_init_fn(worker_id):
    backend = TorchDistributed()  # leak: ANY
    info = torch.utils.data.get_worker_info()
    info.dataset.data_parallel_rank = backend.rank
    info.dataset.total_data_parallel_ranks = backend.world_size


def get_inference_loader(files, n_timesteps, num_workers=4):
    return DataLoader(InferenceDataset(files, n_timesteps), batch_size=1, num_workers=num_workers,
                      multiprocessing_context="forkserver", persistent_workers=True,
                      worker_init_fn=_forkserver_worker_init_fn)
