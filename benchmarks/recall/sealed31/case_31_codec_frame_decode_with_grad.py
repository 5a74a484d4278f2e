# Thread: https://github.com/facebookresearch/encodec/issues/19
# Reported: streaming a long waveform through EnCodec frame by frame (encode one 480-sample
#   frame, decode it, keep the decoded audio) makes memory climb steadily until OOM; with the
#   decode step turned off memory stays flat.
# Confirmed cause: the maintainer: the model was evaluated with autograd on; "you need to wrap
#   the eval of the model with torch.no_grad()" (README updated). Every decoded frame kept in
#   the list carries the graph of its encode+decode pass.
# Class: decoding / generation helper run with grad enabled, outputs collected across the loop
import torch
import torchaudio
from encodec import EncodecModel
from encodec.utils import convert_audio


def stream_roundtrip(path, out_path, hop=480, bandwidth=6.0):
    model = EncodecModel.encodec_model_24khz()
    model.set_target_bandwidth(bandwidth)

    wav, sr = torchaudio.load(path)
    wav = convert_audio(wav.unsqueeze(0), sr, model.sample_rate, model.channels)

    frames = []
    for offset in range(0, wav.shape[-1], hop):
        chunk = wav[:, :, offset: offset + hop]
        codes = model._encode_frame(chunk)
        frames.append(model._decode_frame(codes))  # leak: ANY

    decoded = torch.cat(frames, dim=2)
    torchaudio.save(out_path, decoded[0], model.sample_rate)
    return decoded
