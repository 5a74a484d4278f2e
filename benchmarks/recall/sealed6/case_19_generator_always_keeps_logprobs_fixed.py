# Fixed twin of case 19: per-step log-probs are only kept when the request asks for logprobs > 0
# Thread: https://github.com/facebookresearch/metaseq/pull/145
# Reported: in review, the maintainer flagged that the PR's unconditional need_logprobs makes generation use a lot more memory
# Confirmed cause: with need_logprobs the generator keeps the full per-step log-prob distributions on the GPU for the whole decode; the agreed change (applied before approval) only enables it when the request asks for logprobs > 0
# Class: decoding keeps per-token score/log-prob tensors for every step even when the caller does not need them
import torch
from torch import nn


class SequenceGenerator:
    def __init__(self, model: nn.Module, max_len=256, temperature=1.0, need_logprobs=False, stop=None):
        self.model = model
        self.max_len = max_len
        self.temperature = temperature
        self.need_logprobs = need_logprobs
        self.stop = stop

    @torch.no_grad()
    def generate(self, src_tokens):
        tokens = src_tokens
        all_lprobs = []
        for _ in range(self.max_len):
            logits = self.model(tokens)[:, -1, :] / self.temperature
            lprobs = torch.log_softmax(logits.float(), dim=-1)
            if self.need_logprobs:
                all_lprobs.append(lprobs)  # (bsz, vocab) kept for every step
            next_tok = torch.multinomial(lprobs.exp(), 1)
            tokens = torch.cat([tokens, next_tok], dim=1)
            if self.stop is not None and (next_tok == self.stop).all():
                break
        out = {"tokens": tokens}
        if self.need_logprobs:
            out["lprobs"] = torch.stack(all_lprobs, dim=1)
        return out


class GeneratorInterface:
    def __init__(self, model):
        self.model = model.cuda().eval()

    def generate(self, inputs, max_tokens=256, temperature=1.0, logprobs=0, stop=None):
        generator = SequenceGenerator(self.model, max_len=max_tokens, temperature=temperature,
                                      need_logprobs=False, stop=stop)
        if logprobs > 0:
            generator.need_logprobs = True
        results = []
        for batch in inputs:
            out = generator.generate(batch.cuda())
            item = {"tokens": out["tokens"].tolist()}
            if logprobs > 0:
                top = out["lprobs"].topk(logprobs, dim=-1)
                item["top_logprobs"] = top.values.cpu().tolist()
            results.append(item)
        return results


class TinyLM(nn.Module):
    def __init__(self, vocab=50272, d=2048):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.body = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 16, batch_first=True), 4)
        self.head = nn.Linear(d, vocab)

    def forward(self, x):
        return self.head(self.body(self.emb(x)))


if __name__ == "__main__":
    api = GeneratorInterface(TinyLM())
    prompts = [torch.randint(0, 50272, (16, 32)) for _ in range(8)]
    print(len(api.generate(prompts, max_tokens=512)))
