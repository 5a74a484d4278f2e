# Recall case 53: feature extraction extends Python lists with label tensors
# Thread: https://github.com/KaiyangZhou/deep-person-reid/pull/493
# Reported: evaluating a video re-id model on MARS runs out of memory; the evaluation's feature
#   extraction keeps growing host memory.
# Confirmed cause: the merged PR: "extending `pids_` and `camids_` with `torch.Tensor`s seems to
#   introduce a memory leak that leads to OOM"; `list.extend(tensor)` stores one 0-d tensor view
#   per element, each keeping its batch tensor's storage alive. Converting `pids` and `camids`
#   to lists before extending fixes it.
# Class: list.extend(tensor) (each element a view of the whole storage)
import numpy as np
import torch


class Engine(object):
    def __init__(self, datamanager, model, use_gpu=True):
        self.datamanager = datamanager
        self.model = model
        self.use_gpu = use_gpu

    def parse_data_for_eval(self, data):
        imgs = data["img"]
        pids = data["pid"]
        camids = data["camid"]
        return imgs, pids, camids

    def extract_features(self, input):
        return self.model(input)

    @torch.no_grad()
    def _feature_extraction(self, data_loader):
        f_, pids_, camids_ = [], [], []
        for batch_idx, data in enumerate(data_loader):
            imgs, pids, camids = self.parse_data_for_eval(data)
            if self.use_gpu:
                imgs = imgs.cuda()
            features = self.extract_features(imgs)
            features = features.cpu().clone()
            f_.append(features)
            pids_.extend(pids)  # leak: ANY
            camids_.extend(camids)  # leak: ANY
        f_ = torch.cat(f_, 0)
        pids_ = np.asarray(pids_)
        camids_ = np.asarray(camids_)
        return f_, pids_, camids_

    def evaluate(self, query_loader, gallery_loader):
        self.model.eval()
        qf, q_pids, q_camids = self._feature_extraction(query_loader)
        gf, g_pids, g_camids = self._feature_extraction(gallery_loader)
        distmat = torch.cdist(qf, gf)
        return distmat.numpy(), q_pids, g_pids, q_camids, g_camids
