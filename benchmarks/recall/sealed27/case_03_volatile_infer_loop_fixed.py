# Fixed twin of case 03: infer() runs the detector under torch.no_grad() instead of relying on
#   the removed volatile flag, as the reporter did.
import cv2
import numpy as np
import torch


def infer(net, img, transform, thresh, cuda, shrink):
    if shrink != 1:
        img = cv2.resize(img, None, None, fx=shrink, fy=shrink, interpolation=cv2.INTER_LINEAR)
    x = torch.from_numpy(transform(img)[0]).permute(2, 0, 1)
    x = x.unsqueeze(0)
    if cuda:
        x = x.cuda()
    with torch.no_grad():
        y = net(x)
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
