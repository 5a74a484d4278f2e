# Fixed twin of case 02: loads the checkpoint with map_location=self.device
# Thread: https://github.com/jadore801120/attention-is-all-you-need-pytorch/issues/95
# Reported: translate.py raises "CUDA out of memory" when the training GPU is full, even when decoding on CPU or on another device
# Confirmed cause: torch.load(opt.model) without map_location deserialises every tensor onto the device it was trained on; the maintainer changed it to torch.load(opt.model, map_location=device)
# Class: torch.load of a GPU-saved checkpoint without map_location (extra device copy / wrong device)
import argparse

import torch
import torch.nn as nn


class Transformer(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, d_model=512, n_head=8, n_layers=6, d_inner=2048, dropout=0.1):
        super().__init__()
        self.src_emb = nn.Embedding(src_vocab, d_model)
        self.tgt_emb = nn.Embedding(tgt_vocab, d_model)
        self.core = nn.Transformer(d_model, n_head, n_layers, n_layers, d_inner, dropout, batch_first=True)
        self.tgt_word_prj = nn.Linear(d_model, tgt_vocab, bias=False)

    def forward(self, src, tgt):
        mask = self.core.generate_square_subsequent_mask(tgt.size(1)).to(tgt.device)
        h = self.core(self.src_emb(src), self.tgt_emb(tgt), tgt_mask=mask)
        return self.tgt_word_prj(h)


class Translator:
    """Loads a trained model and handles greedy decoding."""

    def __init__(self, opt):
        self.opt = opt
        self.device = torch.device("cuda" if opt.cuda else "cpu")

        checkpoint = torch.load(opt.model, map_location=self.device, weights_only=False)
        model_opt = checkpoint["settings"]
        self.model_opt = model_opt

        model = Transformer(
            model_opt.src_vocab_size,
            model_opt.tgt_vocab_size,
            d_model=model_opt.d_model,
            n_head=model_opt.n_head,
            n_layers=model_opt.n_layers,
            d_inner=model_opt.d_inner_hid,
            dropout=model_opt.dropout,
        )
        model.load_state_dict(checkpoint["model"])
        print("[Info] Trained model state loaded.")

        self.model = model.to(self.device)
        self.model.eval()

    @torch.no_grad()
    def translate_batch(self, src_seq, bos_idx, eos_idx, max_len=100):
        src_seq = src_seq.to(self.device)
        out = torch.full((src_seq.size(0), 1), bos_idx, dtype=torch.long, device=self.device)
        for _ in range(max_len):
            logits = self.model(src_seq, out)[:, -1]
            nxt = logits.argmax(-1, keepdim=True)
            out = torch.cat([out, nxt], dim=1)
            if (nxt == eos_idx).all():
                break
        return out.tolist()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-model", required=True)
    parser.add_argument("-src", required=True)
    parser.add_argument("-no_cuda", action="store_true")
    opt = parser.parse_args()
    opt.cuda = not opt.no_cuda and torch.cuda.is_available()

    translator = Translator(opt)
    data = torch.load(opt.src, weights_only=False)
    for batch in torch.split(data["src"], 32):
        hyps = translator.translate_batch(batch, bos_idx=2, eos_idx=3)
        print(len(hyps))


if __name__ == "__main__":
    main()
