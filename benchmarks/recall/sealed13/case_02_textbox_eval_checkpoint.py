# Recall case 02 (sealed13): evaluate() loads the best checkpoint onto the GPU and keeps the loaded dict alive for the whole generation pass
# Thread: https://github.com/RUCAIBox/TextBox/pull/265
# Reported: CUDA out of memory during inference/evaluation after training, when the best model is reloaded for test generation
# Confirmed cause: torch.load(checkpoint_file, map_location=self.device) keeps a second GPU copy of every weight in the local `checkpoint` for the rest of evaluate(); merged fix (by the maintainer) adds `del checkpoint` right after load_state_dict
# Class: checkpoint dict loaded onto the device and left referenced during a long evaluation
import os
from typing import Optional

import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class Seq2SeqModel(nn.Module):
    def __init__(self, vocab=32000, d=1024):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.body = nn.Transformer(d_model=d, nhead=16, num_encoder_layers=12, num_decoder_layers=12, batch_first=True)
        self.lm_head = nn.Linear(d, vocab)

    @torch.no_grad()
    def generate(self, src, max_len=64):
        memory = self.body.encoder(self.emb(src))
        out = src[:, :1]
        for _ in range(max_len):
            h = self.body.decoder(self.emb(out), memory)
            nxt = self.lm_head(h[:, -1]).argmax(-1, keepdim=True)
            out = torch.cat([out, nxt], dim=1)
        return out


class Trainer:
    def __init__(self, model, device, saved_model_filename):
        self.model = model.to(device)
        self.device = device
        self.saved_model_filename = saved_model_filename

    @torch.no_grad()
    def evaluate(self, eval_data: DataLoader, load_best_model: bool = True,
                 model_file: Optional[str] = None):
        if load_best_model:
            checkpoint_file = model_file or self.saved_model_filename + ".pth"
            checkpoint = torch.load(checkpoint_file, map_location=self.device)  # leak: ANY
            self.model.load_state_dict(checkpoint["state_dict"])

        self.model.eval()
        generated = []
        for batch in eval_data:
            src = batch["source_ids"].to(self.device)
            generated.extend(self.model.generate(src).cpu().tolist())
        return generated


if __name__ == "__main__":
    trainer = Trainer(Seq2SeqModel(), "cuda", os.path.join("saved", "BART-cnndm"))
    data = [{"source_ids": torch.randint(0, 32000, (16, 256))} for _ in range(100)]
    print(len(trainer.evaluate(data)))
