# Fixed twin of case 29: Accelerate's own answer, the step runs under accelerator.accumulate(model).
# Thread: https://github.com/huggingface/accelerate/pull/106
# Reported: the nlp_example does gradient accumulation with a DDP-prepared model and
#   synchronises gradients on every batch.
# Confirmed cause: "loss.backward does gradient all_reduce in pytorch DDP. In gradient
#   accumulation, we do not want all_reduce in every step"; sgugger agrees it is true and
#   Accelerate later added `accelerator.accumulate(model)` "specifically for this problem".
# Class: DDP gradient accumulation without no_sync, through Accelerate
import torch
from accelerate import Accelerator
from transformers import AutoModelForSequenceClassification, get_linear_schedule_with_warmup


def training_function(config, train_dataloader, eval_dataloader):
    gradient_accumulation_steps = config["gradient_accumulation_steps"]
    accelerator = Accelerator(cpu=config["cpu"], mixed_precision=config["mixed_precision"],
                              gradient_accumulation_steps=gradient_accumulation_steps)
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-cased", return_dict=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])
    lr_scheduler = get_linear_schedule_with_warmup(
        optimizer, num_warmup_steps=100,
        num_training_steps=(len(train_dataloader) * config["num_epochs"]) // gradient_accumulation_steps)
    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler)
    for epoch in range(config["num_epochs"]):
        model.train()
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                accelerator.backward(outputs.loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
