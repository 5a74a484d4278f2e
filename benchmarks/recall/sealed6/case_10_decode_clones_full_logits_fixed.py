# Fixed twin of case 10: the last-position logits are sliced first and only that slice is cloned
# Thread: https://github.com/huggingface/transformers/pull/34813
# Reported: since v4.45 the first generate() call (prefill over the whole prompt) used about double the memory for logits (issue #34796)
# Confirmed cause: next_token_logits = outputs.logits.clone()[:, -1, :] copies the entire logits tensor; slicing first and then cloning avoids it; merged PR restores slice-then-clone (approved by maintainers)
# Class: decoding step materialises a copy of all-position logits when only the last step is needed
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


@torch.no_grad()
def sample(model, input_ids, attention_mask, max_new_tokens=256, temperature=0.8, top_k=50, eos_token_id=None):
    past_key_values = None
    cur_ids = input_ids
    unfinished = torch.ones(input_ids.shape[0], dtype=torch.long, device=input_ids.device)
    for _ in range(max_new_tokens):
        outputs = model(input_ids=cur_ids, attention_mask=attention_mask,
                        past_key_values=past_key_values, use_cache=True)
        # clone is needed so we don't keep a reference to outputs.logits (may be very large on the first step)
        next_token_logits = outputs.logits[:, -1, :].clone().float()
        past_key_values = outputs.past_key_values
        del outputs

        next_token_scores = next_token_logits / temperature
        kth = torch.topk(next_token_scores, top_k, dim=-1).values[..., -1, None]
        next_token_scores = next_token_scores.masked_fill(next_token_scores < kth, float("-inf"))
        probs = torch.softmax(next_token_scores, dim=-1)
        next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)
        if eos_token_id is not None:
            next_tokens = next_tokens * unfinished + eos_token_id * (1 - unfinished)
            unfinished = unfinished & (next_tokens != eos_token_id).long()

        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        attention_mask = torch.cat([attention_mask, attention_mask.new_ones((attention_mask.shape[0], 1))], dim=-1)
        cur_ids = next_tokens[:, None]
        if unfinished.max() == 0:
            break
    return input_ids


if __name__ == "__main__":
    name = "meta-llama/Llama-3.1-8B"
    tok = AutoTokenizer.from_pretrained(name)
    model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16, device_map="cuda")
    prompts = ["Summarize the following report:\n" + "lorem ipsum " * 4000] * 4
    enc = tok(prompts, return_tensors="pt").to("cuda")
    out = sample(model, enc.input_ids, enc.attention_mask, eos_token_id=tok.eos_token_id)
    print(tok.batch_decode(out[:, enc.input_ids.shape[1]:], skip_special_tokens=True)[0][:200])
