# Fixed twin of case 09: run the whole pi-update stage (feature caching and leaf routing) under torch.no_grad(), as the maintainer's port for PyTorch 0.4+ does
# Thread: https://github.com/jingxil/Neural-Decision-Forests/issues/2
# Reported: with PyTorch 0.4 the training script runs out of CUDA memory (it worked on 0.3); the reporter says it fails unless the volatile flag is replaced by torch.no_grad()
# Confirmed cause: volatile=True no longer has any effect since PyTorch 0.4, so the "update pi" stage, which runs the feature layer over every training batch and keeps the features (and the per-tree leaf routings) in lists, keeps each batch's autograd graph alive; the maintainer ported the script and now wraps that stage in torch.no_grad()
# Class: helper that only computes statistics runs the model with grad on and keeps every batch's output (graph) in a Python list
import torch
import torch.nn.functional as F
from torch.autograd import Variable


def update_pi(model, train_loader, n_class, use_cuda=True, n_iter=20):
    cls_onehot = torch.eye(n_class)
    feat_batches = []
    target_batches = []
    with torch.no_grad():
        for batch_idx, (data, target) in enumerate(train_loader):
            if use_cuda:
                data, target, cls_onehot = data.cuda(), target.cuda(), cls_onehot.cuda()
            data = Variable(data)
            feats = model.feature_layer(data)
            feats = feats.view(feats.size()[0], -1)
            feat_batches.append(feats)
            target_batches.append(cls_onehot[target])

        for tree in model.forest.trees:
            mu_batches = []
            for feats in feat_batches:
                mu_batches.append(tree(feats))
            for _ in range(n_iter):
                new_pi = torch.zeros((tree.n_leaf, tree.n_class))
                if use_cuda:
                    new_pi = new_pi.cuda()
                for mu, target in zip(mu_batches, target_batches):
                    pi = tree.get_pi()
                    prob = tree.cal_prob(mu, pi)
                    pi, prob, mu = pi.data, prob.data, mu.data
                    _prob = torch.clamp(prob.unsqueeze(1), min=1e-6, max=1.0)
                    new_pi += torch.sum(target.unsqueeze(1) * pi.unsqueeze(0) * mu.unsqueeze(2) / _prob, dim=0)
                tree.update_pi(F.softmax(Variable(new_pi), dim=1).data)


def train(model, optim, train_loader, n_class, epochs, use_cuda=True):
    for epoch in range(1, epochs + 1):
        update_pi(model, train_loader, n_class, use_cuda)
        model.train()
        for data, target in train_loader:
            if use_cuda:
                data, target = data.cuda(), target.cuda()
            optim.zero_grad()
            output = model(data)
            loss = F.nll_loss(torch.log(output), target)
            loss.backward()
            optim.step()
