# Fixed twin of case 14: the caller deletes its own names, then calls a plain free_memory().
# Thread: https://github.com/huggingface/diffusers/pull/9543
# Class: object lifetime -- a helper cannot drop the caller's references with `del`
import gc

import torch


def free_memory():
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
        del tokenizer_one, tokenizer_two, text_encoder_one, text_encoder_two
        free_memory()

    for epoch in range(args.num_train_epochs):
        train_loop(transformer, instance_prompt_embeds, instance_pooled)
        if accelerator.is_main_process and epoch % args.validation_epochs == 0:
            pipeline = build_pipeline(transformer)
            log_validation(pipeline, args, accelerator, epoch)
            del pipeline
            free_memory()
