# Recall case 25 (sealed): torch.compile(mode="reduce-overhead") on batches padded to their own length
# Thread: https://github.com/pytorch/pytorch/issues/188150
# Reported: in a Hugging Face/TRL training loop, `torch.compile(model, mode="reduce-overhead")`
#   gives no speed-up (1.5x in a fixed-shape test, ~none in training; step time 22 s -> 25 s),
#   with the warning that CUDAGraph records a new graph for each distinct input size.
# Confirmed cause: the report's diagnosis, triaged "has workaround" by the maintainers: the
#   collator pads each batch to its own longest sequence, so every new length makes CUDA Graphs
#   record (and keep) another graph; recording per shape eats the gain. Workaround: pad every
#   batch to one fixed length (`max_seq_length`), or use mode="default".
# Class: compile/cudagraph mode re-recording per input shape (dynamic padding)
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorWithPadding


def train(model_name, dataset, max_seq_length=1024, batch_size=4, lr=1e-5, device="cuda"):
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=torch.bfloat16).to(device)
    model = torch.compile(model, mode="reduce-overhead")  # leak: ANY
    collator = DataCollatorWithPadding(tokenizer, padding="longest")  # leak: ANY
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
