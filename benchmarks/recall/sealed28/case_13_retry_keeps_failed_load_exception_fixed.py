# Thread: https://github.com/unslothai/unsloth/pull/8121
# Reported: (review of the PR) after a failed model load, the offline retry allocates a second copy
#   next to the first: the half-built model from the failed attempt is still alive after
#   gc.collect() and torch.cuda.empty_cache().
# Confirmed cause: the retry kept the first attempt's exception (`online_error = e`) to re-raise it
#   later; "the exception keeps its traceback, the traceback keeps the failed loader's frames, and
#   those frames keep the half-built model", so the cleanup before the retry could not free it
#   (checked with a weakref). Fixed in the PR by keeping the error without its traceback,
#   `e.with_traceback(None)`.
# Class: failure/OOM handler that retries while the failed attempt's tensors are still referenced
import contextlib
import gc
import os

import torch

_OFFLINE_ENV_KEYS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def _out_of_memory_error(exc):
    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


def _looks_like_network_error(exc):
    text = f"{type(exc).__name__}: {exc}".lower()
    return any(s in text for s in ("connection", "timed out", "temporary failure", "couldn't connect"))


@contextlib.contextmanager
def _forced_offline():
    saved = {k: os.environ.get(k) for k in _OFFLINE_ENV_KEYS}
    for k in _OFFLINE_ENV_KEYS:
        os.environ[k] = "1"
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _offline_aware_load(load_fn, *args, **kwargs):
    """Load once online; if the network drops, retry once from the local cache only."""
    try:
        return load_fn(*args, **kwargs)
    except Exception as e:
        if not _looks_like_network_error(e):
            raise
        online_error = e.with_traceback(None)

    # free whatever the failed attempt put on the GPU before trying again
    gc.collect()
    torch.cuda.empty_cache()

    with _forced_offline():
        try:
            return load_fn(*args, local_files_only=True, **kwargs)
        except Exception as offline_error:
            surfaced = offline_error if _out_of_memory_error(offline_error) else online_error
            raise surfaced from offline_error


def from_pretrained(model_name, max_seq_length=2048, load_in_4bit=True, device_map="cuda:0"):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    def load_fn(name, **kw):
        model = AutoModelForCausalLM.from_pretrained(
            name, device_map=device_map, load_in_4bit=load_in_4bit, torch_dtype=torch.bfloat16, **kw
        )
        tokenizer = AutoTokenizer.from_pretrained(name, model_max_length=max_seq_length, **kw)
        return model, tokenizer

    return _offline_aware_load(load_fn, model_name)
