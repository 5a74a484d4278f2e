# Recall case 26: a big dict of scans handed to the Dataset and indexed per item by workers
# Thread: https://github.com/referit3d/referit3d/issues/5
# Reported: a heavy memory leak in the DataLoader: up to 40 GB of RAM during an epoch at
#   batch 16 with 8 workers, rising steadily.
# Confirmed cause: `__getitem__` reads objects out of `scans`, a big dict shared with all workers,
#   "a violation of" pytorch/pytorch#13246: every access writes refcounts and copies pages into
#   each worker (acknowledged by the maintainers: "We will look into it").
# Class: copy-on-read through a big dict passed into __init__
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class ListeningDataset(Dataset):
    def __init__(self, references, scans, vocab, max_seq_len, points_per_object, max_distractors):
        self.references = references
        self.scans = scans  # leak: ML205
        self.vocab = vocab
        self.max_seq_len = max_seq_len
        self.points_per_object = points_per_object
        self.max_distractors = max_distractors

    def __len__(self):
        return len(self.references)

    def get_reference_data(self, index):
        ref = self.references.loc[index]
        scan = self.scans[ref["scan_id"]]
        target = scan.three_d_objects[ref["target_id"]]
        tokens = np.array(self.vocab.encode(ref["tokens"], self.max_seq_len), dtype=np.long)
        return scan, target, tokens

    def __getitem__(self, index):
        scan, target, tokens = self.get_reference_data(index)
        distractors = [o for o in scan.three_d_objects if o.instance_label == target.instance_label and o != target]
        context = [target] + distractors[: self.max_distractors]
        samples = np.array([o.sample(self.points_per_object) for o in context])
        return {"objects": torch.from_numpy(samples).float(), "tokens": torch.from_numpy(tokens), "target_pos": 0}


def make_data_loaders(args, referit_data, vocab, all_scans_in_dict):
    dataset = ListeningDataset(referit_data, all_scans_in_dict, vocab, args.max_seq_len,
                               args.points_per_object, args.max_distractors)
    return DataLoader(dataset, batch_size=args.batch_size, shuffle=True, num_workers=args.n_workers)
