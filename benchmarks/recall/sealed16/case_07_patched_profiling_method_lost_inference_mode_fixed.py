# Fixed twin of case 07: keep the @torch.inference_mode() decorator on the replacement method
# Thread: https://github.com/ovg-project/kvcached/pull/461
# Reported: after the earlier patch, the process footprint during memory profiling grew from about 2.9 GiB to 14.06 GiB with identical inputs (multimodal models)
# Confirmed cause: the merged PR: vLLM decorates GPUWorker.determine_available_memory() with @torch.inference_mode() and profile_run relies on it; the replacement method lacked the decorator, so the multimodal dummy profiling retained the vision encoder's backward graph and activations
# Class: profiling/eval helper run with autograd on because a replacement function lost its inference-mode decorator
import torch
import torch.nn as nn


class GPUModelRunner:
    def __init__(self, device="cuda"):
        self.device = device
        self.vision_encoder = nn.Sequential(nn.Conv2d(3, 1024, 14, 14), nn.Flatten(2)).to(device)
        self.language_model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).to(device)

    def profile_run(self):
        dummy_images = torch.randn(32, 3, 896, 896, device=self.device)
        feats = self.vision_encoder(dummy_images).transpose(1, 2)
        hidden = self.language_model(feats)
        torch.cuda.synchronize()
        return hidden


class GPUWorker:
    def __init__(self, gpu_memory_utilization=0.9):
        self.model_runner = GPUModelRunner()
        self.gpu_memory_utilization = gpu_memory_utilization

    @torch.inference_mode()
    def determine_available_memory(self):
        torch.cuda.reset_peak_memory_stats()
        self.model_runner.profile_run()
        peak = torch.cuda.max_memory_allocated()
        total = torch.cuda.get_device_properties(0).total_memory
        return int(total * self.gpu_memory_utilization) - peak


@torch.inference_mode()
def _kvcached_determine_available_memory(self):
    torch.cuda.reset_peak_memory_stats()
    self.model_runner.profile_run()
    peak = torch.cuda.max_memory_allocated()
    total = torch.cuda.get_device_properties(0).total_memory
    available = int(total * self.gpu_memory_utilization) - peak
    return max(available, 0)


GPUWorker.determine_available_memory = _kvcached_determine_available_memory


if __name__ == "__main__":
    worker = GPUWorker()
    print(worker.determine_available_memory())
