# Fixed twin of case 66: gradients are switched off for real with torch.set_grad_enabled(False).
# Thread: https://github.com/kuprel/min-dalle/pull/24
# Class: inference outside no_grad -- grad mode "disabled" by a no-op call
import numpy
import torch
from torch import LongTensor

from .models.dalle_bart_encoder_torch import DalleBartEncoderTorch
from .models.dalle_bart_decoder_torch import DalleBartDecoderTorch
from .models.vqgan_detokenizer import VQGanDetokenizer

torch.set_grad_enabled(False)


def encode_torch(text_tokens: numpy.ndarray, config: dict, params: dict) -> torch.Tensor:
    encoder = DalleBartEncoderTorch(
        layer_count=config["encoder_layers"],
        embed_count=config["d_model"],
        attention_head_count=config["encoder_attention_heads"],
        text_vocab_count=config["encoder_vocab_size"],
        text_token_count=config["max_text_length"],
        glu_embed_count=config["encoder_ffn_dim"],
    )
    encoder.load_state_dict(params, strict=False)
    encoder = encoder.cuda()
    text_tokens = torch.tensor(text_tokens).to(torch.long).cuda()
    return encoder(text_tokens)


def generate_image_tokens_torch(text_tokens, encoder_state, config, params, image_token_count=256):
    decoder = DalleBartDecoderTorch(
        image_vocab_size=config["image_vocab_size"],
        image_token_count=config["image_length"],
        sample_token_count=image_token_count,
        embed_count=config["d_model"],
        attention_head_count=config["decoder_attention_heads"],
        glu_embed_count=config["decoder_ffn_dim"],
        layer_count=config["decoder_layers"],
        batch_count=2,
        start_token=config["decoder_start_token_id"],
    )
    decoder.load_state_dict(params, strict=False)
    decoder = decoder.cuda()
    text_tokens = torch.tensor(text_tokens).to(torch.long).cuda()
    return decoder(text_tokens, encoder_state)


def detokenize_torch(image_tokens: LongTensor, params: dict) -> numpy.ndarray:
    detokenizer = VQGanDetokenizer()
    detokenizer.load_state_dict(params)
    detokenizer = detokenizer.cuda()
    image = detokenizer(image_tokens.cuda())
    return image.to("cpu").numpy()


def generate_image_from_text(text_tokens, config, encoder_params, decoder_params, vqgan_params):
    encoder_state = encode_torch(text_tokens, config, encoder_params)
    image_tokens = generate_image_tokens_torch(text_tokens, encoder_state, config, decoder_params)
    return detokenize_torch(image_tokens, vqgan_params)
