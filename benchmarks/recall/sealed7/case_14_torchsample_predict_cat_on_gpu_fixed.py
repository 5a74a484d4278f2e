# Fixed twin of case 14: each output batch is moved to the CPU before it is collected
# Thread: https://github.com/nitrain/nitrain/issues/27
# Reported: GPU memory fills up and OOMs when running predict()/predict_loader() over a large dataset
# Confirmed cause: all output predictions stay on the GPU until the final torch.cat; users confirmed moving each output to CPU before the cat fixes it (fix proposed in the thread, no maintainer merge seen)
# Class: predict helper returning every batch's outputs kept on the device
import torch
import torch.nn as nn


class ModuleTrainer:
    def __init__(self, model):
        self.model = model

    def predict_loader(self, loader, cuda_device=-1, verbose=1):
        self.model.eval()
        prediction_list = []
        with torch.no_grad():
            for batch_idx, batch_data in enumerate(loader):
                input_batch = batch_data[0] if isinstance(batch_data, (list, tuple)) else batch_data
                if cuda_device > -1:
                    input_batch = input_batch.cuda(cuda_device)
                output_batch = self.model(input_batch)
                prediction_list.append(output_batch.cpu())
        return torch.cat(prediction_list, 0)


if __name__ == "__main__":
    net = nn.Sequential(nn.Conv2d(1, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1)).cuda()
    trainer = ModuleTrainer(net)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(20000, 1, 64, 64)), batch_size=128)
    preds = trainer.predict_loader(loader, cuda_device=0)
    print(preds.shape)
