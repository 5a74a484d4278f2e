# Fixed twin of case 17: torch.profiler wraps the entire training run with no schedule
# Thread: https://github.com/AnswerDotAI/fsdp_qlora/pull/67
# Reported: profiling was enabled for the entire training run, leading to long profiling times, OOM errors and traces
#   too large to load (5 steps of Llama-2-7B already gave a 4 GB trace)
# Confirmed cause: without a schedule the profiler records (with shapes, memory and stacks) every step of the run;
#   merged PR adds a torch.profiler.schedule (wait/warmup/active/repeat) and steps the profiler per batch
# Class: runtime tool left on - profiler without schedule around the whole training loop
import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile


def train(model, optimizer, dataloader, args, device):
    model.train()
    schedule = torch.profiler.schedule(wait=args["wait_steps"], warmup=args["warmup_steps"],
                                       active=args["active_steps"], repeat=args["repeat"])

    def trace_handler(p):
        p.export_chrome_trace(f"{args['profiling_output']}/trace_{p.step_num}.json")
        print(p.key_averages().table(sort_by="cuda_time_total", row_limit=20))

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                 profile_memory=True, with_stack=True, schedule=schedule, on_trace_ready=trace_handler) as prof:
        for epoch in range(args["num_epochs"]):
            for step, batch in enumerate(dataloader()):
                input_ids = batch.to(device)
                logits = model(input_ids)
                loss = nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), input_ids[:, 1:].flatten())
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                prof.step()
                if step % 10 == 0:
                    print(epoch, step, loss.item())


class TinyLM(nn.Module):
    def __init__(self, vocab=32000, d=1024, layers=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 16, 4 * d, batch_first=True), layers)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        return self.head(self.blocks(self.emb(ids)))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = TinyLM().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def dataloader():
        for _ in range(5000):
            yield torch.randint(0, 32000, (4, 1024))

    train(model, optimizer, dataloader, {"num_epochs": 3, "profiling_output": "./profiles",
                                                "wait_steps": 0, "warmup_steps": 1, "active_steps": 2, "repeat": 1}, device)
