# Thread: https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/5292
# Reported: after loading and fp8 post-training quantization of a 27B VLM (TP=8) succeeded,
#   the sanity-check generation at the end of quantize_vlm.py / ptq_generate_vlm.py ran out of
#   CUDA memory (~79 GB of 79.18 GB).
# Confirmed cause: the merged PR: "`.eval()` disables dropout/etc but not autograd ... the
#   post-quantization sanity-check generation call ran with gradient tracking enabled, so every
#   decode step retained a full backward-pass graph it never uses"; fixed by wrapping the
#   generation in torch.no_grad().
# Class: generation/decoding helper run with autograd on (model.eval() only), outside training
import torch


def _greedy_generate(model, input_ids, pixel_values, max_new_tokens=64, eos_token_id=None):
    generated = input_ids
    for _ in range(max_new_tokens):
        logits = model(input_ids=generated, pixel_values=pixel_values).logits
        next_token = logits[:, -1, :].argmax(dim=-1, keepdim=True)
        generated = torch.cat([generated, next_token], dim=-1)
        if eos_token_id is not None and (next_token == eos_token_id).all():
            break
    return generated


def run_test_generation(model, processor, image, prompt, max_new_tokens=64):
    model.eval()
    inputs = processor(images=image, text=prompt, return_tensors="pt").to("cuda")
    with torch.no_grad():
        output_ids = _greedy_generate(
            model,
            inputs["input_ids"],
            inputs["pixel_values"],
            max_new_tokens=max_new_tokens,
            eos_token_id=processor.tokenizer.eos_token_id,
        )
    text = processor.batch_decode(output_ids, skip_special_tokens=True)[0]
    print(f"Test generation: {text}")
    return text


def quantize_and_check(model, processor, quantize_fn, calib_loader, save_fn, image, prompt):
    model = quantize_fn(model, calib_loader)
    save_fn(model)
    return run_test_generation(model, processor, image, prompt)
