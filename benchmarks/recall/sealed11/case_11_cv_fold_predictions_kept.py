# Recall case 11 (sealed11): k-fold train/evaluate/predict loop keeps every fold's full out-of-fold and test predictions in RAM
# Thread: https://github.com/neptune-ai/open-solution-salt-identification/issues/82
# Reported: RAM grows by ~3 GB after each fold of the cross-validation run until "cannot allocate memory"
# Confirmed cause: the maintainer explained that train_evaluate_predict_cv appends the out-of-fold train predictions and the test predictions of every fold to lists that are only averaged/dumped at the very end, and advised dumping them per fold instead
# Class: per-fold/trial results (full prediction arrays) accumulated in a list across the outer CV loop
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

N_SPLITS = 10
SEED = 1234


def make_unet(ch=32):
    return nn.Sequential(
        nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(),
        nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(),
        nn.Conv2d(ch, 1, 1),
    )


@torch.no_grad()
def predict(model, images, device, batch_size=64):
    model.eval()
    out = []
    for (x,) in DataLoader(TensorDataset(images), batch_size=batch_size):
        out.append(torch.sigmoid(model(x.to(device))).cpu().numpy())
    return np.concatenate(out)


def fold_fit_evaluate_predict_loop(train_x, train_y, valid_x, valid_y, test_x, device, epochs=5):
    model = make_unet().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.BCEWithLogitsLoss()
    for _ in range(epochs):
        model.train()
        for x, y in DataLoader(TensorDataset(train_x, train_y), batch_size=32, shuffle=True):
            x, y = x.to(device), y.to(device)
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    valid_pred = predict(model, valid_x, device)
    iou = float(((valid_pred > 0.5) == (valid_y.numpy() > 0.5)).mean())
    test_pred = predict(model, test_x, device)
    return iou, valid_pred, test_pred


def train_evaluate_predict_cv(images, masks, test_images, device):
    rng = np.random.default_rng(SEED)
    folds = np.array_split(rng.permutation(len(images)), N_SPLITS)

    fold_scores, out_of_fold_train_predictions, out_of_fold_test_predictions = [], [], []
    for fold_id, valid_idx in enumerate(folds):
        train_idx = np.setdiff1d(np.arange(len(images)), valid_idx)
        score, out_of_fold_prediction, test_prediction = fold_fit_evaluate_predict_loop(
            images[train_idx], masks[train_idx], images[valid_idx], masks[valid_idx], test_images, device)
        print(f"Fold {fold_id} IoU {score:.4f}")
        fold_scores.append(score)
        out_of_fold_train_predictions.append((valid_idx, out_of_fold_prediction))  # leak: ANY
        out_of_fold_test_predictions.append(test_prediction)  # leak: ANY

    train_ids, train_predictions = [], []
    for idx_fold, train_pred_fold in out_of_fold_train_predictions:
        train_ids.extend(idx_fold.tolist())
        train_predictions.extend(list(train_pred_fold))
    test_mean = np.mean(np.stack(out_of_fold_test_predictions), axis=0)
    np.save("oof_train.npy", np.stack(train_predictions)[np.argsort(train_ids)])
    np.save("test_mean.npy", test_mean)
    print("CV mean", np.mean(fold_scores), "std", np.std(fold_scores))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    images = torch.rand(4000, 1, 101, 101)
    masks = (torch.rand(4000, 1, 101, 101) > 0.5).float()
    test_images = torch.rand(18000, 1, 101, 101)
    train_evaluate_predict_cv(images, masks, test_images, device)
