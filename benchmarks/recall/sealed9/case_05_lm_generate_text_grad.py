# Recall case 05 (sealed9): character LM generate_text runs thousands of forward steps with autograd on, chaining the hidden state
# Thread: https://github.com/flairNLP/flair/issues/210
# Reported: generating text with a trained flair LanguageModel ran out of memory (raised in #167) and was slow
# Confirmed cause: maintainer (alanakbik) says autograd is not needed and generate_text must run under torch.no_grad(); merged PR #214 adds it
# Class: generation/decoding loop without no_grad keeping a graph over every generated step
import torch
import torch.nn as nn


class LanguageModel(nn.Module):
    def __init__(self, idx2item, hidden_size=2048, embedding_size=100):
        super().__init__()
        self.idx2item = idx2item
        self.hidden_size = hidden_size
        self.encoder = nn.Embedding(len(idx2item), embedding_size)
        self.rnn = nn.LSTM(embedding_size, hidden_size)
        self.decoder = nn.Linear(hidden_size, len(idx2item))

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(1, bsz, self.hidden_size), weight.new_zeros(1, bsz, self.hidden_size))

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output), output, hidden

    def generate_text(self, number_of_characters=1000, temperature=1.0):
        characters = []
        idx2item = self.idx2item
        hidden = self.init_hidden(1)
        input = torch.randint(len(idx2item), (1, 1), device=next(self.parameters()).device)
        for i in range(number_of_characters):
            prediction, _, hidden = self.forward(input, hidden)  # leak: ANY
            word_weights = prediction.squeeze().div(temperature).exp()
            word_idx = torch.multinomial(word_weights, 1)[0]
            input.fill_(int(word_idx))
            characters.append(idx2item[int(word_idx)])
        return "".join(characters)


if __name__ == "__main__":
    chars = [chr(c) for c in range(32, 127)]
    lm = LanguageModel(chars).cuda()
    lm.eval()
    for _ in range(5):
        print(lm.generate_text(number_of_characters=20000)[:80])
