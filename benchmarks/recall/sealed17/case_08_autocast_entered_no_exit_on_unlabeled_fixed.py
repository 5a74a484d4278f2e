# Fixed twin of case 08: one_batch always fires after_loss (the loss is computed only when there are targets), so the autocast context is exited for every batch
# Thread: https://github.com/fastai/fastai/pull/2696
# Reported: get_preds on an unlabeled test set with native fp16 training enabled makes CUDA memory climb batch after batch
# Confirmed cause: the callback's autocast context is entered in before_batch and exited in after_loss, and Learner.one_batch returned early when there were no targets, so after_loss never ran and the autocast contexts piled up without ever being exited; the maintainer fixed it in the library by always firing after_loss (the PR was closed in favour of that commit)
# Class: runtime tools left on (autocast context entered and never exited)
import torch
from torch.cuda.amp import GradScaler, autocast


class MixedPrecision:
    order = 10

    def __init__(self):
        self.learn = None

    def before_fit(self):
        self.autocast, self.learn.scaler = autocast(), GradScaler()

    def before_batch(self):
        self.autocast.__enter__()

    def after_pred(self):
        if self.learn.pred.dtype == torch.float16:
            self.learn.pred = self.learn.pred.float()

    def after_loss(self):
        self.autocast.__exit__(None, None, None)


class Learner:
    def __init__(self, dls, model, loss_func, opt, cbs=()):
        self.dls, self.model, self.loss_func, self.opt = dls, model, loss_func, opt
        self.cbs = sorted(cbs, key=lambda c: c.order)
        for cb in self.cbs:
            cb.learn = self
        self.training = False
        self.scaler = None

    def __call__(self, event_name):
        for cb in self.cbs:
            meth = getattr(cb, event_name, None)
            if meth is not None:
                meth()

    def _split(self, b):
        self.xb, self.yb = b[:1], b[1:]

    def one_batch(self, i, b):
        self.iter = i
        self._split(b)
        self("before_batch")
        self.pred = self.model(*self.xb)
        self("after_pred")
        if len(self.yb):
            self.loss = self.loss_func(self.pred, *self.yb)
        self("after_loss")
        if not self.training or not len(self.yb):
            return
        self.scaler.scale(self.loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()
        self.opt.zero_grad()

    def get_preds(self, dl):
        self.training = False
        self.model.eval()
        self("before_fit")
        preds = []
        with torch.no_grad():
            for i, b in enumerate(dl):
                self.one_batch(i, b)
                preds.append(self.pred.cpu())
        return torch.cat(preds)
