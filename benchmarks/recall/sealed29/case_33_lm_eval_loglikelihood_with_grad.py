# Thread: https://github.com/allenai/catwalk/pull/161
# Reported: evaluating a language model (e.g. Llama-3-8B) through catwalk's language_model.py
#   needed two GPUs; the scoring/decoding helpers used far more GPU memory than inference should.
# Confirmed cause (merged PR): "we're not wrapping model calls with torch.no_grad()" in the
#   language-model helpers, so every scoring forward pass built and held an autograd graph;
#   adding torch.no_grad() let the same model run on a single GPU.
# Class: decoding / scoring helper in a separate module runs the model with grad on
import torch
import torch.nn.functional as F


class DecoderOnlyLanguageModel:
    def __init__(self, model, tokenizer, batch_size=32):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.batch_size = batch_size

    def _run_loglikelihood_tokens(self, requests):
        results = []
        for start in range(0, len(requests), self.batch_size):
            batch = requests[start:start + self.batch_size]
            encoded = self.tokenizer(
                [context + continuation for context, continuation in batch],
                return_tensors="pt",
                padding=True,
            ).to(self.model.device)
            logits = self.model(**encoded).logits  # leak: ANY
            log_probs = F.log_softmax(logits, dim=-1)
            for i, (context, continuation) in enumerate(batch):
                cont_ids = self.tokenizer(continuation, add_special_tokens=False)["input_ids"]
                n = len(cont_ids)
                length = int(encoded["attention_mask"][i].sum())
                token_log_probs = log_probs[i, length - n - 1:length - 1]
                target = torch.tensor(cont_ids, device=token_log_probs.device)
                picked = token_log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
                is_greedy = bool((token_log_probs.argmax(-1) == target).all())
                results.append(
                    {"sum_logits": float(picked.sum()), "num_tokens": n, "is_greedy": is_greedy}
                )
        return results

    def _run_greedy_until(self, requests, max_gen_toks=256):
        outputs = []
        for context, until in requests:
            input_ids = self.tokenizer(context, return_tensors="pt").input_ids.to(self.model.device)
            generated = self.model.generate(input_ids, max_new_tokens=max_gen_toks, do_sample=False)
            text = self.tokenizer.decode(generated[0, input_ids.shape[1]:], skip_special_tokens=True)
            for stop in until:
                text = text.split(stop)[0]
            outputs.append(text)
        return outputs
