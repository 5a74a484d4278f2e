# Thread: https://github.com/huggingface/lerobot/issues/4009 (fixed by https://github.com/huggingface/lerobot/pull/4042)
# Reported: resuming an 8-GPU FSDP run of a 6B-parameter policy dies with CUDA OOM before
#   accelerator.prepare(): every rank's copy of the full-state checkpoint lands on GPU 0.
# Confirmed cause: safetensors' load_file(..., device="cuda") maps the bare "cuda" string to the
#   first visible GPU, not torch.cuda.current_device(), so all local ranks materialize the whole
#   checkpoint on cuda:0; the merged fix rewrites "cuda" to f"cuda:{torch.cuda.current_device()}".
# Class: checkpoint loaded onto one fixed GPU by every distributed rank
from pathlib import Path

import torch
from accelerate import Accelerator
from safetensors.torch import load_file


def load_policy_weights(policy: torch.nn.Module, pretrained_dir: Path, device: str) -> torch.nn.Module:
    model_file = pretrained_dir / "model.safetensors"
    state_dict = load_file(str(model_file), device=device)  # leak: ANY
    missing, unexpected = policy.load_state_dict(state_dict, strict=False)
    if missing or unexpected:
        print(f"missing={missing} unexpected={unexpected}")
    return policy


def resume_training(cfg, policy: torch.nn.Module, optimizer, accelerator: Accelerator):
    checkpoint_dir = Path(cfg.checkpoint_path)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    policy = load_policy_weights(policy, checkpoint_dir / "pretrained_model", device)
    training_state = torch.load(checkpoint_dir / "training_state" / "training_step.pt", map_location="cpu")
    step = training_state["step"]
    policy, optimizer = accelerator.prepare(policy, optimizer)
    return policy, optimizer, step
