# Recall case 15 (sealed9): a speaker-verification DataLoader forks 8 workers over a Dataset holding large Python lists and dicts
# Thread: https://github.com/HarryVolek/PyTorch_Speaker_Verification/issues/26
# Reported: with a >7000-speaker dataset, host memory rose rapidly after the first epoch until it exceeded RAM; num_workers=0 fixed it (and trained faster)
# Confirmed cause: reporter tied it to DataLoader workers copying the parent's Python objects (pytorch#13246) and asked for default num_workers 0; maintainer acknowledged and pushed commit 07f996a (content not visible in the thread, so weaker)
# Class: DataLoader workers and copy-on-read of Python containers
import glob
import os
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class hp:
    class train:
        N = 4
        M = 5
        num_workers = 8
        epochs = 950
    class data:
        train_path = "./train_tisv"


class SpeakerDatasetTIMITPreprocessed(Dataset):
    def __init__(self, shuffle=True, utter_start=0):
        self.path = hp.data.train_path
        self.utter_num = hp.train.M
        self.file_list = sorted(glob.glob(os.path.join(self.path, "*.npy")))
        self.utterances = {f: list(np.load(f, mmap_mode="r").shape) for f in self.file_list}
        self.shuffle = shuffle
        self.utter_start = utter_start

    def __len__(self):
        return len(self.file_list)

    def __getitem__(self, idx):
        selected_file = random.sample(self.file_list, 1)[0] if self.shuffle else self.file_list[idx]
        n_utt = self.utterances[selected_file][0]
        utters = np.load(selected_file)
        ids = np.random.randint(0, n_utt, self.utter_num)
        utterance = utters[ids][:, :, :160]
        return torch.tensor(np.transpose(utterance, axes=(0, 2, 1)))


def train(model_path="speech_id.pt"):
    train_dataset = SpeakerDatasetTIMITPreprocessed()
    train_loader = DataLoader(train_dataset, batch_size=hp.train.N, shuffle=True, num_workers=hp.train.num_workers, drop_last=True)  # leak: ANY
    embedder = torch.nn.LSTM(40, 768, num_layers=3, batch_first=True).cuda()
    optimizer = torch.optim.SGD(embedder.parameters(), lr=0.01)
    for epoch in range(hp.train.epochs):
        for mel_db_batch in train_loader:
            mel_db_batch = mel_db_batch.reshape(-1, 160, 40).cuda()
            out, _ = embedder(mel_db_batch)
            loss = out[:, -1].pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    torch.save(embedder.state_dict(), model_path)


if __name__ == "__main__":
    train()
