# Fixed twin of case 09: the body of validate() runs under torch.no_grad(), as the maintainer advised.
# Thread: https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning/issues/57
# Reported: training fits batch sizes of 96-128, but validate() after each epoch dies with CUDA OOM.
# Confirmed cause: validation builds the full autograd graph (decoder scores, attention alphas, the
#   `scores.clone()` kept for decoding) for every batch; the maintainer told the reporter to put the
#   whole body of validate() under `with torch.no_grad():`, and the reporter confirmed it solved it.
# Class: a validation function without no_grad (models in eval() only)
import torch
from nltk.translate.bleu_score import corpus_bleu
from torch.nn.utils.rnn import pack_padded_sequence

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
alpha_c = 1.0


def validate(val_loader, encoder, decoder, criterion, word_map):
    with torch.no_grad():
        decoder.eval()
        if encoder is not None:
            encoder.eval()
        total_loss, total_words = 0.0, 0
        references, hypotheses = [], []
        for i, (imgs, caps, caplens, allcaps) in enumerate(val_loader):
            imgs, caps, caplens = imgs.to(device), caps.to(device), caplens.to(device)
            if encoder is not None:
                imgs = encoder(imgs)
            scores, caps_sorted, decode_lengths, alphas, sort_ind = decoder(imgs, caps, caplens)
            targets = caps_sorted[:, 1:]
            scores_copy = scores.clone()
            scores = pack_padded_sequence(scores, decode_lengths, batch_first=True).data
            targets = pack_padded_sequence(targets, decode_lengths, batch_first=True).data
            loss = criterion(scores, targets)
            loss += alpha_c * ((1.0 - alphas.sum(dim=1)) ** 2).mean()
            total_loss += loss.item() * sum(decode_lengths)
            total_words += sum(decode_lengths)

            allcaps = allcaps[sort_ind]
            for j in range(allcaps.shape[0]):
                img_caps = allcaps[j].tolist()
                references.append([[w for w in c if w not in {word_map["<start>"], word_map["<pad>"]}]
                                   for c in img_caps])
            _, preds = torch.max(scores_copy, dim=2)
            preds = preds.tolist()
            hypotheses.extend([p[:decode_lengths[j]] for j, p in enumerate(preds)])

        bleu4 = corpus_bleu(references, hypotheses)
        print(f"* LOSS - {total_loss / total_words:.3f}, BLEU-4 - {bleu4:.4f}")
        return bleu4
