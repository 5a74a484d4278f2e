# Recall case 15 (sealed4): BiLSTM-CRF training sums the per-sentence negative log-likelihood tensors into a running total
# Thread: https://github.com/pytorch/pytorch/issues/1840
# Reported: the advanced NLP tutorial (BiLSTM-CRF) switched to GPU grows GPU memory without limit until OOM
# Confirmed cause: `sum_log_likelihood += neg_log_likelihood` keeps the graph of all previous timesteps/sentences alive (maintainer soumith confirmed the suggestion to accumulate `neg_log_likelihood.data` instead)
# Class: `total += loss` on a graph-carrying loss tensor
import torch
import torch.nn as nn

START_TAG, STOP_TAG = "<START>", "<STOP>"
device = torch.device("cuda")


def log_sum_exp(vec):
    max_score = vec.max(dim=1, keepdim=True).values
    return (max_score + torch.log(torch.sum(torch.exp(vec - max_score), dim=1, keepdim=True))).squeeze(1)


class BiLSTM_CRF(nn.Module):
    def __init__(self, vocab_size, tag_to_ix, embedding_dim=128, hidden_dim=256):
        super().__init__()
        self.tag_to_ix, self.tagset_size = tag_to_ix, len(tag_to_ix)
        self.word_embeds = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2, num_layers=1, bidirectional=True)
        self.hidden2tag = nn.Linear(hidden_dim, self.tagset_size)
        self.transitions = nn.Parameter(torch.randn(self.tagset_size, self.tagset_size))
        self.transitions.data[tag_to_ix[START_TAG], :] = -10000
        self.transitions.data[:, tag_to_ix[STOP_TAG]] = -10000

    def _get_lstm_features(self, sentence):
        embeds = self.word_embeds(sentence).view(len(sentence), 1, -1)
        lstm_out, _ = self.lstm(embeds)
        return self.hidden2tag(lstm_out.view(len(sentence), -1))

    def _forward_alg(self, feats):
        forward_var = torch.full((1, self.tagset_size), -10000.0, device=feats.device)
        forward_var[0][self.tag_to_ix[START_TAG]] = 0.0
        for feat in feats:
            next_tag_var = forward_var + self.transitions + feat.view(-1, 1)
            forward_var = log_sum_exp(next_tag_var).view(1, -1)
        terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
        return log_sum_exp(terminal_var)[0]

    def _score_sentence(self, feats, tags):
        tags = torch.cat([torch.tensor([self.tag_to_ix[START_TAG]], device=feats.device), tags])
        score = torch.zeros(1, device=feats.device)
        for i, feat in enumerate(feats):
            score = score + self.transitions[tags[i + 1], tags[i]] + feat[tags[i + 1]]
        return score + self.transitions[self.tag_to_ix[STOP_TAG], tags[-1]]

    def neg_log_likelihood(self, sentence, tags):
        feats = self._get_lstm_features(sentence)
        return self._forward_alg(feats) - self._score_sentence(feats, tags)


if __name__ == "__main__":
    tag_to_ix = {"B": 0, "I": 1, "O": 2, START_TAG: 3, STOP_TAG: 4}
    training_data = [(torch.randint(0, 20000, (40,)), torch.randint(0, 3, (40,))) for _ in range(20000)]
    model = BiLSTM_CRF(20000, tag_to_ix).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-4)

    for epoch in range(30):
        sum_log_likelihood = 0
        for sentence, tags in training_data:
            model.zero_grad()
            neg_log_likelihood = model.neg_log_likelihood(sentence.to(device), tags.to(device))
            sum_log_likelihood += neg_log_likelihood  # leak: ANY
            neg_log_likelihood.backward()
            optimizer.step()
        print(epoch, float(sum_log_likelihood) / len(training_data))
