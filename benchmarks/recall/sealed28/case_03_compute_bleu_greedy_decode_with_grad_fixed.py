# Fixed twin of case 03: compute_bleu translates and scores under torch.no_grad(), as the merged
#   PR does.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from nltk.translate.bleu_score import corpus_bleu


class BasicModel(nn.Module):
    def __init__(self, inp_voc, out_voc, emb_size=64, hid_size=128):
        super().__init__()
        self.inp_voc, self.out_voc = inp_voc, out_voc
        self.emb_inp = nn.Embedding(len(inp_voc), emb_size)
        self.emb_out = nn.Embedding(len(out_voc), emb_size)
        self.enc0 = nn.GRU(emb_size, hid_size, batch_first=True)
        self.dec_start = nn.Linear(hid_size, hid_size)
        self.dec0 = nn.GRUCell(emb_size, hid_size)
        self.logits = nn.Linear(hid_size, len(out_voc))

    def encode(self, inp):
        enc_seq, _ = self.enc0(self.emb_inp(inp))
        lengths = (inp != self.inp_voc.eos_ix).long().sum(dim=1).clamp_max(inp.shape[1] - 1)
        last_state = enc_seq[torch.arange(len(enc_seq)), lengths]
        return [self.dec_start(last_state)]

    def decode_step(self, prev_state, prev_tokens):
        new_h = self.dec0(self.emb_out(prev_tokens), prev_state[0])
        return [new_h], self.logits(new_h)

    def decode_inference(self, initial_state, max_len=100):
        batch_size, device = len(initial_state[0]), initial_state[0].device
        state = initial_state
        outputs = [torch.full([batch_size], self.out_voc.bos_ix, dtype=torch.int64, device=device)]
        all_states = [initial_state]
        for _ in range(max_len):
            state, logits = self.decode_step(state, outputs[-1])
            outputs.append(logits.argmax(dim=-1))
            all_states.append(state)
        return torch.stack(outputs, dim=1), all_states

    def translate_lines(self, inp_lines, **flags):
        device = next(self.parameters()).device
        inp = self.inp_voc.to_matrix(inp_lines).to(device)
        out_ids, states = self.decode_inference(self.encode(inp), **flags)
        return self.out_voc.to_lines(out_ids.cpu().numpy()), states


def compute_bleu(model, inp_lines, out_lines, bpe_sep="@@ ", **flags):
    with torch.no_grad():
        translations, _ = model.translate_lines(inp_lines, **flags)
        translations = [line.replace(bpe_sep, "") for line in translations]
        return corpus_bleu(
            [[ref.split()] for ref in out_lines],
            [trans.split() for trans in translations],
            smoothing_function=lambda precisions, **kw: [p + 1.0 / p.denominator for p in precisions],
        ) * 100


def train(model, opt, train_inp, train_out, dev_inp, dev_out, batch_size=32, n_steps=25000):
    device = next(model.parameters()).device
    metrics = {"train_loss": [], "dev_bleu": []}
    for step in range(1, n_steps + 1):
        batch_ix = np.random.randint(len(train_inp), size=batch_size)
        batch_inp = model.inp_voc.to_matrix(train_inp[batch_ix]).to(device)
        batch_out = model.out_voc.to_matrix(train_out[batch_ix]).to(device)

        state = model.encode(batch_inp)
        step_logits = []
        for t in range(batch_out.shape[1] - 1):
            state, logits = model.decode_step(state, batch_out[:, t])
            step_logits.append(logits)
        logits_seq = torch.stack(step_logits, dim=1)
        loss_t = F.cross_entropy(logits_seq.flatten(0, 1), batch_out[:, 1:].flatten())

        opt.zero_grad()
        loss_t.backward()
        opt.step()
        metrics["train_loss"].append((step, loss_t.item()))

        if step % 100 == 0:
            metrics["dev_bleu"].append((step, compute_bleu(model, dev_inp, dev_out)))
            print("Mean loss=%.3f" % np.mean(metrics["train_loss"][-10:], axis=0)[1])
    return metrics
