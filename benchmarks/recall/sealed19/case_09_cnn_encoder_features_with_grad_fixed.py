# Fixed twin of case 09: the batch-encoding loop runs under torch.no_grad()
# Thread: https://github.com/idealo/imagededup/pull/192
# Reported: encoding a large image directory with the CNN method uses a huge amount of (GPU) memory and ends in out-of-memory; a user saw about 120 GB for 10k images before the fix (issue #193)
# Confirmed cause: the MobileNet forward pass in the batch-encoding loop runs with gradient tracking, and the loop extends a list with the attached output rows, so activations of every batch stay alive until the end; the merged fix wraps the loop in torch.no_grad()
# Class: evaluation / feature extraction without no_grad, outputs kept across the loop
import torch
from torch import nn


class MobilenetV3Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1),
            nn.Hardswish(),
            nn.Conv2d(16, 576, 3, stride=2, padding=1),
            nn.AdaptiveAvgPool2d(1),
        )

    def forward(self, x):
        return self.body(x)


class CNN:
    def __init__(self, batch_size=64):
        self.batch_size = batch_size
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = MobilenetV3Features().to(self.device)
        self.model.eval()

    def _get_cnn_features_batch(self, dataloader):
        feat_arr, all_filenames = [], []
        bad_im_count = 0

        with torch.no_grad():
            for ims, filenames, bad_images in dataloader:
                arr = self.model(ims.to(self.device))
                feat_arr.extend(arr)
                all_filenames.extend(filenames)
                if bad_images:
                    bad_im_count += 1

        feat_vec = torch.stack(feat_arr).squeeze()
        feat_vec = feat_vec.detach().cpu().numpy()
        valid_files = [f for f in all_filenames if f]
        return {name: feat_vec[i] for i, name in enumerate(valid_files)}

    def encode_images(self, dataloader):
        return self._get_cnn_features_batch(dataloader)
