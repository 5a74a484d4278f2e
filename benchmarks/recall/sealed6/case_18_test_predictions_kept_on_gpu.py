# Recall case 18 (sealed6): test phase collects every batch's prediction matrix on the GPU before saving it
# Thread: https://github.com/fani-lab/OpeNTF/issues/320
# Reported: the dblp test phase on GPU hit CUDA OOM even with batch size 1
# Confirmed cause: prediction tensors (batch x #experts scores) stayed on the GPU until they were concatenated and saved; the maintainer changed the test loop to move predictions to the CPU before saving, after which the reporter ran the test phase with batch size 10,000 without error
# Class: predict/test loop appends GPU output tensors to a list kept for the whole pass
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Fnn(nn.Module):
    def __init__(self, n_skills, n_experts, hidden=128):
        super().__init__()
        self.fc1 = nn.Linear(n_skills, hidden)
        self.fc2 = nn.Linear(hidden, n_experts)

    def forward(self, x):
        return torch.sigmoid(self.fc2(torch.relu(self.fc1(x))))

    @torch.no_grad()
    def test(self, model_path, test_loader, device, fold, output_dir):
        self.load_state_dict(torch.load(f"{model_path}/f{fold}.pt", map_location=device))
        self.eval()
        y_pred = []
        for X, _ in test_loader:
            X = X.to(device)
            scores = self.forward(X)
            y_pred.append(scores)  # leak: ANY
        y_pred = torch.cat(y_pred, dim=0)
        torch.save(y_pred, f"{output_dir}/f{fold}.test.pred")


if __name__ == "__main__":
    device = torch.device("cuda")
    n_teams, n_skills, n_experts = 100_000, 2000, 60_000
    X = torch.rand(n_teams, n_skills)
    Y = torch.zeros(n_teams, 1)
    loader = DataLoader(TensorDataset(X, Y), batch_size=1000)
    model = Fnn(n_skills, n_experts).to(device)
    for fold in range(5):
        model.test("./models", loader, device, fold, "./preds")
