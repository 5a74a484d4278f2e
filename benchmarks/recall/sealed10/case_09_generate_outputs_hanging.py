# Recall case 09 (sealed10): the greedy decoding loop keeps the previous step's model outputs (full logits) alive while the next forward runs
# Thread: https://github.com/huggingface/transformers/pull/30536
# Reported: generate() peak memory much higher than needed even with large inputs and only 2 new tokens
# Confirmed cause: "the logits in every iteration leaked to the next iteration through some hanging references to the outputs dictionary"; the merged PR deletes `outputs` at the end of each step (author analysis, reviewed and merged by maintainers)
# Class: per-step decoding outputs kept referenced across iterations
import torch
import torch.nn as nn


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=128256, dim=512):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.block = nn.TransformerEncoderLayer(dim, 8, 4 * dim, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids, past_key_values=None):
        h = self.block(self.embed(input_ids))
        logits = self.lm_head(h).float()
        return {"logits": logits, "past_key_values": (h.detach(),)}


def update_model_kwargs(outputs, model_kwargs):
    model_kwargs["past_key_values"] = outputs["past_key_values"]
    return model_kwargs


@torch.no_grad()
def greedy_search(model, input_ids, max_new_tokens=2, eos_token_id=2):
    model_kwargs = {"past_key_values": None}
    for _ in range(max_new_tokens):
        outputs = model(input_ids, **model_kwargs)  # leak: ANY
        next_token_logits = outputs["logits"][:, -1, :].clone()
        next_tokens = torch.argmax(next_token_logits, dim=-1)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        model_kwargs = update_model_kwargs(outputs, model_kwargs)
        if (next_tokens == eos_token_id).all():
            break
    return input_ids


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = TinyCausalLM().to(device).eval()
    prompt = torch.randint(0, 128256, (4, 4096), device=device)
    out = greedy_search(model, prompt, max_new_tokens=2)
    if torch.cuda.is_available():
        print("peak MiB", torch.cuda.max_memory_allocated() // 2**20)
