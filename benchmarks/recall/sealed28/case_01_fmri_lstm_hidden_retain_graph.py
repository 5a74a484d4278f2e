# Thread: https://github.com/sgadgil6/cnslab_fmri/issues/4
# Reported: run_training_lstm.py stops at loss.backward() with "Trying to backward through the graph
#   a second time"; after adding retain_graph=True the run no longer errors but GPU memory fills up
#   batch after batch until CUDA out of memory.
# Confirmed cause: fMRI_LSTM.forward passed self.hidden (the state produced by the previous batch)
#   back into the LSTM and stored the new state on the module, so each batch's graph hung off the
#   previous batches' graphs; retain_graph=True then kept all of them alive. The reporter's fix,
#   merged by the maintainer as PR #5 ("lstm fix"), stops feeding the carried state back ("You don't
#   really need to pass hidden layer state") and the plain backward works again.
# Class: recurrent hidden state carried across batches on the module without detach, with
#   backward(retain_graph=True) added to silence the resulting error
import random

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class fMRI_LSTM(nn.Module):
    def __init__(self, hidden_dim, input_dim, target_size, batch_size):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.lstm = nn.LSTM(input_dim, hidden_dim, batch_first=True)
        self.linear = nn.Linear(hidden_dim, 1)
        self.hidden = self.init_hidden(batch_size=batch_size)
        self.dropout = nn.Dropout(p=0.5)
        self.target_size = target_size

    def init_hidden(self, batch_size):
        h0 = torch.randn(1, batch_size, self.hidden_dim, device=device)
        c0 = torch.randn(1, batch_size, self.hidden_dim, device=device)
        return (h0, c0)

    def forward(self, x):
        lstm_out, self.hidden = self.lstm(x, self.hidden)  # leak: ANY
        last_step = lstm_out[:, -1, :]
        out = self.dropout(last_step)
        linear_output = self.linear(out)
        return torch.sigmoid(linear_output)


def train(train_data, train_label, W=50, batch_size=64, n_minibatches=30001, LR=0.001):
    # train_data: [subjects, timepoints, 22 ROIs], train_label: [subjects]
    net = fMRI_LSTM(256, 22, 1, batch_size=batch_size).to(device)
    criterion = nn.BCELoss()
    optimizer = optim.Adam(net.parameters(), lr=LR, weight_decay=0.001)

    training_loss = 0.0
    for epoch in range(n_minibatches):
        idx_batch = np.random.permutation(int(train_data.shape[0]))[:batch_size]
        train_data_batch = np.zeros((batch_size, W, 22), dtype=np.float32)
        train_label_batch = train_label[idx_batch]
        for i in range(batch_size):
            r1 = random.randint(0, train_data.shape[1] - W)
            train_data_batch[i] = train_data[idx_batch[i], r1:r1 + W, :]

        train_data_batch_dev = torch.from_numpy(train_data_batch).to(device)
        train_label_batch_dev = torch.from_numpy(train_label_batch).float().unsqueeze(1).to(device)

        optimizer.zero_grad()
        outputs = net(train_data_batch_dev)
        loss = criterion(outputs, train_label_batch_dev)
        loss.backward(retain_graph=True)  # leak: ANY
        optimizer.step()

        training_loss += loss.item()
        if epoch % 1000 == 0:
            print("[%d] training loss: %.3f" % (epoch + 1, training_loss / 1000))
            training_loss = 0.0
    return net
