# Recall case 13 (sealed18): MAML outer loop builds a functional copy of the network per task with `higher`, and the copies' reference cycles keep their GPU tensors until the cyclic garbage collector happens to run
# Thread: https://github.com/sungyubkim/GBML/issues/1
# Reported: MAML with the ResNet backbone increases GPU memory usage every iteration and ends in CUDA out of memory
# Confirmed cause: the repository author found the main cause "related to python garbage collection" and fixed it with an explicit `gc.collect()` after each `model.outer_loop(...)` call, which "saves GPU memory significantly"; as only cyclic garbage needs the collector, the per-task `innerloop_ctx` functional models and differentiable-optimizer state sit in reference cycles that keep finished tasks' fast weights and graphs on the GPU until the cyclic collector runs
# Class: object lifetimes (reference cycles holding device tensors)
import higher
import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm


def get_accuracy(logit, target):
    return (logit.argmax(dim=1) == target).float().mean()


class MAML:
    def __init__(self, args, network):
        self.args = args
        self.network = network.cuda()
        self.batch_size = args.batch_size
        self.outer_optimizer = torch.optim.Adam(self.network.parameters(), lr=args.outer_lr)

    @torch.enable_grad()
    def inner_loop(self, fmodel, diffopt, train_input, train_target):
        train_logit = fmodel(train_input)
        inner_loss = F.cross_entropy(train_logit, train_target)
        diffopt.step(inner_loss)

    def outer_loop(self, batch, is_train):
        self.network.zero_grad()
        train_inputs, train_targets = batch["train"]
        test_inputs, test_targets = batch["test"]
        train_inputs, train_targets = train_inputs.cuda(), train_targets.cuda()
        test_inputs, test_targets = test_inputs.cuda(), test_targets.cuda()

        loss_log = 0
        acc_log = 0
        grad_list = []
        for train_input, train_target, test_input, test_target in zip(train_inputs, train_targets,
                                                                     test_inputs, test_targets):
            inner_optimizer = torch.optim.SGD(self.network.parameters(), lr=self.args.inner_lr)
            with higher.innerloop_ctx(self.network, inner_optimizer, track_higher_grads=is_train) as (fmodel, diffopt):  # leak: ANY
                for _ in range(self.args.n_inner):
                    self.inner_loop(fmodel, diffopt, train_input, train_target)
                test_logit = fmodel(test_input)
                outer_loss = F.cross_entropy(test_logit, test_target)
                loss_log += outer_loss.item() / self.batch_size
                with torch.no_grad():
                    acc_log += get_accuracy(test_logit, test_target).item() / self.batch_size
                if is_train:
                    outer_grad = torch.autograd.grad(outer_loss, fmodel.parameters(time=0))
                    grad_list.append(outer_grad)

        if is_train:
            for p, grads in zip(self.network.parameters(), zip(*grad_list)):
                p.grad = torch.stack(grads).mean(dim=0)
            grad_log = sum(p.grad.norm().item() for p in self.network.parameters())
            self.outer_optimizer.step()
            return loss_log, acc_log, grad_log
        return loss_log, acc_log


def train(args, model, dataloader):
    loss_list, acc_list, grad_list = [], [], []
    with tqdm(dataloader, total=args.num_train_batches) as pbar:
        for batch_idx, batch in enumerate(pbar):
            loss_log, acc_log, grad_log = model.outer_loop(batch, is_train=True)  # leak: ANY
            loss_list.append(loss_log)
            acc_list.append(acc_log)
            grad_list.append(grad_log)
            pbar.set_description("loss = {:.4f} || acc={:.4f}".format(np.mean(loss_list), np.mean(acc_list)))
            if batch_idx >= args.num_train_batches:
                break
    return np.mean(loss_list), np.mean(acc_list), np.mean(grad_list)
