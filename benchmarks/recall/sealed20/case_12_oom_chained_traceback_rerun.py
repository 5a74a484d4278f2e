# Recall case 12 (sealed20): test rerun hook clears only the outermost traceback, while the CUDA OOM caught inside the trainer stays reachable through the exception chain
# Thread: https://github.com/huggingface/trl/pull/5776
# Reported: GPU tests that hit CUDA OOM and are rerun keep accumulating CUDA memory, about 2 GiB per rerun and about 12 GiB after 5 reruns, so the CI itself goes out of memory
# Confirmed cause: when the OOM fires inside a try/except in the trainer, the OOM becomes __context__ of the exception raised from the handler; clearing only call.excinfo.tb leaves the chained exception's traceback, whose frames hold the model and tensors, alive, so gc.collect()/empty_cache() cannot reclaim them before the rerun; the merged fix walks the __context__/__cause__ chain, clears every traceback's frames and drops __traceback__
# Class: OOM handling: exception (and its frames) kept alive after a caught CUDA OOM, so the retry/rerun starts with the failed step's memory still held
import gc
import traceback

import torch


def training_step(model, batch, optimizer):
    try:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        raise RuntimeError("training step ran out of GPU memory; lower the batch size")
    return loss.detach()


def cleanup_gpu():
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def pytest_runtest_makereport(item, call):
    if call.excinfo is not None:
        traceback.clear_frames(call.excinfo.tb)  # leak: ANY
        cleanup_gpu()
