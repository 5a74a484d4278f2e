# Fixed twin of case 01: on_batch_end returns early for validation batches (`if iteration == 0 or not train: return`), so histograms are queued only from training steps
# Thread: https://github.com/fastai/fastai/pull/2254
# Reported: with the TensorBoard callback enabled, host RAM fills up during validation until the machine is overloaded
# Confirmed cause: on_batch_end also fires for validation batches, where the iteration does not advance; when it sits on a multiple of hist_iters every validation batch queues a request holding a CPU copy of all weights for the slow writer thread; the merged fix returns early when not training
# Class: tensors handed to a logging queue (copies of all parameters queued per batch)
from queue import Queue
from threading import Event, Thread

import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter


class HistogramTBRequest:
    def __init__(self, model, iteration, tbwriter, name):
        self.params = [(n, p.clone().detach().cpu()) for n, p in model.named_parameters()]
        self.iteration = iteration
        self.tbwriter = tbwriter
        self.name = name

    def write(self):
        for param_name, values in self.params:
            self.tbwriter.add_histogram(tag=f"{self.name}/weights/{param_name}", values=values, global_step=self.iteration)


class AsyncTBWriter:
    def __init__(self):
        self.stop_request = Event()
        self.queue = Queue()
        self.thread = Thread(target=self._queue_processor, daemon=True)
        self.thread.start()

    def request_write(self, request):
        self.queue.put(request)

    def _queue_processor(self):
        while not self.stop_request.is_set():
            request = self.queue.get()
            if request is None:
                break
            request.write()

    def close(self):
        self.stop_request.set()
        self.queue.put(None)
        self.thread.join()


class LearnerTensorboardWriter:
    def __init__(self, model, base_dir, name, loss_iters=25, hist_iters=500):
        self.model = model
        self.name = name
        self.loss_iters = loss_iters
        self.hist_iters = hist_iters
        self.tbwriter = SummaryWriter(log_dir=f"{base_dir}/{name}")
        self.writer = AsyncTBWriter()

    def _write_training_loss(self, iteration, last_loss):
        self.tbwriter.add_scalar(f"{self.name}/metrics/train_loss", float(last_loss), iteration)

    def _write_weight_histograms(self, iteration):
        self.writer.request_write(HistogramTBRequest(self.model, iteration, self.tbwriter, self.name))

    def on_batch_end(self, last_loss, iteration, train, **kwargs):
        if iteration == 0 or not train:
            return
        if iteration % self.loss_iters == 0:
            self._write_training_loss(iteration, last_loss)
        if iteration % self.hist_iters == 0:
            self._write_weight_histograms(iteration)


def fit(model, train_dl, valid_dl, epochs, cb, lr=1e-3):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss_func = nn.CrossEntropyLoss()
    iteration = 0
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            loss = loss_func(model(xb), yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
            iteration += 1
            cb.on_batch_end(last_loss=loss.detach(), iteration=iteration, train=True)
        model.eval()
        with torch.no_grad():
            for xb, yb in valid_dl:
                loss = loss_func(model(xb), yb)
                cb.on_batch_end(last_loss=loss, iteration=iteration, train=False)
    cb.writer.close()
