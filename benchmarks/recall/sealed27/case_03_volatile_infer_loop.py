# Thread: https://github.com/Tencent/FaceDetection-DSFD/issues/11
# Reported: demo.py cannot process more than one image in a loop: CUDA out of memory on the
#   second image.
# Confirmed cause: the reporter, after fixing it, and the maintainer: infer() wraps the input in
#   Variable(..., volatile=True), written for torch 0.3.1, where volatile meant no backward graph;
#   on newer torch volatile is ignored, so detection runs with autograd on. "Problem solved. You
#   should replace usage of variable with torch.no_grad in infer function" (and build the prior
#   boxes without requires_grad).
# Class: inference with autograd on (a deprecated volatile flag that no longer disables it)
import cv2
import numpy as np
import torch
from torch.autograd import Variable


def infer(net, img, transform, thresh, cuda, shrink):
    if shrink != 1:
        img = cv2.resize(img, None, None, fx=shrink, fy=shrink, interpolation=cv2.INTER_LINEAR)
    x = torch.from_numpy(transform(img)[0]).permute(2, 0, 1)
    x = Variable(x.unsqueeze(0), volatile=True)  # leak: ANY
    if cuda:
        x = x.cuda()
    y = net(x)  # leak: ANY
    detections = y.data
    scale = torch.Tensor([img.shape[1] / shrink, img.shape[0] / shrink,
                          img.shape[1] / shrink, img.shape[0] / shrink])
    det = []
    for i in range(detections.size(1)):
        j = 0
        while detections[0, i, j, 0] >= thresh:
            score = detections[0, i, j, 0]
            pt = (detections[0, i, j, 1:] * scale).cpu().numpy()
            det.append([pt[0], pt[1], pt[2], pt[3], float(score)])
            j += 1
    return np.array(det) if det else np.zeros((1, 5))


def test_images(net, image_paths, transform, thresh=0.5, cuda=True):
    net.eval()
    results = {}
    for path in image_paths:
        image = cv2.imread(path, cv2.IMREAD_COLOR)
        max_im_shrink = (0x7fffffff / 200.0 / (image.shape[0] * image.shape[1])) ** 0.5
        shrink = max_im_shrink if max_im_shrink < 1 else 1
        results[path] = infer(net, image, transform, thresh, cuda, shrink)
    return results
