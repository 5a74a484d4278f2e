# Fixed twin of case 25: every batch is padded to one fixed length, so CUDA Graphs sees one shape.
# Thread: https://github.com/pytorch/pytorch/issues/188150
# Class: compile/cudagraph mode re-recording per input shape (dynamic padding)
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorWithPadding


def train(model_name, dataset, max_seq_length=1024, batch_size=4, lr=1e-5, device="cuda"):
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=torch.bfloat16).to(device)
    model = torch.compile(model, mode="reduce-overhead")
    collator = DataCollatorWithPadding(tokenizer, padding="max_length", max_length=max_seq_length)
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, collate_fn=collator)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for step, batch in enumerate(loader):
        batch = {k: v.to(device) for k, v in batch.items()}
        outputs = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                        labels=batch["input_ids"])
        outputs.loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 10 == 0:
            print(step, outputs.loss.item())
