# Recall case 12 (sealed13): a retrieval meter wraps a torchmetrics metric that buffers every preds/target batch, but the meter's reset() never resets the wrapped metric
# Thread: https://github.com/eora-ai/torchok/pull/166
# Reported: memory leak in representation (retrieval) validation that grew epoch after epoch
# Confirmed cause: IndexBasedMeter.reset() cleared only the meter's own lists; the inner torchmetrics Retrieval* metric kept its list states (preds, target, indexes) from every epoch; merged fix ("fix-representation-memory-leak") adds reset() that also calls self.metric_func.reset()
# Class: metric object whose accumulated state is never reset between epochs
from typing import List, Optional

import torch
from torchmetrics import Metric
from torchmetrics.retrieval import RetrievalMAP


class IndexBasedMeter(Metric):
    def __init__(self, metric_func: Metric, k: int = 10):
        super().__init__()
        self.metric_func = metric_func
        self.k = k
        self.add_state("vectors", default=[], dist_reduce_fx=None)
        self.add_state("targets", default=[], dist_reduce_fx=None)

    def update(self, vectors: torch.Tensor, targets: torch.Tensor):
        self.vectors.append(vectors.detach())
        self.targets.append(targets.detach())

    def process_data_for_metric_func(self, scores, idxs, targets) -> List[torch.Tensor]:
        relevant = (targets[idxs] == targets[:, None]).long()
        indexes = torch.arange(len(idxs), device=scores.device)[:, None].expand_as(idxs)
        return [scores, relevant, indexes]

    def compute(self) -> torch.Tensor:
        vectors = torch.cat(self.vectors)
        targets = torch.cat(self.targets)
        for start in range(0, len(vectors), 1024):
            q = vectors[start:start + 1024]
            sims = q @ vectors.T
            scores, idxs = sims.topk(self.k + 1, dim=1)
            preds, target, indexes = self.process_data_for_metric_func(scores[:, 1:], idxs[:, 1:], targets[start:start + 1024])
            self.metric_func.update(preds, target, indexes + start)
        return self.metric_func.compute()


class TorchMetricBaseMetr(IndexBasedMeter):  # leak: ANY
    def __init__(self, metric_class: type, metric_params: Optional[dict] = None, k: int = 10):
        super().__init__(metric_func=metric_class(**(metric_params or {})), k=k)


class RetrievalMAPMeter(TorchMetricBaseMetr):
    def __init__(self, k: int = 10):
        super().__init__(metric_class=RetrievalMAP, k=k)


if __name__ == "__main__":
    meter = RetrievalMAPMeter(k=100).cuda()
    encoder = torch.nn.Linear(2048, 512).cuda()
    for epoch in range(100):
        with torch.no_grad():
            for _ in range(200):
                x = torch.randn(256, 2048, device="cuda")
                y = torch.randint(0, 1000, (256,), device="cuda")
                meter.update(torch.nn.functional.normalize(encoder(x), dim=1), y)
        print(epoch, meter.compute().item())
        meter.reset()
