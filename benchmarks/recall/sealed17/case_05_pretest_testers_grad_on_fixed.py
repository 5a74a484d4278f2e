# Fixed twin of case 05: pretest runs the testers under `with torch.no_grad():`
# Thread: https://github.com/lancercat/VSDF/issues/7
# Reported: training on a large CJK charset runs out of GPU memory (RTX 2060) as soon as the periodic test pass starts, although training batches fit
# Confirmed cause: the test routine called from pretest did not disable autograd, so the glyph-prototype forward over the full charset and the per-batch recognition forwards kept their activations; the maintainer confirmed that adding torch.no_grad() around the test is a valid fix
# Class: evaluation without no_grad
import torch
import torch.nn.functional as F


class neko_recog_tester:
    def __init__(self, loader, charset_glyphs, labels):
        self.loader = loader
        self.charset_glyphs = charset_glyphs  # [n_chars, 1, 32, 32] rendered glyphs of every class
        self.labels = labels

    def test(self, modular_dict, epoch_idx):
        protos = modular_dict["prototyper"](self.charset_glyphs.cuda())
        protos = F.normalize(protos, dim=-1)
        correct, total = 0, 0
        for images, texts in self.loader:
            feats = modular_dict["feature_extractor"](images.cuda())
            seq = modular_dict["seq"](feats)  # [B, T, D]
            logits = modular_dict["pred"](F.normalize(seq, dim=-1), protos)  # [B, T, n_chars]
            pred_ids = logits.argmax(-1).cpu()
            for ids, text in zip(pred_ids, texts):
                pred = "".join(self.labels[i] for i in ids.tolist() if i > 0)
                correct += int(pred == text)
                total += 1
        print(f"epoch {epoch_idx}: accuracy {correct / max(total, 1):.4f}")
        return correct / max(total, 1)


class neko_abstract_jtr:
    def __init__(self, modular_dict, optimizers, train_loader, testers):
        self.modular_dict = modular_dict
        self.optimizers = optimizers
        self.train_loader = train_loader
        self.testers = testers

    def pretest(self, epoch_idx):
        for mk in self.modular_dict:
            self.modular_dict[mk].eval()
        with torch.no_grad():
            for tk in self.testers:
                self.testers[tk].test(self.modular_dict, epoch_idx)
        for mk in self.modular_dict:
            self.modular_dict[mk].train()

    def fpbp(self, images, targets):
        feats = self.modular_dict["feature_extractor"](images.cuda())
        seq = self.modular_dict["seq"](feats)
        loss = self.modular_dict["loss"](seq, targets.cuda())
        for opt in self.optimizers:
            opt.zero_grad()
        loss.backward()
        for opt in self.optimizers:
            opt.step()
        return loss.item()

    def train(self, epochs, test_every=1000):
        step = 0
        for epoch_idx in range(epochs):
            for images, targets in self.train_loader:
                self.fpbp(images, targets)
                step += 1
                if step % test_every == 0:
                    self.pretest(epoch_idx)
