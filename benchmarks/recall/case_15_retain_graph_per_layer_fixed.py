# Fixed twin of case 15: the teacher runs under no_grad and the layer losses are summed into one backward.
# Thread: https://github.com/pytorch/pytorch/issues/40005
# Reported: out of memory when training BERT's intermediate layers one distillation loss at a
#   time against a teacher's hidden states.
# Confirmed cause: one forward graph, one `output.backward(retain_graph=True)` per layer in a
#   loop over layers: the retained graph (and the teacher's, run with grad enabled) is kept for
#   every layer of every step; albanD closed it as a known issue (dup of #4661) and recommends
#   `torch.autograd.grad` instead of repeated retained backwards.
# Class: backward(retain_graph=True) in a loop that is not over data (over layers of one graph)
import torch
import torch.nn.functional as F


def distill_epoch(t_model, s_model, loader, optimizer, encoder_layers, device="cuda"):
    kl = torch.nn.KLDivLoss(reduction="batchmean")
    s_model.train()
    for batch in loader:
        inputs = {k: v.to(device) for k, v in batch.items()}
        with torch.no_grad():
            t_outputs = t_model(**inputs, output_hidden_states=True)
        s_outputs = s_model(**inputs, output_hidden_states=True)
        batch_size, row, col = s_outputs.hidden_states[1].size()
        optimizer.zero_grad()
        layer_losses = []
        for i, k in enumerate(encoder_layers):
            student = F.log_softmax(s_outputs.hidden_states[i + 1], dim=2).view(batch_size * row, 1, col)
            teacher = F.softmax(t_outputs.hidden_states[k + 1], dim=2).view(batch_size * row, 1, col)
            layer_losses.append(kl(student, teacher))
        torch.stack(layer_losses).sum().backward()
        optimizer.step()
