# Fixed twin of case 13: the handler only records the OOM; memory is collected and the epoch is retried after the except block
# Thread: https://github.com/InfluenceFunctional/MXtalTools/issues/49
# Reported: batch size grows until OOM, but afterwards it must be slashed many times (or to zero) before the model runs again; profiling shows orphan tensors left on CUDA
# Confirmed cause (weak): maintainer found orphan CUDA tensors after OOM and linked the known pattern (a caught exception keeps the failed step's tensors alive while recovery runs inside the handler); adding gc.collect() "seems somewhat better", issue closed
# Class: OOM handling that retries forward/backward inside `except`
import torch
import torch.nn as nn


class Modeller:
    def __init__(self, model, dataset, min_batch=16, max_batch=4096):
        self.model = model.cuda()
        self.dataset = dataset
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.batch_size = min_batch
        self.max_batch = max_batch

    def run_epoch(self, batch_size):
        loader = torch.utils.data.DataLoader(self.dataset, batch_size=batch_size, shuffle=True)
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            out = self.model(x)
            loss = nn.functional.mse_loss(out, y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def train_crystal_models(self, max_epochs=100):
        epoch = 0
        while epoch < max_epochs:
            try:
                self.run_epoch(self.batch_size)
                self.batch_size = min(int(self.batch_size * 1.1) + 1, self.max_batch)
                epoch += 1
            except RuntimeError as e:
                if "CUDA out of memory" not in str(e):
                    raise
                self.batch_size = max(int(self.batch_size * 0.9), 1)
                oom = True
            else:
                oom = False
            if oom:
                import gc
                gc.collect()
                torch.cuda.empty_cache()
