# Fixed twin of case 11: detach the updated cache tensors before keeping them, as the merged PR does
# Thread: https://github.com/pytorch/executorch/pull/13618
# Reported: running prefill/decode of a static-attention llama through the Python I/O manager (used for quantization and evaluation of the eager model) uses more memory than it should
# Confirmed cause: the maintainer's merged PR adds .detach() to the cache tensors produced by the cache-update helper and states that this reduces memory usage: each updated cache is a roll/clone of the previous cache with the model's new K/V slice-assigned into it, so without detach every cache keeps the autograd history of all earlier steps
# Class: in-place (slice) writes of grad-carrying outputs into a persistent buffer kept across iterations
import torch


def apply_update(cache, update, pos, style, update_pos=0, update_len=None):
    if style == "shift_pointer":
        update_len = update_len or update.size(-2)
        updated = torch.roll(cache, -update_len, -2)
        updated[:, -update_len:, :] = update[:, update_pos : update_pos + update_len, :]
    else:
        updated = torch.clone(cache)
        update_len = update_len or update.size(-2)
        updated[:, pos : pos + update_len, :] = update[:, update_pos : update_pos + update_len, :]
    return updated


class StaticAttentionIOManager:
    def __init__(self, config, input_len, cache_len, style="shift_pointer"):
        self.config = config
        self.input_len = input_len
        self.cache_len = cache_len
        self.style = style
        self.pos = 0
        keys = [f"l{l},h{h}" for l in range(config.n_layers) for h in range(config.n_kv_heads)]
        self.k_caches = {k: torch.zeros(1, cache_len, config.head_dim) for k in keys}
        self.v_caches = {k: torch.zeros(1, cache_len, config.head_dim) for k in keys}
        self.mask = torch.zeros(1, input_len, input_len + cache_len)

    def decode(self, model, init_token, n, stop_tokens=None):
        stop_tokens = stop_tokens or []
        new_tokens = [init_token]
        for _ in range(n):
            y = self._run_once(model, new_tokens[-1:])[0]
            new_tokens.append(y[:, :1, :].argmax().item())
            if new_tokens[-1] in stop_tokens:
                break
        return new_tokens

    def _run_once(self, model, tokens):
        n_tokens = len(tokens)
        if n_tokens < self.input_len:
            tokens += [0] * (self.input_len - n_tokens)
        tokens = torch.tensor([tokens], dtype=torch.int32)
        y, attn_updates = model(tokens, {"mask": self.mask, "in_cache_state": (self.k_caches, self.v_caches)})
        self._update_states(attn_updates, 0, n_tokens)
        return y, attn_updates

    def _update_states(self, attn_updates, update_pos, update_len):
        k_cache_updates, v_cache_updates = attn_updates["out_cache_state"]
        for cache_id, update in k_cache_updates.items():
            self.k_caches[cache_id] = apply_update(self.k_caches[cache_id], update, self.pos, self.style, update_pos, update_len).detach()
        for cache_id, update in v_cache_updates.items():
            self.v_caches[cache_id] = apply_update(self.v_caches[cache_id], update, self.pos, self.style, update_pos, update_len).detach()
        self.pos += update_len
