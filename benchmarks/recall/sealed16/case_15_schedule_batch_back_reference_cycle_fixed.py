# Fixed twin of case 15: make the back-reference to the batch a weakref
# Thread: https://github.com/sgl-project/sglang/pull/9673
# Reported: extra GPU memory overhead in the scheduler: finished ScheduleBatch objects and their device tensors were not reclaimed in time
# Confirmed cause: the merged PR ('Reduce GPU memory overhead by using weakref'); the author found with gc.set_debug(gc.DEBUG_SAVEALL) that ScheduleBatch was not reclaimed in time because of a reference cycle, broken by a weakref
# Class: parent/child reference cycle holding device tensors until the cyclic GC runs
import weakref

import torch


class SamplingBatchInfo:
    def __init__(self, batch, temperatures, top_ps):
        self._batch_ref = weakref.ref(batch)
        self.temperatures = temperatures
        self.top_ps = top_ps

    def penalties_device(self):
        return self._batch_ref().device


class ScheduleBatch:
    def __init__(self, reqs, device="cuda"):
        self.reqs = reqs
        self.device = device
        self.input_ids = torch.tensor([t for r in reqs for t in r["tokens"]], device=device)
        self.seq_lens = torch.tensor([len(r["tokens"]) for r in reqs], device=device)
        self.out_cache_loc = torch.empty(int(self.seq_lens.sum()), dtype=torch.int64, device=device)
        self.logits_buffer = torch.empty(len(reqs), 152064, device=device)
        self.sampling_info = SamplingBatchInfo(
            self,
            torch.tensor([r["temperature"] for r in reqs], device=device),
            torch.tensor([r["top_p"] for r in reqs], device=device),
        )


def event_loop(model_step, request_queue):
    while True:
        reqs = request_queue.get()
        if reqs is None:
            break
        batch = ScheduleBatch(reqs)
        model_step(batch)
