# Recall case 05 (sealed7): each micro-batch's grad-attached model_output is stashed in a list until the step ends
# Thread: https://github.com/ISEEKYAN/Megatron-LM/pull/177
# Reported: on the last pipeline stage (cp=0) memory grows ~0.5 GB per micro-batch to ~60 GB while other ranks stay flat; OOM at long sequence lengths
# Confirmed cause: the loss hook appends {"model_output", "loss", "metrics"} per micro-batch; model_output["log_probs"] keeps requires_grad but is not on the path loss.backward() walks, so its saved buffers stay pinned for the whole step; fixed by detaching before stashing (PR merged)
# Class: per-micro-batch output dict with grad-attached tensors appended to a list kept for the step
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self, vocab=32000, dim=1024):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.block = nn.TransformerEncoderLayer(dim, 16, 4 * dim, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.head(self.block(self.emb(ids)))


def unpack_forward_output(logits, labels):
    # separate differentiable path (gather/cat/slice) producing per-token log-probs for logging
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    log_probs = torch.gather(log_probs, -1, labels.unsqueeze(-1)).squeeze(-1)
    return {"log_probs": torch.cat([log_probs[:, :1], log_probs[:, 1:]], dim=1)}


def forward_backward_batch(model, micro_batches):
    output_lst = []
    for ids, labels in micro_batches:
        logits = model(ids)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))
        model_output = unpack_forward_output(logits, labels)
        output_lst.append({"model_output": model_output, "loss": loss.detach(), "metrics": {}})  # leak: ANY
        loss.backward()
    return output_lst


if __name__ == "__main__":
    model = TinyLM().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    mbs = [(torch.randint(0, 32000, (1, 4096)).cuda(), torch.randint(0, 32000, (1, 4096)).cuda()) for _ in range(128)]
    opt.zero_grad()
    outs = forward_backward_batch(model, mbs)
    opt.step()
    print(len(outs), torch.cuda.max_memory_allocated() / 2**30)
