# Fixed twin of case 02: when logprobs=False, move the batch logits to CPU before decoding, so nothing stored in the returned hypotheses stays on the GPU (as merged in the PR)
# Thread: https://github.com/NVIDIA-NeMo/Speech/pull/7249
# Reported: a GPU memory leak in the utility transcribe_speech.py uses when transcribing partial audio segments (manifest entries with offset/duration): results of every batch pile up on the GPU
# Confirmed cause: the merged PR (reviewed LGTM by a maintainer) traces it to transcribe_partial_audio storing the logit tensor in the results it accumulates (hypotheses keep slices of each batch's CUDA logits) and fixes it by moving the logits to CPU when logprobs=False
# Class: predict/inference loop returning every step's output on the GPU
import os
from typing import List, Optional

from tqdm.auto import tqdm


def transcribe_partial_audio(
    asr_model,
    path2manifest: str,
    batch_size: int = 4,
    logprobs: bool = False,
    return_hypotheses: bool = False,
    num_workers: int = 0,
    channel_selector: Optional[int] = None,
) -> List[str]:
    if return_hypotheses and logprobs:
        raise ValueError("Either `return_hypotheses` or `logprobs` can be True at any given time.")
    if num_workers is None:
        num_workers = min(batch_size, os.cpu_count() - 1)

    hypotheses = []
    mode = asr_model.training
    device = next(asr_model.parameters()).device
    dither_value = asr_model.preprocessor.featurizer.dither
    pad_to_value = asr_model.preprocessor.featurizer.pad_to
    try:
        asr_model.preprocessor.featurizer.dither = 0.0
        asr_model.preprocessor.featurizer.pad_to = 0
        asr_model.eval()
        asr_model.encoder.freeze()
        asr_model.decoder.freeze()
        config = {
            "manifest_filepath": path2manifest,
            "batch_size": batch_size,
            "num_workers": num_workers,
            "channel_selector": channel_selector,
        }
        temporary_datalayer = asr_model._setup_transcribe_dataloader(config)
        for test_batch in tqdm(temporary_datalayer, desc="Transcribing"):
            logits, logits_len, greedy_predictions = asr_model.forward(
                input_signal=test_batch[0].to(device), input_signal_length=test_batch[1].to(device)
            )
            if logprobs:
                for idx in range(logits.shape[0]):
                    lg = logits[idx][: logits_len[idx]]
                    hypotheses.append(lg.cpu().numpy())
            else:
                logits = logits.cpu()
                current_hypotheses, all_hyp = asr_model.decoding.ctc_decoder_predictions_tensor(
                    logits, decoder_lengths=logits_len, return_hypotheses=return_hypotheses,
                )
                if return_hypotheses:
                    for idx in range(logits.shape[0]):
                        current_hypotheses[idx].y_sequence = logits[idx][: logits_len[idx]]
                        if current_hypotheses[idx].alignments is None:
                            current_hypotheses[idx].alignments = current_hypotheses[idx].y_sequence
                hypotheses += current_hypotheses
            del greedy_predictions
            del logits
            del test_batch
    finally:
        asr_model.train(mode=mode)
        asr_model.preprocessor.featurizer.dither = dither_value
        asr_model.preprocessor.featurizer.pad_to = pad_to_value
        if mode is True:
            asr_model.encoder.unfreeze()
            asr_model.decoder.unfreeze()
    return hypotheses
