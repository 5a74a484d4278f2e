# Recall case 14 (sealed18): LLM gradient attribution loops over the generated target tokens and keeps every token's attribution tensor, still attached to its autograd graph, in a list
# Thread: https://github.com/meta-pytorch/captum/pull/1347
# Reported: VRAM accumulation while `LLMGradientAttribution.attribute` runs over the tokens of a generated answer; the maintainers' diff removes the autograd graphs kept between the per-token attribute calls as a source of it
# Confirmed cause: attributions returned by some gradient methods (e.g. `LayerGradientXActivation`) still carry a `grad_fn`, so each per-token attribution appended to `attr_list` keeps that token's forward graph alive until the end of the call; the maintainers' change (landed from the internal diff that this PR mirrors) detaches each attribution and also runs the target generation under `torch.no_grad()`
# Class: generation / decoding / predict (per-token results kept with their graphs)
from typing import Any, Dict, Optional

import torch
from torch import Tensor

DEFAULT_GEN_ARGS = {"max_new_tokens": 25, "do_sample": False, "temperature": None, "top_p": None}


class LLMGradientAttribution:
    def __init__(self, attr_method, tokenizer, model):
        self.model = model
        self.attr_method = attr_method
        self.tokenizer = tokenizer
        self.device = next(self.model.parameters()).device

    def _format_model_input(self, model_input: Tensor) -> Tensor:
        return model_input.to(self.device)

    def attribute(self, inp, target=None, gen_args: Optional[Dict[str, Any]] = None, **kwargs):
        if target is None:
            if not gen_args:
                gen_args = DEFAULT_GEN_ARGS
            model_inp = self._format_model_input(inp.to_model_input())
            output_tokens = self.model.generate(model_inp, **gen_args)  # leak: ANY
            target_tokens = output_tokens[0][model_inp.size(1):]
        elif isinstance(target, str):
            target_tokens = torch.tensor(self.tokenizer.encode(target)[1:])
        else:
            target_tokens = target

        attr_inp = inp.to_tensor().to(self.device)

        attr_list = []
        for cur_target_idx, _ in enumerate(target_tokens):
            attr = self.attr_method.attribute(  # leak: ANY
                attr_inp,
                additional_forward_args=(inp, target_tokens, cur_target_idx),
                **kwargs,
            )
            if cur_target_idx:
                attr = attr[:, :-cur_target_idx]
            attr = attr.sum(-1)
            attr_list.append(attr)  # leak: ANY

        attr = torch.cat(attr_list, dim=0)
        seq_attr = attr.sum(0)
        return seq_attr, attr, target_tokens
