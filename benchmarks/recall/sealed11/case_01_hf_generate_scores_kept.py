# Recall case 01 (sealed11): every generate() result keeps its GPU scores/KV cache alive inside the returned thunk's meta dict
# Thread: https://github.com/generative-computing/mellea/pull/544
# Reported: GPU memory of the HuggingFace backend grows with every instruct() call (main generation + judge + retries) until OOM
# Confirmed cause: generate() was always called with output_scores=True and the whole GenerateDecoderOnlyOutput (scores, past_key_values, sequences on GPU) was stored in mot._meta["hf_output"] and never released; fixed in the merged PR by not requesting scores and dropping hf_output from meta when caching is off
# Class: generation output object (scores/KV cache on GPU) kept per request in a long-lived result/history structure
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


class ModelOutputThunk:
    """Result object handed back to the caller; callers keep these around in a session history."""

    def __init__(self):
        self.value = None
        self._meta = {}


class LocalHFBackend:
    def __init__(self, model_id: str, device: str = "cuda", use_caches: bool = False):
        self._device = torch.device(device)
        self._tokenizer = AutoTokenizer.from_pretrained(model_id)
        self._model = AutoModelForCausalLM.from_pretrained(model_id, torch_dtype=torch.bfloat16).to(self._device)
        self._model.eval()
        self._use_caches = use_caches

    @torch.inference_mode()
    def generate_from_context(self, prompt: str, max_new_tokens: int = 256) -> ModelOutputThunk:
        input_ids = self._tokenizer(prompt, return_tensors="pt").input_ids.to(self._device)
        chunk = self._model.generate(
            input_ids,
            max_new_tokens=max_new_tokens,
            return_dict_in_generate=True,
            output_scores=True,  # leak: ANY
            do_sample=False,
        )
        mot = ModelOutputThunk()
        mot._meta["hf_output"] = chunk  # leak: ANY
        mot.value = self._tokenizer.decode(chunk.sequences[0, input_ids.shape[1]:], skip_special_tokens=True)
        mot._meta["prompt_len"] = int(input_ids.shape[1])
        return mot


class Session:
    def __init__(self, backend: LocalHFBackend, loop_budget: int = 3):
        self.backend = backend
        self.loop_budget = loop_budget
        self.history = []

    def judge(self, instruction: str, answer: str) -> bool:
        verdict = self.backend.generate_from_context(
            f"Does this answer satisfy the instruction?\nInstruction: {instruction}\nAnswer: {answer}\nReply yes or no:",
            max_new_tokens=4,
        )
        self.history.append(verdict)
        return "yes" in verdict.value.lower()

    def instruct(self, instruction: str) -> str:
        answer = None
        for _ in range(self.loop_budget):
            answer = self.backend.generate_from_context(instruction)
            self.history.append(answer)
            if self.judge(instruction, answer.value):
                break
        return answer.value


if __name__ == "__main__":
    backend = LocalHFBackend("ibm-granite/granite-3.3-2b-instruct")
    session = Session(backend)
    for i in range(200):
        text = session.instruct(f"Write a haiku about the number {i}.")
        print(i, text[:40].replace("\n", " "), torch.cuda.memory_allocated() / 2**20, "MiB")
