# Recall case 01 (sealed20): IP-Adapter attention processor registers every instance in a class-level set, so each application's GPU processors are never freed
# Thread: https://github.com/Shakker-Labs/ComfyUI-IPAdapter-Flux/pull/76
# Reported: IPAFluxAttnProcessor2_0Advanced instances stay in GPU memory when the model is re-initialised (execution cache cleared, workflow switched, adapter re-applied); VRAM use grows with each application until CUDA OOM
# Confirmed cause: the class attribute _instances = set() keeps a strong reference to every processor ever built (each holding two large to_k_ip / to_v_ip Linear layers on the GPU), so dropping the model never frees them and __del__ never runs; the merged PR replaces it with weakref.WeakSet(), the maintainer thanked for the fix and a user confirmed it works
# Class: object lifetime: class-level registry holding strong references to per-application GPU modules
import torch
import torch.nn as nn


class IPAFluxAttnProcessor2_0Advanced(nn.Module):
    _instances = set()  # leak: ANY
    _global_call_count = 0
    _last_timestep_printed = None

    def __init__(self, num_tokens, hidden_size, cross_attention_dim=None, scale_start=1.0, scale_end=1.0,
                 total_steps=1, timestep_range=None):
        super().__init__()
        self.hidden_size = hidden_size
        self.cross_attention_dim = cross_attention_dim
        self.scale_start = scale_start
        self.scale_end = scale_end
        self.total_steps = total_steps
        self.num_tokens = num_tokens
        self.to_k_ip = nn.Linear(cross_attention_dim or hidden_size, hidden_size, bias=False)
        self.to_v_ip = nn.Linear(cross_attention_dim or hidden_size, hidden_size, bias=False)
        self.norm_added_k = nn.LayerNorm(128, eps=1e-5, elementwise_affine=False)
        self.norm_added_v = nn.LayerNorm(128, eps=1e-5, elementwise_affine=False)
        self.timestep_range = timestep_range
        self.seen_timesteps = set()
        self.steps = 0
        self.__class__._instances.add(self)  # leak: ANY

    @classmethod
    def reset_all_instances(cls):
        cls._global_call_count = 0
        cls._last_timestep_printed = None
        for instance in cls._instances:
            instance.seen_timesteps.clear()
            instance.steps = 0

    def __del__(self):
        self.__class__._instances.discard(self)

    def current_scale(self):
        step = min(self.steps, self.total_steps)
        if self.total_steps > 1:
            return self.scale_start + (self.scale_end - self.scale_start) * (step - 1) / (self.total_steps - 1)
        return self.scale_end

    def __call__(self, num_heads, query, image_emb, t):
        current_timestep = t[0].item()
        if current_timestep not in self.seen_timesteps:
            self.seen_timesteps.add(current_timestep)
            self.steps += 1
        key = self.to_k_ip(image_emb)
        value = self.to_v_ip(image_emb)
        b, length, _ = key.shape
        key = self.norm_added_k(key.view(b, length, num_heads, -1).transpose(1, 2))
        value = self.norm_added_v(value.view(b, length, num_heads, -1).transpose(1, 2))
        out = torch.nn.functional.scaled_dot_product_attention(query, key, value)
        return self.current_scale() * out


class InstantXFluxIPAdapterModelAdvanced:
    def __init__(self, state_dict, device, num_tokens=128):
        self.state_dict = state_dict
        self.device = device
        self.num_tokens = num_tokens
        self.joint_attention_dim = 4096
        self.hidden_size = 3072

    def set_ip_adapter_advanced(self, n_double_blocks, n_single_blocks, weight_params, timestep_range):
        weight_start, weight_end, steps = weight_params
        procs = {}
        for prefix, count in (("double_blocks", n_double_blocks), ("single_blocks", n_single_blocks)):
            for i in range(count):
                procs[f"{prefix}.{i}"] = IPAFluxAttnProcessor2_0Advanced(
                    hidden_size=self.hidden_size,
                    cross_attention_dim=self.joint_attention_dim,
                    num_tokens=self.num_tokens,
                    scale_start=weight_start,
                    scale_end=weight_end,
                    total_steps=steps,
                    timestep_range=timestep_range,
                ).to(self.device, dtype=torch.float16)
        return procs

    def load_ip_adapter_advanced(self, n_double_blocks, n_single_blocks, weight_params, timestep_range):
        procs = self.set_ip_adapter_advanced(n_double_blocks, n_single_blocks, weight_params, timestep_range)
        layers = nn.ModuleList(procs.values())
        layers.load_state_dict(self.state_dict["ip_adapter"], strict=True)
        return procs


def apply_ipadapter_flux_advanced(flux_model, ipadapter, weight_start, weight_end, steps):
    procs = ipadapter.load_ip_adapter_advanced(19, 38, (weight_start, weight_end, steps), (1.0, 0.0))
    patched = flux_model.clone()
    patched.set_attn_processors(procs)
    return patched
