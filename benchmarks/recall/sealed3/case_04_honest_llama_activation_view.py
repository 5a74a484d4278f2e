# Recall case 04 (sealed3): keeping a numpy slice of each prompt's activations keeps the whole per-prompt array alive
# Thread: https://github.com/likenneth/honest_llama/issues/26
# Reported: get_activations.py memory accumulates until it overflows; already-processed activations never freed
# Confirmed cause: all_layer_wise_activations.append(acts[:, -1, :]) stores a *view* whose base is the full
#   (layers, seq_len, hidden) array; a commenter's .copy() fix worked and the maintainer added the two copy() calls
# Class: results kept per item as views/slices that pin the full batch output
import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def get_llama_activations_bau(model, prompt_ids, device):
    model.eval()
    with torch.no_grad():
        prompt_ids = prompt_ids.to(device)
        output = model(prompt_ids, output_hidden_states=True)
        hidden_states = torch.stack(output.hidden_states, dim=0).squeeze(1)
        hidden_states = hidden_states.detach().float().cpu().numpy()
        # head-wise activations come from hooks in the original; approximate with the mlp input
        head_wise = hidden_states[1:].copy()
    return hidden_states, head_wise, None


def main(model_name="huggyllama/llama-7b", n_prompts=5000):
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForCausalLM.from_pretrained(model_name, torch_dtype=torch.float16, device_map="auto")
    device = "cuda"
    prompts = ["Q: What happens if you eat watermelon seeds? A: " + "x " * (i % 300) for i in range(n_prompts)]

    all_layer_wise_activations = []
    all_head_wise_activations = []
    print("Getting activations")
    for prompt in prompts:
        ids = tokenizer(prompt, return_tensors="pt").input_ids
        layer_wise_activations, head_wise_activations, _ = get_llama_activations_bau(model, ids, device)
        all_layer_wise_activations.append(layer_wise_activations[:, -1, :])  # leak: ANY
        all_head_wise_activations.append(head_wise_activations[:, -1, :])  # leak: ANY

    np.save("layer_wise.npy", np.stack(all_layer_wise_activations))
    np.save("head_wise.npy", np.stack(all_head_wise_activations))


if __name__ == "__main__":
    main()
