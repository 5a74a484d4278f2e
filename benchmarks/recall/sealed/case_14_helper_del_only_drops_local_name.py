# Recall case 14 (sealed): a "free memory" helper deletes its own loop variable, not the caller's
#   references
# Thread: https://github.com/huggingface/diffusers/pull/9543
# Reported: (caught by a maintainer in the training examples) after precomputing text embeddings
#   and after validation, the text encoders / validation pipeline that were "cleared" still
#   occupy GPU memory in the DreamBooth/LoRA training scripts.
# Confirmed cause: the maintainer's merged PR ("fix: retain memory utility"):
#   `clear_objs_and_retain_memory(objs)` does `for obj in objs: del obj`, "I assumed that the
#   scope of `del` would carry forward but that is not the case ... it actually just deletes the
#   local reference", so the caller's names keep the models alive through `gc.collect()` and
#   `empty_cache()`. Fixed by `del`-ing in the caller and calling a plain `free_memory()`.
# Class: object lifetime -- a helper cannot drop the caller's references with `del`
import gc

import torch


def clear_objs_and_retain_memory(objs):
    if len(objs) >= 1:
        for obj in objs:
            del obj  # leak: ANY
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def compute_text_embeddings(prompt, text_encoders, tokenizers, encode_prompt):
    with torch.no_grad():
        prompt_embeds, pooled_prompt_embeds = encode_prompt(text_encoders, tokenizers, prompt)
    return prompt_embeds, pooled_prompt_embeds


def main(args, accelerator, load_models, encode_prompt, train_loop, log_validation, build_pipeline):
    tokenizer_one, tokenizer_two, text_encoder_one, text_encoder_two, transformer = load_models(args)
    text_encoder_one.to(accelerator.device)
    text_encoder_two.to(accelerator.device)
    instance_prompt_embeds, instance_pooled = compute_text_embeddings(
        args.instance_prompt, [text_encoder_one, text_encoder_two], [tokenizer_one, tokenizer_two],
        encode_prompt)
    if not args.train_text_encoder:
        clear_objs_and_retain_memory([tokenizer_one, tokenizer_two, text_encoder_one, text_encoder_two])  # leak: ANY

    for epoch in range(args.num_train_epochs):
        train_loop(transformer, instance_prompt_embeds, instance_pooled)
        if accelerator.is_main_process and epoch % args.validation_epochs == 0:
            pipeline = build_pipeline(transformer)
            log_validation(pipeline, args, accelerator, epoch)
            clear_objs_and_retain_memory([pipeline])  # leak: ANY
