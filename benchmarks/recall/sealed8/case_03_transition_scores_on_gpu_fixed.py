# Fixed twin of case 03: sequences, scores and beam indices are moved to the CPU before computing transition scores
# Thread: https://github.com/sillsdev/silnlp/pull/1087
# Reported: the generation scores tuple (num_generated_tokens x batch x beams x vocab) "can occupy a lot of the GPU's
#   RAM", forcing the team to halve the inference batch size
# Confirmed cause: transition scores were computed from outputs.scores while everything stayed on the GPU; the merged PR
#   moves the scores/sequences to the CPU before compute_transition_scores (author measured same speed at 2x batch size)
# Class: generate(output_scores=True) keeps per-token logits on the device and the helper processes them there
from typing import List, Tuple

import torch
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer


class SilTranslationPipeline:
    def __init__(self, model_name: str, device: str = "cuda", num_beams: int = 4, max_length: int = 256):
        self.tokenizer = AutoTokenizer.from_pretrained(model_name)
        self.model = AutoModelForSeq2SeqLM.from_pretrained(model_name).to(device).eval()
        self.device = device
        self.num_beams = num_beams
        self.max_length = max_length

    @torch.no_grad()
    def _forward(self, sentences: List[str]) -> Tuple[List[str], List[List[float]]]:
        inputs = self.tokenizer(sentences, return_tensors="pt", padding=True).to(self.device)
        outputs = self.model.generate(
            **inputs,
            num_beams=self.num_beams,
            num_return_sequences=1,
            max_length=self.max_length,
            output_scores=True,
            return_dict_in_generate=True,
        )
        sequences = outputs.sequences.cpu()
        scores = tuple(score.cpu() for score in outputs.scores)
        beam_indices = outputs.beam_indices.cpu()
        del outputs
        transition_scores = self.model.compute_transition_scores(
            sequences, scores, beam_indices, normalize_logits=True
        )
        token_scores = [row[row != 0].exp().tolist() for row in transition_scores]
        translations = self.tokenizer.batch_decode(sequences, skip_special_tokens=True)
        return translations, token_scores

    def __call__(self, sentences: List[str], batch_size: int = 16):
        for start in range(0, len(sentences), batch_size):
            yield self._forward(sentences[start:start + batch_size])


if __name__ == "__main__":
    pipeline = SilTranslationPipeline("facebook/nllb-200-distilled-600M")
    corpus = ["In the beginning was the Word."] * 1024
    with open("translations.txt", "w") as out_file:
        for translations, confidences in pipeline(corpus):
            for text, conf in zip(translations, confidences):
                out_file.write(f"{text}\t{sum(conf) / max(len(conf), 1):.4f}\n")
