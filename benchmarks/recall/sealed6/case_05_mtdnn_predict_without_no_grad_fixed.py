# Fixed twin of case 05: prediction runs inside torch.no_grad(), so no autograd state is saved
# Thread: https://github.com/namisan/mt-dnn/pull/92
# Reported: inference with predict.py used more memory (and was slower) than needed
# Confirmed cause: eval_model() ran forward passes with gradient tracking, so activations were saved for a backward that never happens; merged PR wraps the prediction call in torch.no_grad() (maintainer reviewed where to put it)
# Class: evaluation/prediction helper called without no_grad / inference_mode
import argparse
import json

import numpy as np
import torch
from torch import nn


class MTDNNModel:
    def __init__(self, config, state_dict=None):
        self.config = config
        self.network = nn.Sequential(nn.Embedding(30522, 768), nn.TransformerEncoder(
            nn.TransformerEncoderLayer(768, 12, batch_first=True), num_layers=12))
        self.heads = nn.ModuleList([nn.Linear(768, 3)])
        if state_dict is not None:
            self.network.load_state_dict(state_dict["state"], strict=False)
        if config["cuda"]:
            self.network.cuda()
            self.heads.cuda()
        self.network.eval()

    def predict(self, batch_meta, batch_data):
        task_id = batch_meta["task_id"]
        hidden = self.network(batch_data[0])
        score = self.heads[task_id](hidden[:, 0])
        score = torch.softmax(score, dim=1)
        predict = torch.argmax(score, dim=1).tolist()
        return score, predict, batch_meta.get("label")


def eval_model(model, data, use_cuda=True, with_label=True):
    predictions, golds, scores, ids = [], [], [], []
    for idx, (batch_meta, batch_data) in enumerate(data):
        if use_cuda:
            batch_data = [t.cuda(non_blocking=True) for t in batch_data]
        score, pred, gold = model.predict(batch_meta, batch_data)
        predictions.extend(pred)
        scores.append(score)
        if with_label:
            golds.extend(gold)
        ids.extend(batch_meta["uids"])
    acc = float(np.mean(np.array(predictions) == np.array(golds))) if with_label and golds else None
    return {"acc": acc}, predictions, scores, golds, ids


def fake_batches(n_batches=500, bs=32, seq=128):
    for b in range(n_batches):
        meta = {"task_id": 0, "uids": list(range(b * bs, (b + 1) * bs)), "label": [0] * bs}
        yield meta, [torch.randint(0, 30522, (bs, seq))]


parser = argparse.ArgumentParser()
parser.add_argument("--checkpoint", default="checkpoint.pt")
parser.add_argument("--score", default="scores.json")
parser.add_argument("--cuda", action="store_true", default=torch.cuda.is_available())
args = parser.parse_args()

state_dict = torch.load(args.checkpoint, map_location="cpu")
config = state_dict["config"]
config["cuda"] = args.cuda
model = MTDNNModel(config, state_dict=state_dict)

test_data = fake_batches()
with torch.no_grad():
    test_metrics, test_predictions, scores, golds, test_ids = eval_model(model, test_data, use_cuda=args.cuda)
print(test_metrics)
with open(args.score, "w") as f:
    json.dump({"uids": test_ids, "predictions": test_predictions}, f)
