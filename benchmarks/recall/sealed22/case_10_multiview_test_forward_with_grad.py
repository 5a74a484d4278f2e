# Recall case 10 (sealed22): multi-view video test loop runs the model forward with autograd on
# Thread: https://github.com/facebookresearch/SlowFast/issues/109
# Reported: testing a pretrained SlowFast model on one's own data only fits with TEST.NUM_SPATIAL_CROP = 1 and TEST.NUM_ENSEMBLE_VIEWS = 1; wrapping the prediction block of perform_test in torch.no_grad() makes GPU memory consumption drop sharply
# Confirmed cause: the maintainer agrees that no_grad should be used for memory conservation at inference; perform_test built a graph (saving every activation for backward) for each multi-view clip batch; the maintainers then committed "eval with no grad", decorating perform_test with @torch.no_grad()
# Class: evaluation / test loop without no_grad (peak activation memory of a graph never used)
import torch

import slowfast.utils.distributed as du


def perform_test(test_loader, model, test_meter, cfg):  # leak: ANY
    model.eval()
    test_meter.iter_tic()

    for cur_iter, (inputs, labels, video_idx, meta) in enumerate(test_loader):
        if isinstance(inputs, (list,)):
            for i in range(len(inputs)):
                inputs[i] = inputs[i].cuda(non_blocking=True)
        else:
            inputs = inputs.cuda(non_blocking=True)
        labels = labels.cuda()
        video_idx = video_idx.cuda()

        # Perform the forward pass.
        preds = model(inputs)  # leak: ANY

        # Gather all the predictions across all the devices to perform ensemble.
        if cfg.NUM_GPUS > 1:
            preds, labels, video_idx = du.all_gather([preds, labels, video_idx])

        test_meter.iter_toc()
        test_meter.update_stats(
            preds.detach().cpu(),
            labels.detach().cpu(),
            video_idx.detach().cpu(),
        )
        test_meter.log_iter_stats(cur_iter)
        test_meter.iter_tic()

    test_meter.finalize_metrics()
    test_meter.reset()
