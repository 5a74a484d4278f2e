# Fixed twin of case 13: the engine drops the previous batch/output before running the next iteration
# Thread: https://github.com/pytorch/ignite/pull/476
# Reported: GPU memory inside the update function is twice what one iteration needs (208 MB outside vs 416 MB inside)
#   because `engine.state.output` from the previous iteration is still referenced
# Confirmed cause: maintainer (vfdev-5) reproduced it ("I confirm on my side the problem you raised") with a handler
#   clearing `engine.state.output` at ITERATION_STARTED; fixed in the merged PR #1919
#   (https://github.com/pytorch/ignite/pull/1919), which resets `state.batch`/`state.output` before each iteration
# Class: long-lived state object holds the last batch/output across iterations, doubling peak device memory
import torch
from torch import nn


class State:
    def __init__(self):
        self.iteration = 0
        self.epoch = 0
        self.batch = None
        self.output = None
        self.metrics = {}


class Engine:
    def __init__(self, process_function):
        self._process_function = process_function
        self.state = State()
        self._handlers = []

    def add_iteration_completed_handler(self, handler):
        self._handlers.append(handler)

    def _run_once_on_dataset(self, data):
        for batch in data:
            self.state.batch = self.state.output = None
            self.state.iteration += 1
            self.state.batch = batch
            self.state.output = self._process_function(self, self.state.batch)
            for handler in self._handlers:
                handler(self)

    def run(self, data, max_epochs: int = 1):
        for _ in range(max_epochs):
            self.state.epoch += 1
            self._run_once_on_dataset(data)
        return self.state


device = "cuda"
model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 50, 1)).to(device)
model.eval()


def inference_fn(engine, batch):
    x, y = batch
    x, y = x.to(device), y.to(device)
    with torch.no_grad():
        y_pred = model(x)
    return y_pred, y


def accumulate_iou(engine):
    y_pred, y = engine.state.output
    inter = (y_pred.argmax(1) == y).float().mean().item()
    engine.state.metrics["acc_sum"] = engine.state.metrics.get("acc_sum", 0.0) + inter


if __name__ == "__main__":
    data = [(torch.rand(16, 3, 256, 256), torch.randint(0, 50, (16, 256, 256))) for _ in range(200)]
    evaluator = Engine(inference_fn)
    evaluator.add_iteration_completed_handler(accumulate_iou)
    state = evaluator.run(data, max_epochs=2)
    print(state.metrics["acc_sum"] / state.iteration)
