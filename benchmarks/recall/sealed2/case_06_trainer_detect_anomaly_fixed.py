# Fixed twin of case 06: anomaly detection follows a config flag that defaults to False (the PR).
# Thread: https://github.com/facebookresearch/mmf/pull/434
# Reported: all models train much slower than they should (found by a maintainer while profiling).
# Confirmed cause: the maintainers' PR: the trainer called `torch.autograd.set_detect_anomaly(True)`
#   unconditionally; anomaly detection is a debugging mode that records a traceback for every
#   autograd node and checks every backward result; the PR moves it behind a config option, off by
#   default ("will drastically improve performance of all our models").
# Class: a debugging switch (anomaly detection) left on in the training entry point (lost speed and memory)
import torch
from tqdm import tqdm


class BaseTrainer:
    def __init__(self, config, model, optimizer, lr_scheduler, train_loader, device="cuda"):
        self.config = config
        self.training_config = config.training
        self.model = model.to(device)
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.train_loader = train_loader
        self.device = device
        self.current_iteration = 0

    def train(self):
        print("Starting training...")
        self.model.train()
        torch.autograd.set_detect_anomaly(self.training_config.get("detect_anomaly", False))
        max_updates = self.training_config.max_updates
        while self.current_iteration < max_updates:
            for batch in tqdm(self.train_loader):
                batch = {k: v.to(self.device) for k, v in batch.items()}
                self.optimizer.zero_grad(set_to_none=True)
                output = self.model(batch)
                loss = sum(output["losses"].values())
                loss.backward()
                if self.training_config.clip_gradients:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(),
                                                   self.training_config.max_grad_l2_norm)
                self.optimizer.step()
                self.lr_scheduler.step()
                self.current_iteration += 1
                if self.current_iteration % self.training_config.log_interval == 0:
                    print(f"update {self.current_iteration}: loss {loss.item():.4f}")
                if self.current_iteration >= max_updates:
                    break
        print("Finished training.")
