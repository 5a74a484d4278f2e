# Recall case 03 (sealed6): BERT QA fine-tuning sums output.loss tensors into train_loss, keeping every step's graph
# Thread: https://github.com/pai4451/ML2021/issues/2
# Reported: running the HW7 extractive-QA training script, RAM kept increasing until all 64 GB were used
# Confirmed cause: train_loss += output.loss chains the autograd graph of every step between logging intervals; reporter confirmed that .detach()/.item() solved it and the repo owner agreed (detach prevents the leak)
# Class: running loss accumulated with `+=` on the undetached loss tensor
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForQuestionAnswering

accelerator = Accelerator(fp16=True)
device = accelerator.device

model = AutoModelForQuestionAnswering.from_pretrained("bert-base-chinese").to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

n = 4096
ids = torch.randint(0, 21128, (n, 193))
dataset = TensorDataset(ids, torch.zeros_like(ids), torch.ones_like(ids),
                        torch.randint(0, 193, (n,)), torch.randint(0, 193, (n,)))
train_loader = DataLoader(dataset, batch_size=16, shuffle=True, pin_memory=True)
model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)

num_epoch = 1
logging_step = 100
step = 1
model.train()
print("Start Training ...")
for epoch in range(num_epoch):
    train_loss = train_acc = 0
    for data in train_loader:
        data = [i.to(device) for i in data]
        output = model(input_ids=data[0], token_type_ids=data[1], attention_mask=data[2],
                       start_positions=data[3], end_positions=data[4])
        start_index = torch.argmax(output.start_logits, dim=1)
        end_index = torch.argmax(output.end_logits, dim=1)
        train_acc += ((start_index == data[3]) & (end_index == data[4])).float().mean()
        train_loss += output.loss  # leak: ANY
        accelerator.backward(output.loss)
        optimizer.step()
        optimizer.zero_grad()
        step += 1
        if step % logging_step == 0:
            print(f"Epoch {epoch + 1} | Step {step} | loss = {train_loss.item() / logging_step:.3f}, "
                  f"acc = {train_acc / logging_step:.3f}")
            train_loss = train_acc = 0
