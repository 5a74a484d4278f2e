# Fixed twin of case 11: always load the checkpoint with `map_location='cpu'` and let `model.to(device)` place the weights (merged PR #567)
# Thread: https://github.com/open-mmlab/mmocr/pull/567
# Reported: (motivation linked from the PR, mmdetection PR #6405) on a multi-GPU machine, building a model for `device='cuda:1'` from a checkpoint saved on cuda:0 leaves GPU memory taken on cuda:0 after init, or fails with a device error when the saved device does not exist
# Confirmed cause: the maintainers' merged fix (commit 37f8fcd "[Fix] Always map location to cpu when loading checkpoint"): `init_detector` passed `map_location=None` for any CUDA device, so `torch.load` deserialized every tensor onto the GPU it was saved from (cuda:0) before `model.to(device)` moved the weights to the requested GPU; the fix always loads with `map_location='cpu'`
# Class: torch.load onto the GPU (no map_location; tensors restored to the saved device)
import warnings

import mmcv
import torch
from mmcv.runner import load_checkpoint
from mmdet.core import get_classes

from mmocr.models import build_detector


def init_detector(config, checkpoint=None, device='cuda:0', cfg_options=None):
    if isinstance(config, str):
        config = mmcv.Config.fromfile(config)
    elif not isinstance(config, mmcv.Config):
        raise TypeError('config must be a filename or Config object, '
                        f'but got {type(config)}')
    if cfg_options is not None:
        config.merge_from_dict(cfg_options)
    if config.model.get('pretrained'):
        config.model.pretrained = None
    config.model.train_cfg = None
    model = build_detector(config.model, test_cfg=config.get('test_cfg'))
    if checkpoint is not None:
        checkpoint = load_checkpoint(model, checkpoint, map_location='cpu')
        if 'CLASSES' in checkpoint.get('meta', {}):
            model.CLASSES = checkpoint['meta']['CLASSES']
        else:
            warnings.simplefilter('once')
            warnings.warn('Class names are not saved in the checkpoint\'s '
                          'meta data, use COCO classes by default.')
            model.CLASSES = get_classes('coco')
    model.cfg = config
    model.to(device)
    model.eval()
    return model


def main(det_config, det_ckpt, recog_config, recog_ckpt, images, gpu=1):
    device = torch.device(f'cuda:{gpu}')
    detector = init_detector(det_config, det_ckpt, device=device)
    recognizer = init_detector(recog_config, recog_ckpt, device=device)
    for img in images:
        yield detector, recognizer, img
