# Recall case 10 (sealed): a token-by-token generate loop keeps every step's model output
#   (hidden states with their graph, on the GPU)
# Thread: https://github.com/jalammar/ecco/pull/12
# Reported: running `lm.generate` with a 1.5B GPT-2 on a 15 GB T4 runs out of GPU memory after a
#   modest number of tokens, although the same model generates fine elsewhere.
# Confirmed cause: the contributor's PR, merged by the maintainer ("better memory management
#   allowing for generating longer sequences with larger GPT2 models"): each step's forward pass
#   runs with autograd on (attributions need gradients) and returns `output` whose
#   `hidden_states` (and `past`) stay on the GPU and attached to the step's graph; the loop keeps
#   these outputs, so memory grows with every generated token. The fix detaches the hidden
#   states and moves them to the CPU as they are produced (`h.cpu().detach()`), frees the
#   logits, and stops computing `past` (`use_cache=False`).
# Class: generation loop keeping per-token outputs on the device (with their graph)
from typing import Optional

import torch

from .attribution import saliency, gradient_x_inputs_attribution
from .utils import sample_output_token


class LM:
    def __init__(self, model, tokenizer):
        self.model = model.to("cuda")
        self.tokenizer = tokenizer
        self.device = "cuda"
        self.attributions = {}

    def _get_embeddings(self, input_ids):
        embedding_matrix = self.model.transformer.wte.weight
        one_hot = torch.zeros(input_ids.shape[0], embedding_matrix.shape[0], device=self.device)
        one_hot.scatter_(1, input_ids.to(self.device)[:, None], 1.0)
        one_hot.requires_grad_(True)
        return torch.matmul(one_hot, embedding_matrix), one_hot

    def _generate_token(self, input_ids, do_sample, temperature, top_k, top_p, attribution_flag):
        inputs_embeds, token_ids_tensor_one_hot = self._get_embeddings(input_ids)
        output = self.model(inputs_embeds=inputs_embeds, return_dict=True, output_hidden_states=True)  # leak: ANY
        predict = output.logits
        prediction_id = sample_output_token(predict[-1, :], do_sample, temperature, top_k, top_p)
        prediction_logit = predict[inputs_embeds.shape[0] - 1][prediction_id]
        if attribution_flag:
            scores = saliency(prediction_logit, token_ids_tensor_one_hot)
            self.attributions.setdefault("gradient", []).append(scores.cpu().detach().numpy())
            grad_x_input = gradient_x_inputs_attribution(prediction_logit, inputs_embeds)
            self.attributions.setdefault("grad_x_input", []).append(grad_x_input.cpu().detach().numpy())
        return prediction_id, output

    def generate(self, input_str: str, max_length: Optional[int] = 128, temperature=1.0, top_k=0,
                 top_p=1.0, do_sample=False, attribution=True, get_model_output=False):
        input_ids = self.tokenizer(input_str, return_tensors="pt")["input_ids"][0]
        self.attributions = {}
        outputs = []
        cur_len = len(input_ids)
        while cur_len < max_length:
            output_token_id, output = self._generate_token(input_ids, do_sample, temperature,
                                                           top_k, top_p, attribution)
            if get_model_output:
                outputs.append(output)  # leak: ANY
            input_ids = torch.cat([input_ids, torch.tensor([int(output_token_id)])])
            cur_len += 1
            if output_token_id == self.model.config.eos_token_id:
                break
        return input_ids, output.hidden_states, self.attributions, outputs
