# Recall case 18: embeddings of many documents with a pretrained model, no no_grad, no eval()
# Thread: https://github.com/allenai/longformer/issues/36
# Reported: looping Longformer over 2,200 long documents and appending `output[1]` eats 256 GB
#   of RAM after a few iterations.
# Confirmed cause: the maintainer: "this is expected PyTorch behavior ... Every time you call
#   `output = model(...)`, PyTorch stores more of the activations computed during the forward
#   pass" for a backward; run it under `torch.no_grad()`. The kept outputs hold those graphs.
# Class: inference without no_grad on a model never put in eval() (no backward, no optimizer)
import torch
from longformer.longformer import Longformer, LongformerConfig
from longformer.sliding_chunks import pad_to_window_size
from transformers import RobertaTokenizer

longformer_base_dir = "longformer-base-4096/"


def embed_pages(pages):
    config = LongformerConfig.from_pretrained(longformer_base_dir)
    config.attention_mode = "sliding_chunks"
    model = Longformer.from_pretrained(longformer_base_dir, config=config)
    tokenizer = RobertaTokenizer.from_pretrained("roberta-base")
    tokenizer.model_max_length = model.config.max_position_embeddings
    output_vec = []
    for pg in pages:
        pg = f"{tokenizer.cls_token}{pg}{tokenizer.eos_token}"
        input_ids = torch.tensor(tokenizer.encode(pg)).unsqueeze(0)
        attention_mask = torch.ones(input_ids.shape, dtype=torch.long, device=input_ids.device)
        input_ids, attention_mask = pad_to_window_size(
            input_ids, attention_mask, config.attention_window[0], tokenizer.pad_token_id)
        output = model(input_ids, attention_mask=attention_mask)  # leak: ANY
        output_vec.append(output[1])  # leak: ANY
    return output_vec
