# Recall case 08 (sealed12): sampling a long sequence from the char-RNN keeps every step's graph because generation runs with autograd on
# Thread: https://github.com/spro/practical-pytorch/issues/28
# Reported: out-of-memory errors when generating long sequences on the GPU
# Confirmed cause: generation inputs were not volatile, so each step's hidden state chained the graph of all previous steps; the forum answer recommends volatile (now no_grad) and the maintainer agreed to add it
# Class: autoregressive sampling loop feeding hidden state back without no_grad
import string

import torch
import torch.nn as nn

all_characters = string.printable
n_characters = len(all_characters)


class CharRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size, n_layers=2):
        super().__init__()
        self.hidden_size = hidden_size
        self.n_layers = n_layers
        self.encoder = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, n_layers)
        self.decoder = nn.Linear(hidden_size, output_size)

    def forward(self, inp, hidden):
        out, hidden = self.gru(self.encoder(inp.view(1, -1)), hidden)
        return self.decoder(out.view(1, -1)), hidden

    def init_hidden(self, device):
        return torch.zeros(self.n_layers, 1, self.hidden_size, device=device)


def char_tensor(s, device):
    return torch.tensor([all_characters.index(c) for c in s], dtype=torch.long, device=device)


def generate(decoder, prime_str="A", predict_len=5000, temperature=0.8, device="cuda"):
    hidden = decoder.init_hidden(device)
    prime_input = char_tensor(prime_str, device)
    predicted = prime_str
    for p in range(len(prime_str) - 1):  # leak: ANY
        _, hidden = decoder(prime_input[p], hidden)
    inp = prime_input[-1]
    for p in range(predict_len):  # leak: ANY
        output, hidden = decoder(inp, hidden)
        output_dist = output.data.view(-1).div(temperature).exp()
        top_i = torch.multinomial(output_dist, 1)[0]
        predicted_char = all_characters[top_i]
        predicted += predicted_char
        inp = char_tensor(predicted_char, device)
    return predicted


if __name__ == "__main__":
    model = CharRNN(n_characters, 150, n_characters).cuda()
    print(generate(model, "Wh", 5000))
