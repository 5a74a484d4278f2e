# Fixed twin of case 12: CondTransformer.sample() runs under @torch.no_grad(), as the maintainer's commit does.
import torch
import torch.nn.functional as F
import pytorch_lightning as pl
from torch import nn


class GPT(nn.Module):
    def __init__(self, vocab_cond, vocab_code, dim, n_layers, img_num_tokens):
        super().__init__()
        self.img_num_tokens = img_num_tokens
        self.tok_emb_cond = nn.Embedding(vocab_cond, dim)
        self.tok_emb_code = nn.Embedding(vocab_code, dim)
        self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(dim, 8, batch_first=True) for _ in range(n_layers)])
        self.layer_norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_code)

    def sample_step(self, codes, conds):
        x = self.tok_emb_cond(conds)
        if codes is not None:
            x = torch.cat([x, self.tok_emb_code(codes)], dim=1)
        for block in self.blocks:
            x = block(x)
        return self.head(self.layer_norm(x[:, -1:]))

    def sample(self, conds, top_k=None, softmax_temperature=1.0):
        codes = logits = None
        for _ in range(self.img_num_tokens):
            logits_ = self.sample_step(codes, conds).float() / softmax_temperature
            if top_k is not None:
                v, _ = torch.topk(logits_, top_k)
                logits_[logits_ < v[..., [-1]]] = -float("Inf")
            probs = F.softmax(logits_, dim=-1)
            idx = torch.multinomial(probs.view(-1, probs.shape[-1]), num_samples=1).clone().detach()
            codes = idx if codes is None else torch.cat([codes, idx], dim=1)
            logits = logits_ if logits is None else torch.cat([logits, logits_], dim=1)
        return logits, codes


class CondTransformer(pl.LightningModule):
    def __init__(self, transformer, stage1_model, cond_model, code_shape):
        super().__init__()
        self.transformer = transformer
        self.stage1_model = stage1_model
        self.cond_model = cond_model
        self.code_shape = code_shape

    @torch.no_grad()
    def sample(self, conds, top_k=None, softmax_temperature=1.0, return_pixels=False):
        conds = conds.view(conds.shape[0], -1)
        logits, codes = self.transformer.sample(conds=conds, top_k=top_k, softmax_temperature=softmax_temperature)
        if return_pixels:
            codes = codes.view(codes.shape[0], *self.code_shape)
            return self.stage1_model.decode_codes(codes).clamp(0, 1)
        return logits, codes

    def training_step(self, batch, batch_idx):
        images, conds = batch
        with torch.no_grad():
            codes = self.stage1_model.encode_codes(images).detach()
            conds = self.cond_model.encode_codes(conds).detach()
        logits = self.transformer.sample_step(codes[:, :-1], conds)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), codes[:, -1])
        self.log("train/loss", loss)
        return loss

    def log_images(self, batch):
        log = {}
        _, conds = batch
        cond_codes = self.cond_model.encode_codes(conds).detach()
        log["first samples"] = self.sample(cond_codes, return_pixels=True)
        log["second samples"] = self.sample(cond_codes, return_pixels=True)
        return log
