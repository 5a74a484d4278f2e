# Recall case 09 (sealed21): multi-scale score maps merged into a preallocated zero map by in-place slice writes of torch.max(slice, prob)
# Thread: https://github.com/microsoft/VideoX/pull/47
# Reported: GPU memory slowly increases while training the moment-localization model (issue #46: "GPU memory increasing in training")
# Confirmed cause: the reporter's merged fix (PR #47 for issue #46) changes only this line: torch.max read the very slice of the preallocated score_map that the same statement overwrites in place, while prob requires grad; reading a .clone() of the slice stopped the growth
# Class: in-place write into a preallocated buffer (slice assignment of a grad-requiring result that reads the buffer itself)
import torch
import torch.nn.functional as F


def recover_to_single_map(joint_probs):
    batch_size, _, map_size, _ = joint_probs[0].shape
    score_map = torch.zeros(batch_size, 1, map_size, map_size).cuda()
    for prob in joint_probs:
        scale_num_clips, scale_num_anchors = prob.shape[2:]
        dilation = map_size // scale_num_clips
        for i in range(scale_num_anchors):
            rows = slice(None, map_size // dilation * dilation, dilation)
            col = (i + 1) * dilation - 1
            score_map[..., rows, col] = torch.max(score_map[..., rows, col], prob[..., i])  # leak: ANY
    return score_map


def network(sample, model, loss_fn, optimizer=None):
    predictions, map_masks = model(sample["words"], sample["txt_mask"], sample["video"], sample["vis_mask"])

    loss_value = 0
    for prediction, map_mask, map_gt in zip(predictions, map_masks, sample["map_gts"]):
        loss_value += loss_fn(prediction, map_mask, map_gt.cuda())

    joint_prob = recover_to_single_map(predictions)
    mask = recover_to_single_map(map_masks)
    sorted_times = get_proposal_results(joint_prob.detach().cpu(), mask, sample["durations"])

    if model.training:
        optimizer.zero_grad()
        loss_value.backward()
        optimizer.step()
    return loss_value.item(), sorted_times


def get_proposal_results(scores, mask, durations):
    batch_size, _, num_clips, num_anchors = scores.shape
    k = int(torch.sum(mask[0] > 0).item())
    top, indexes = torch.topk(scores.view(batch_size, -1), k, dim=1)
    starts = (indexes // num_anchors).float() / num_clips * torch.tensor(durations).view(batch_size, 1)
    ends = starts + (indexes % num_anchors + 1).float() / num_clips * torch.tensor(durations).view(batch_size, 1)
    return [torch.stack([s, e], dim=1).tolist() for s, e in zip(starts, ends)]


def train_epoch(model, loader, loss_fn, optimizer):
    model.train()
    for sample in loader:
        loss, _ = network(sample, model, loss_fn, optimizer)
