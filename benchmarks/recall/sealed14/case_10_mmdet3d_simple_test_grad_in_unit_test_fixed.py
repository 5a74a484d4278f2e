# Fixed twin of case 10: call simple_test inside torch.no_grad()
# Thread: https://github.com/open-mmlab/mmdetection3d/pull/483
# Reported: OOM in the unit tests that run simple_test on the models
# Confirmed cause: simple_test was called outside torch.no_grad(); merged PR puts it under no_grad (reviewers agreed, another contributor hit the same with 3D seg models)
# Class: inference helper (simple_test) called without torch.no_grad() in a loop of model tests
import torch
import torch.nn as nn


class VoteNetLike(nn.Module):
    def __init__(self, dim=256):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, dim), nn.ReLU(), nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.bbox_head = nn.Linear(dim, 7 + 18)

    def simple_test(self, points, img_metas):
        feats = self.backbone(points)
        preds = self.bbox_head(feats).max(dim=1).values
        return [dict(boxes_3d=p[:7], scores_3d=p[7:].softmax(-1)) for p in preds]


def _get_detector_cfgs():
    return [dict(dim=d) for d in (128, 256, 512, 512, 1024)]


def test_detectors():
    if not torch.cuda.is_available():
        return
    for cfg in _get_detector_cfgs():
        model = VoteNetLike(**cfg).cuda()
        points = torch.rand(2, 20000, 4, device="cuda")
        img_metas = [dict(box_type_3d="Depth")] * 2
        with torch.no_grad():
            results = model.simple_test(points, img_metas)
        assert len(results) == 2
        assert results[0]["boxes_3d"].shape == (7,)


if __name__ == "__main__":
    test_detectors()
