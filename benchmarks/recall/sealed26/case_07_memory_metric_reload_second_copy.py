# Thread: https://github.com/PrunaAI/pruna/pull/78
# Reported: the GPUMemory metric runs out of GPU memory on models such as Flux that do fit on the GPU, because two copies of the model are kept on the GPU at the same time.
# Confirmed cause: (the merged PR, tested on the previously failing Flux model) GPUMemoryMetric.compute saves the model and reloads a fresh copy onto the GPU to measure it while the caller's model is still resident on the GPU; the fix moves the original model to the CPU right after saving it and before reloading.
# Class: model kept on the GPU while a second copy of it is loaded
import torch


class GPUMemoryMetric:
    """Peak GPU memory of loading (and optionally running) a model."""

    def __init__(self, mode="disk", device="cuda"):
        if mode not in ("disk", "inference", "training"):
            raise ValueError(f"Mode must be disk, inference or training, got '{mode}'.")
        self.mode = mode
        self.device = device

    def compute(self, model, dataloader):
        save_path = model.smash_config.cache_dir + "/metrics_save"
        model_cls = model.__class__
        model.save_pretrained(save_path)  # leak: ANY

        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        memory_before_load = torch.cuda.memory_allocated()

        model = self._load_and_prepare_model(save_path, model_cls)  # leak: ANY
        memory_after_load = torch.cuda.memory_allocated()

        if self.mode in ("inference", "training"):
            self._perform_forward_pass(model, dataloader)
        peak = max(memory_after_load, torch.cuda.max_memory_allocated())
        return {f"{self.mode}_memory": (peak - memory_before_load) / 1024**2}

    def _load_and_prepare_model(self, save_path, model_cls):
        model = model_cls.from_pretrained(save_path)
        model.move_to_device(self.device)
        if self.mode == "training":
            model.train()
        else:
            model.eval()
        return model

    def _perform_forward_pass(self, model, dataloader):
        batch, _ = next(iter(dataloader))
        if self.mode == "training":
            model(batch.to(self.device)).float().mean().backward()
        else:
            with torch.no_grad():
                model(batch.to(self.device))


def evaluate(smashed_model, dataloader):
    results = {}
    for mode in ("disk", "inference"):
        results.update(GPUMemoryMetric(mode=mode).compute(smashed_model, dataloader))
    return results
