# Recall case 41: several models trained one after another, each left on the GPU
# Thread: https://discuss.pytorch.org/t/gpu-cached-memory-increase-when-training-different-models-in-a-loop/48998
# Reported: training several models in a loop, GPU memory increases while training the second
#   model; training one model for many epochs does not show it.
# Confirmed cause: the reporter: "I had to delete objects of models after training so that GC
#   can clean them before moving to next training next model": `all_models` keeps every trained
#   model (and its optimizer state) on the GPU.
# Class: models kept across runs/trials
import torch


def train_all(all_models, log_message):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    for model_name, training_obj in all_models.items():
        num_epochs = len(training_obj["lr_array"])
        log_message(f"-------------- Training model: {model_name} --------------")
        optimizer = training_obj["optimizer"]
        train_loader = training_obj["train_loader"]
        criterion = training_obj["criterion"]
        model = training_obj.get("model")
        model.to(device)  # leak: ANY
        model.train()
        for epoch in range(num_epochs):
            for group in optimizer.param_groups:
                group["lr"] = training_obj["lr_array"][epoch]
            for i_batch, (images, labels) in enumerate(train_loader):
                images, labels = images.to(device), labels.to(device)
                outputs = model(images).squeeze()
                optimizer.zero_grad()
                loss = criterion(outputs, labels)
                loss.backward()
                optimizer.step()
        training_obj["final_loss"] = loss.item()
