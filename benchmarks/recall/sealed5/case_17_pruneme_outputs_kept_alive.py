# Recall case 17 (sealed5): layer-similarity loop keeps the previous batch's full hidden-states output alive while the next forward runs
# Thread: https://github.com/arcee-ai/PruneMe/issues/7
# Reported: CUDA out of memory after a single batch when computing block similarity
# Confirmed cause: reporter fixed it with `del outputs` after get_last_non_padded_tokens; maintainer agreed the outputs are not needed afterwards and asked for a PR
# Class: large model outputs kept referenced across loop iterations
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def get_last_non_padded_tokens(hidden_states, attention_mask):
    idx = attention_mask.sum(dim=1) - 1
    return [h[torch.arange(h.size(0)), idx] for h in hidden_states]


@torch.no_grad()
def main(model_path, texts, batch_size=8, n=8):
    tok = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=torch.bfloat16, device_map="cuda")
    distances = None
    for i in range(0, len(texts), batch_size):
        inputs = tok(texts[i:i + batch_size], return_tensors="pt", padding=True).to("cuda")
        outputs = model(**inputs, output_hidden_states=True)  # leak: ANY
        last = get_last_non_padded_tokens(outputs.hidden_states, inputs["attention_mask"])
        d = torch.stack([1 - torch.cosine_similarity(last[j], last[j + n], dim=-1).mean()
                         for j in range(len(last) - n)]).float().cpu()
        distances = d if distances is None else distances + d
    return distances
