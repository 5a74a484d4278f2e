# Recall case 22 (sealed3): at the end of training the best weights are torch.load-ed straight back onto the GPU
# Thread: https://github.com/allenai/allennlp/issues/3499
# Reported: an OOM at the end of a training run, when the trainer restores the best model state
# Confirmed cause: Checkpointer.best_model_state() did torch.load(best.th) without map_location, so the saved CUDA
#   tensors are materialised on the GPU next to the live model before load_state_dict copies them; loading to CPU
#   first avoided the error (reporter) and the maintainers asked for that PR (restore_checkpoint already documented it)
# Class: torch.load of a GPU-saved checkpoint onto the device while the model is resident
import os

import torch
import torch.nn as nn


class Checkpointer:
    def __init__(self, serialization_dir):
        self._serialization_dir = serialization_dir
        os.makedirs(serialization_dir, exist_ok=True)

    def save_checkpoint(self, epoch, model_state, training_states, is_best_so_far):
        torch.save(model_state, os.path.join(self._serialization_dir, f"model_state_epoch_{epoch}.th"))
        torch.save(training_states, os.path.join(self._serialization_dir, f"training_state_epoch_{epoch}.th"))
        if is_best_so_far:
            torch.save(model_state, os.path.join(self._serialization_dir, "best.th"))

    def best_model_state(self):
        best_model_state_path = os.path.join(self._serialization_dir, "best.th")
        return torch.load(best_model_state_path)  # leak: ANY


class Trainer:
    def __init__(self, model, checkpointer, device):
        self.model = model.to(device)
        self.device = device
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self._checkpointer = checkpointer

    def train(self, epochs, batches):
        best = float("inf")
        for epoch in range(epochs):
            total = 0.0
            for x, y in batches():
                loss = nn.functional.mse_loss(self.model(x.to(self.device)), y.to(self.device))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                total += loss.item()
            is_best = total < best
            best = min(best, total)
            self._checkpointer.save_checkpoint(epoch, self.model.state_dict(),
                                               {"optimizer": self.optimizer.state_dict()}, is_best)
        best_model_state = self._checkpointer.best_model_state()
        self.model.load_state_dict(best_model_state)
        return best


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Sequential(*[nn.Linear(8192, 8192) for _ in range(40)])

    def batches():
        for _ in range(50):
            yield torch.randn(16, 8192), torch.randn(16, 8192)

    Trainer(model, Checkpointer("./serialization"), device).train(5, batches)
