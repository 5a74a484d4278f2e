# Recall case 13 (sealed11): the learning algorithm's train() returns its loss tensor and the driver sums it across steps
# Thread: https://github.com/ULTR-Community/ULTRA_pytorch/issues/6
# Reported: running DLA for 10k steps uses up all CPU memory; the same happens in regression_EM, pdgd, nsgd, ...
# Confirmed cause: train() returned self.loss (a graph-attached tensor) and main.py did `loss += step_loss / steps_per_checkpoint`, keeping every step's graph alive; fixed in the merged PR #7 ("fix loss memory stacking") by returning self.loss.item()
# Class: helper returns a graph-attached loss that the caller accumulates into a running total
import torch
import torch.nn as nn


class DNN(nn.Module):
    def __init__(self, feature_size, hidden=(512, 256, 128)):
        super().__init__()
        layers, d = [], feature_size
        for h in hidden:
            layers += [nn.Linear(d, h), nn.ELU()]
            d = h
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x).squeeze(-1)


class DLA:
    """Dual learning algorithm: jointly learns a ranker and a propensity model from clicks."""

    def __init__(self, feature_size, rank_list_size, lr=0.05):
        self.model = DNN(feature_size)
        self.propensity_model = DNN(rank_list_size, hidden=(64,))
        self.rank_list_size = rank_list_size
        self.optimizer = torch.optim.Adagrad(
            list(self.model.parameters()) + list(self.propensity_model.parameters()), lr=lr)
        self.global_step = 0
        self.loss = None
        self.train_summary = {}

    def softmax_loss(self, scores, labels, weights=None):
        weights = torch.ones_like(labels) if weights is None else weights
        labels = labels * weights
        return -(labels * torch.log_softmax(scores, dim=1)).sum(dim=1).mean()

    def train(self, input_feed):
        self.model.train()
        features, clicks = input_feed["features"], input_feed["clicks"]
        batch, n, f = features.shape
        train_output = self.model(features.view(-1, f)).view(batch, n)
        position = torch.eye(n).unsqueeze(0).expand(batch, n, n)
        propensity = self.propensity_model(position.reshape(-1, n)).view(batch, n)
        with torch.no_grad():
            ips_w = torch.softmax(propensity, 1) * n
            irw_w = torch.softmax(train_output, 1) * n
        exam_loss = self.softmax_loss(propensity, clicks, irw_w)
        rank_loss = self.softmax_loss(train_output, clicks, ips_w)
        self.loss = exam_loss + rank_loss
        self.optimizer.zero_grad()
        self.loss.backward()
        self.optimizer.step()
        self.train_summary = {"exam_loss": exam_loss.item(), "rank_loss": rank_loss.item()}
        self.global_step += 1
        return self.loss, None, self.train_summary  # leak: ANY


def get_batch(batch_size=256, rank_list_size=10, feature_size=136):
    features = torch.randn(batch_size, rank_list_size, feature_size)
    clicks = (torch.rand(batch_size, rank_list_size) < 0.1).float()
    return {"features": features, "clicks": clicks}


def main(max_train_iteration=10_000, steps_per_checkpoint=50):
    model = DLA(feature_size=136, rank_list_size=10)
    loss = 0.0
    current_step = 0
    previous_losses = []
    while current_step < max_train_iteration:
        input_feed = get_batch()
        step_loss, _, summary = model.train(input_feed)
        loss += step_loss / steps_per_checkpoint  # leak: ANY
        current_step += 1
        if current_step % steps_per_checkpoint == 0:
            print("global step %d loss %.4f" % (model.global_step, loss))
            previous_losses.append(loss)
            if loss == float("inf"):
                break
            loss = 0.0


if __name__ == "__main__":
    main()
