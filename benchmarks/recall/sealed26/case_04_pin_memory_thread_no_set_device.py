# Thread: https://github.com/pytorch/pytorch/pull/4196
# Reported: single-node distributed training with one process per GPU and a multi-worker DataLoader with pin_memory=True: every process also creates a CUDA context (and holds memory) on GPU 0, even though each process set its own device.
# Confirmed cause: (ngimel in the review, fixed by the merged PR) the pin-memory manager thread calls cudaHostAlloc through pin_memory(), which initialises a context on the thread's current device; the device set in the main thread does not carry over to the new thread, so it is device 0; the fix passes the device id to the thread and calls torch.cuda.set_device(device_id) once before the loop.
# Class: CUDA initialised on GPU 0 in a data-loading thread that never sets the device
import multiprocessing
import queue
import threading

import torch


def pin_memory_batch(batch):
    if torch.is_tensor(batch):
        return batch.pin_memory()
    if isinstance(batch, dict):
        return {k: pin_memory_batch(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return [pin_memory_batch(b) for b in batch]
    return batch


def _worker_manager_loop(in_queue, out_queue, done_event, pin_memory):
    while True:
        try:
            r = in_queue.get(timeout=5.0)
        except queue.Empty:
            if done_event.is_set():
                return
            continue
        if r is None:
            break
        idx, batch = r
        try:
            if pin_memory:
                batch = pin_memory_batch(batch)  # leak: ANY
        except Exception as e:
            out_queue.put((idx, e))
        else:
            out_queue.put((idx, batch))


class DataLoaderIter:
    def __init__(self, loader):
        self.pin_memory = loader.pin_memory and torch.cuda.is_available()
        self.worker_result_queue = multiprocessing.SimpleQueue()
        self.data_queue = queue.Queue()
        self.done_event = threading.Event()
        self.workers = [
            multiprocessing.Process(target=loader.worker_loop, args=(i, self.worker_result_queue))
            for i in range(loader.num_workers)
        ]
        for w in self.workers:
            w.daemon = True
            w.start()
        self.worker_manager_thread = threading.Thread(  # leak: ANY
            target=_worker_manager_loop,
            args=(self.worker_result_queue, self.data_queue, self.done_event, self.pin_memory),
        )
        self.worker_manager_thread.daemon = True
        self.worker_manager_thread.start()

    def __next__(self):
        idx, batch = self.data_queue.get()
        if isinstance(batch, Exception):
            raise batch
        return batch


def main(local_rank, loader, model):
    torch.cuda.set_device(local_rank)
    torch.distributed.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    batches = DataLoaderIter(loader)
    for _ in range(len(loader)):
        images, targets = next(batches)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(images.cuda(non_blocking=True)), targets.cuda())
        loss.backward()
        optimizer.step()
