# Recall case 15 (sealed2): a beam-search SequenceGenerator module called from the test loop, grad on
# Thread: https://github.com/facebookresearch/pytext/pull/1016
# Reported: "Multiple people have seen that GPU memory constantly increases during testing with
#   SequenceGenerator."
# Confirmed cause: the maintainers' diff: the generator's forward (encoder, then one decoder step per
#   output token across the beam) ran with autograd enabled, so a graph was built for the whole search;
#   the fix sets the no_grad context explicitly on the generator.
# Class: a decoding module without no_grad, used by an evaluation loop that keeps its results
import torch
import torch.nn as nn


class SequenceGenerator(nn.Module):
    def __init__(self, model, beam_size=5, max_len=100, eos_idx=2):
        super().__init__()
        self.model = model
        self.beam_size = beam_size
        self.max_len = max_len
        self.eos_idx = eos_idx

    def forward(self, src_tokens, src_lengths):  # leak: ANY
        encoder_out = self.model.encoder(src_tokens, src_lengths)
        encoder_out = self.model.encoder.reorder_encoder_out(encoder_out, self.beam_size)
        bsz = src_tokens.size(0)
        tokens = src_tokens.new_full((bsz * self.beam_size, 1), self.eos_idx)
        scores = src_tokens.new_zeros(bsz * self.beam_size, dtype=torch.float)
        incremental_state = {}
        for step in range(self.max_len):
            lprobs = self.model.decoder(tokens, encoder_out, incremental_state)[:, -1, :].log_softmax(-1)
            cand = (scores.unsqueeze(1) + lprobs).view(bsz, -1)
            top_scores, top_idx = cand.topk(self.beam_size, dim=1)
            beam_idx = top_idx // lprobs.size(-1) + torch.arange(bsz, device=cand.device).unsqueeze(1) * self.beam_size
            next_tok = (top_idx % lprobs.size(-1)).view(-1, 1)
            tokens = torch.cat([tokens[beam_idx.view(-1)], next_tok], dim=1)
            scores = top_scores.view(-1)
            self.model.decoder.reorder_incremental_state(incremental_state, beam_idx.view(-1))
            if bool((next_tok == self.eos_idx).all()):
                break
        best = scores.view(bsz, self.beam_size).argmax(1)
        return tokens.view(bsz, self.beam_size, -1)[torch.arange(bsz), best], scores.view(bsz, -1).max(1).values


def test(model, test_iter, vocab, device="cuda"):
    generator = SequenceGenerator(model).to(device)
    generator.eval()
    hypotheses, hyp_scores = [], []
    for src_tokens, src_lengths, targets in test_iter:
        out_tokens, out_scores = generator(src_tokens.to(device), src_lengths.to(device))
        hypotheses.extend(vocab.decode(t) for t in out_tokens.tolist())
        hyp_scores.append(out_scores)
    return hypotheses, torch.cat(hyp_scores)
