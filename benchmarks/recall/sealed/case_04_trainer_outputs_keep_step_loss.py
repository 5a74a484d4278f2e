# Recall case 04 (sealed): a trainer loop keeps each step's output dict, loss included, for the epoch
# Thread: https://github.com/TRI-ML/packnet-sfm/issues/47
# Reported: training the SelfSupModel, host memory grows from 21 GB to 38 GB within one epoch and
#   is released when the epoch ends.
# Confirmed cause: the reporter located it and the maintainer confirmed and fixed it (PR #51,
#   "Detach loss before appending it to the training output list"): the Horovod trainer's
#   `train` appends every batch's `output` to `outputs` for `training_epoch_end`, and
#   `output["loss"]` still carries that batch's graph.
# Class: step outputs (with the loss) collected in a local list over an epoch
import torch
import horovod.torch as hvd
from tqdm import tqdm


class HorovodTrainer:
    def __init__(self, min_epochs=0, max_epochs=50, checkpoint=None):
        self.min_epochs = min_epochs
        self.max_epochs = max_epochs
        self.checkpoint = checkpoint

    @property
    def is_rank_0(self):
        return hvd.rank() == 0

    def train_progress_bar(self, dataloader):
        return tqdm(enumerate(dataloader, 0), unit=" images", total=len(dataloader),
                    disable=not self.is_rank_0)

    def fit(self, module):
        module = module.to("cuda")
        module.trainer = self
        optimizer = hvd.DistributedOptimizer(module.configure_optimizers(),
                                             named_parameters=module.named_parameters())
        train_dataloader = module.train_dataloader()
        for epoch in range(module.current_epoch, self.max_epochs):
            self.train(train_dataloader, module, optimizer)
            module.current_epoch += 1

    def train(self, dataloader, module, optimizer):
        module.train()
        if hasattr(dataloader.sampler, "set_epoch"):
            dataloader.sampler.set_epoch(module.current_epoch)
        progress_bar = self.train_progress_bar(dataloader)
        outputs = []
        for i, batch in progress_bar:
            optimizer.zero_grad()
            batch = {k: v.cuda() if torch.is_tensor(v) else v for k, v in batch.items()}
            output = module.training_step(batch, i)
            output["loss"].backward()
            optimizer.step()
            outputs.append(output)  # leak: ANY
            if self.is_rank_0:
                progress_bar.set_description(
                    "Epoch {} | Avg.Loss {:.4f}".format(
                        module.current_epoch, sum(o["loss"].item() for o in outputs) / len(outputs)))
        return module.training_epoch_end(outputs)
