# Recall case 16 (sealed6): multi-GPU evaluation gathers all ranks' results to rank 0 while the large model and its cache still occupy every GPU
# Thread: https://github.com/EvolvingLMMs-Lab/lmms-eval/pull/489
# Reported: evaluating 34B/72B models on multiple GPUs finished inference and post-processing, then OOMed during multi-GPU data gathering to rank 0
# Confirmed cause: the model weights and cache were still resident when gather_object collected every rank's outputs on rank 0; merged PR deletes the model and empties the CUDA cache before the gather
# Class: distributed gather of evaluation results while large no-longer-needed GPU state is kept alive
import os

import torch
import torch.distributed as dist
from transformers import AutoModelForCausalLM, AutoTokenizer


class LMM:
    def __init__(self, pretrained, device):
        self._model = AutoModelForCausalLM.from_pretrained(pretrained, torch_dtype=torch.bfloat16).to(device)
        self.tokenizer = AutoTokenizer.from_pretrained(pretrained)
        self.device = device

    @torch.no_grad()
    def generate_until(self, requests):
        outputs = []
        for prompt in requests:
            enc = self.tokenizer(prompt, return_tensors="pt").to(self.device)
            out = self._model.generate(**enc, max_new_tokens=256, use_cache=True)
            outputs.append({"text": self.tokenizer.decode(out[0]), "ids": out[0].tolist()})
        return outputs


def evaluate(lm: LMM, task_docs):
    rank, world = dist.get_rank(), dist.get_world_size()
    my_docs = task_docs[rank::world]
    resps = lm.generate_until(my_docs)
    local = [{"doc": d, "resp": r["text"], "ids": r["ids"]} for d, r in zip(my_docs, resps)]

    gathered = [None] * world if rank == 0 else None
    dist.gather_object(local, gathered, dst=0)  # leak: ANY
    if rank == 0:
        flat = [x for per_rank in gathered for x in per_rank]
        return {"n": len(flat), "avg_len": sum(len(x["ids"]) for x in flat) / max(len(flat), 1)}
    return None


if __name__ == "__main__":
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    lm = LMM("Qwen/Qwen2-72B-Instruct", device=f"cuda:{local_rank}")
    docs = [f"Describe image {i} in detail." for i in range(5000)]
    print(evaluate(lm, docs))
