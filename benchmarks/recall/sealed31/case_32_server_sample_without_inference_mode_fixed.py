# Thread: https://github.com/hitomi-team/sukima/issues/5
# Reported: in the sukima text-generation server, memory (especially CUDA memory) balloons as
#   generation requests are processed.
# Confirmed cause: the maintainer's fix (commit cb132f5, "Fix OOM while generating"): the
#   GPTHF.generate() method called the model's token-by-token sampler with autograd enabled;
#   decorating generate() with @torch.inference_mode() (and putting the model in eval()) kept
#   "memory usage ... fixed".
# Class: generation / sampling helper in a serving class run with grad enabled
import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    LogitsProcessorList,
    MaxLengthCriteria,
    StoppingCriteriaList,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)


class GPTHF:
    def __init__(self, model_name="hakurei/gpt-j-random-tinier", device=None):
        if device is None:
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.device = device
        self.model = AutoModelForCausalLM.from_pretrained(model_name).eval().to(self.device)
        self.tokenizer = AutoTokenizer.from_pretrained(model_name)

    @torch.inference_mode()
    def generate(self, args):
        gen_args = args["gen_args"]
        sample_args = args["sample_args"]

        prompt_len = len(self.tokenizer.encode(args["prompt"]))
        stopping = StoppingCriteriaList(
            [MaxLengthCriteria(gen_args["max_length"] + prompt_len)]
        )

        warpers = []
        if "temp" in sample_args:
            warpers.append(TemperatureLogitsWarper(sample_args["temp"]))
        if "top_k" in sample_args:
            warpers.append(TopKLogitsWarper(sample_args["top_k"]))
        if "top_p" in sample_args:
            warpers.append(TopPLogitsWarper(sample_args["top_p"]))

        input_ids = self.tokenizer.encode(args["prompt"], return_tensors="pt").to(self.device)
        outputs = self.model.sample(
            input_ids=input_ids,
            logits_warper=LogitsProcessorList(warpers),
            logits_processor=LogitsProcessorList([]),
            stopping_criteria=stopping,
            pad_token_id=self.tokenizer.eos_token_id,
        )
        return self.tokenizer.batch_decode(outputs, skip_special_tokens=True)[0]
