# Recall case 14 (sealed15): UER-py extract_features.py appends each batch's embedding output to a list without detaching it
# Thread: https://github.com/dbiir/UER-py/pull/113
# Reported: extracting features for a whole corpus uses ever more GPU memory
# Confirmed cause: the merged PR adds detach in extract_features.py 'to save GPU memory': the per-batch outputs kept their autograd graphs alive until the final torch.cat
# Class: per-batch outputs with graph appended to a results list
import torch
import torch.nn as nn


class SequenceEncoder(nn.Module):
    def __init__(self, vocab_size=21128, hidden_size=768, layers=12):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, hidden_size)
        self.segment = nn.Embedding(3, hidden_size)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(hidden_size, 12, 4 * hidden_size, batch_first=True), layers)

    def forward(self, src, seg):
        emb = self.embedding(src) + self.segment(seg)
        output = self.encoder(emb)
        mask = (seg > 0).unsqueeze(-1).float()
        return (output * mask).sum(1) / mask.sum(1).clamp(min=1)


def batch_loader(batch_size, src, seg):
    for i in range(0, src.size(0), batch_size):
        yield src[i:i + batch_size], seg[i:i + batch_size]


def extract_features(model, src, seg, device, batch_size=64):
    model.eval()
    feature_vectors = []
    for src_batch, seg_batch in batch_loader(batch_size, src, seg):
        src_batch, seg_batch = src_batch.to(device), seg_batch.to(device)
        output = model(src_batch, seg_batch)
        feature_vectors.append(output)  # leak: ANY
    feature_vectors = torch.cat(feature_vectors, 0)
    return feature_vectors


if __name__ == "__main__":
    dev = torch.device("cuda")
    net = SequenceEncoder().to(dev)
    n = 200000
    src = torch.randint(0, 21128, (n, 128))
    seg = torch.ones(n, 128, dtype=torch.long)
    torch.save(extract_features(net, src, seg, dev), "/tmp/features.pt")
