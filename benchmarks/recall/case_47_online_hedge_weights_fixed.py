# Fixed twin of case 47: the merged fix, the hedge-weight update runs under torch.no_grad().
# Thread: https://github.com/alison-carrera/onn/pull/4
# Reported: on a long data stream GPU memory keeps growing until the model consumes too much.
# Confirmed cause: "when doing manual gradient update, PyTorch will keep growing the
#   computation graph": `self.alpha[i] *= torch.pow(self.b, losses_per_layer[i])` multiplies the
#   persistent hedge weights by graph-carrying losses at every sample; the merged fix runs the
#   manual update under `torch.no_grad()` (the reporter verified memory stops growing and the
#   model still converges).
# Class: a long-lived tensor updated in place from graph-carrying values every step
import torch
from torch import nn
from torch.nn.parameter import Parameter


class ONN(nn.Module):
    def __init__(self, features_size, max_num_hidden_layers, qtd_neuron_per_hidden_layer, n_classes,
                 b=0.99, n=0.01, s=0.2, device="cuda"):
        super().__init__()
        self.device = device
        self.b = Parameter(torch.tensor(b), requires_grad=False).to(device)
        self.n = Parameter(torch.tensor(n), requires_grad=False).to(device)
        self.s = Parameter(torch.tensor(s), requires_grad=False).to(device)
        self.hidden_layers = nn.ModuleList(
            [nn.Linear(features_size if i == 0 else qtd_neuron_per_hidden_layer, qtd_neuron_per_hidden_layer)
             for i in range(max_num_hidden_layers)]).to(device)
        self.output_layers = nn.ModuleList(
            [nn.Linear(qtd_neuron_per_hidden_layer, n_classes) for _ in range(max_num_hidden_layers)]).to(device)
        self.alpha = Parameter(torch.ones(max_num_hidden_layers) / max_num_hidden_layers, requires_grad=False).to(device)
        self.loss_fn = nn.CrossEntropyLoss()

    def forward(self, x):
        outs, h = [], x
        for hidden, head in zip(self.hidden_layers, self.output_layers):
            h = torch.relu(hidden(h))
            outs.append(head(h))
        return outs

    def update_weights(self, X, Y):
        predictions_per_layer = self.forward(X)
        losses_per_layer = [self.loss_fn(out, Y) for out in predictions_per_layer]
        self.zero_grad()
        for i, loss in enumerate(losses_per_layer):
            loss.backward(retain_graph=True)
            with torch.no_grad():
                self.output_layers[i].weight -= self.n * self.alpha[i] * self.output_layers[i].weight.grad
        with torch.no_grad():
            for i in range(len(losses_per_layer)):
                self.alpha[i] *= torch.pow(self.b, losses_per_layer[i])
                self.alpha[i] = torch.max(self.alpha[i], self.s / len(losses_per_layer))
            self.alpha = Parameter(self.alpha / torch.sum(self.alpha), requires_grad=False).to(self.device)

    def partial_fit(self, X_data, Y_data):
        self.update_weights(X_data.to(self.device), Y_data.to(self.device))


def run_stream(model, stream):
    for x, y in stream:
        model.partial_fit(x, y)
