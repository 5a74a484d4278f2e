# Recall case 27: a Dataset wrapping a pandas DataFrame read with iloc in __getitem__
# Thread: https://github.com/pytorch/pytorch/issues/5902
# Reported: DataLoader uses 3x more memory when num_workers > 0 (62 GB box, memory climbing
#   every minute while reading a parquet dataset).
# Confirmed cause: apaszke: the pandas data frame is treated as copy-on-write after fork and
#   "Pandas might be mutating some memory that's interspersed with your data (e.g. Python
#   refcounts), causing every process to progressively break sharing"; the reporter confirms
#   that storing numpy arrays instead fixes it ("pandas dataframes are not really compatible
#   with DataLoader").
# Class: copy-on-read through a pandas DataFrame held by the Dataset
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset


class ParquetData(Dataset):
    def __init__(self, path):
        self.df = pd.read_parquet(path)  # leak: ML205

    def __len__(self):
        return len(self.df)

    def __getitem__(self, idx):
        row = self.df.iloc[idx]
        return (torch.tensor(row["cc"]), torch.tensor(row["ii"]),
                torch.tensor(row["jj"]), torch.tensor(row["vv"], dtype=torch.float32))


def batches(path, batch_size=1024):
    loader = DataLoader(ParquetData(path), batch_size=batch_size, shuffle=True, num_workers=4)
    for cc, ii, jj, vv in loader:
        yield cc.cuda(), ii.cuda(), jj.cuda(), vv.cuda()
