# Recall case 10 (sealed24): interactive video segmentation demo writes every propagated frame mask into one preallocated CUDA buffer with autograd on
# Thread: https://github.com/seoungwugoh/ivs-demo/issues/1
# Reported: on PyTorch 0.4+ the interactive demo runs out of CUDA memory while propagating a user's scribble mask through the video frames
# Confirmed cause: the reporter fixed it (commit linked in the thread, issue closed): `volatile=True` on the Variables no longer disables autograd, so each propagation step writes the network output in place into the preallocated `all_E` buffer and reads the previous frame back from it, chaining one graph (with all saved activations) through every frame; wrapping the Prop_forward/Prop_backward calls in `with torch.no_grad():` fixes it
# Class: in-place writes of model outputs into a preallocated buffer under autograd (graph chained through the buffer across loop steps); inference without no_grad
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

from interaction_net import Inet
from propagation_net import Pnet
from ivs_utils import Get_weight, ToCudaPN, scribbles2mask, Dilate_mask


def ToCudaVariable(xs, volatile=False, requires_grad=False):
    if torch.cuda.is_available():
        return [Variable(x.cuda(), volatile=volatile, requires_grad=requires_grad) for x in xs]
    return [Variable(x, volatile=volatile, requires_grad=requires_grad) for x in xs]


class model():
    def __init__(self, frames):
        self.model_I = nn.DataParallel(Inet()).cuda()
        self.model_P = nn.DataParallel(Pnet()).cuda()
        self.model_I.load_state_dict(torch.load('I_e290.pth'))
        self.model_P.load_state_dict(torch.load('P_e290.pth'))
        self.model_I.eval()
        self.model_P.eval()

        self.frames = frames.copy()
        self.num_frames, self.height, self.width = self.frames.shape[:3]
        self.init_variables(self.frames)

    def init_variables(self, frames):
        self.all_F = torch.unsqueeze(torch.from_numpy(np.transpose(frames, (3, 0, 1, 2))).float() / 255., dim=0)  # 1,3,t,h,w
        self.all_E = torch.zeros(1, self.num_frames, self.height, self.width)  # 1,t,h,w
        self.prev_E = torch.zeros(1, self.num_frames, self.height, self.width)  # 1,t,h,w
        self.dummy_M = torch.zeros(1, self.height, self.width).long()
        self.all_F, self.all_E, self.prev_E, self.dummy_M = ToCudaVariable(
            [self.all_F, self.all_E, self.prev_E, self.dummy_M], volatile=True)
        self.ref = None
        self.a_ref = None
        self.next_a_ref = None
        self.prev_targets = []

    def Prop_forward(self, target, end):
        for n in range(target + 1, end + 1):
            self.all_E[:, n], _, self.next_a_ref = self.model_P(self.ref, self.a_ref, self.all_F[:, :, n], self.prev_E[:, n], torch.round(self.all_E[:, n - 1]), self.dummy_M, [1, 0, 0, 0, 0])  # leak: ANY

    def Prop_backward(self, target, end):
        for n in reversed(range(end, target)):
            self.all_E[:, n], _, self.next_a_ref = self.model_P(self.ref, self.a_ref, self.all_F[:, :, n], self.prev_E[:, n], torch.round(self.all_E[:, n + 1]), self.dummy_M, [1, 0, 0, 0, 0])  # leak: ANY

    def Run_propagation(self, target, mode='linear', at_least=-1):
        self.a_ref = self.next_a_ref
        self.prev_E = self.all_E

        left_end, right_end, weight = Get_weight(target, self.prev_targets, self.num_frames, at_least=at_least)

        self.Prop_forward(target, right_end)  # leak: ANY
        self.Prop_backward(target, left_end)  # leak: ANY

        for f in range(self.num_frames):
            self.all_E[:, :, f] = weight[f] * self.all_E[:, :, f] + (1 - weight[f]) * self.prev_E[:, :, f]

        self.prev_targets.append(target)

    def Run_interaction(self, scribbles):
        target = scribbles['annotated_frame']
        scribble_mask = scribbles2mask(scribbles, (self.height, self.width))[target]
        scribble_mask = Dilate_mask(scribble_mask, 1)
        self.tar_P, self.tar_N = ToCudaPN(scribble_mask)
        self.all_E[:, target], _, self.ref = self.model_I(self.all_F[:, :, target], self.all_E[:, target], self.tar_P, self.tar_N, self.dummy_M, [1, 0, 0, 0, 0])

    def Get_mask(self):
        return torch.round(self.all_E[0]).data.cpu().numpy().astype(np.uint8)
