# Fixed twin of case 04: the body of main() runs under `with torch.no_grad():`, so neither forward keeps activations
# Thread: https://github.com/maum-ai/voicefilter/pull/6
# Reported: the inference script needs about twice the GPU memory it should and runs out of memory on longer mixtures
# Confirmed cause: the embedder and VoiceFilter forwards in inference.py ran without torch.no_grad(), so the activations of both forwards were kept for a backward that never runs; the repository author called it his mistake and merged the PR that wraps the inference in torch.no_grad(), which halves memory use
# Class: evaluation / inference without no_grad
import argparse
import os

import librosa
import torch

from model.embedder import SpeechEmbedder
from model.model import VoiceFilter
from utils.audio import Audio
from utils.hparams import HParam


def main(args, hp):
    with torch.no_grad():
        model = VoiceFilter(hp).cuda()
        chkpt_model = torch.load(args.checkpoint_path)["model"]
        model.load_state_dict(chkpt_model)
        model.eval()

        embedder = SpeechEmbedder(hp).cuda()
        chkpt_embed = torch.load(args.embedder_path)
        embedder.load_state_dict(chkpt_embed)
        embedder.eval()

        audio = Audio(hp)
        dvec_wav, _ = librosa.load(args.reference_file, sr=16000)
        dvec_mel = audio.get_mel(dvec_wav)
        dvec_mel = torch.from_numpy(dvec_mel).float().cuda()
        dvec = embedder(dvec_mel)
        dvec = dvec.unsqueeze(0)

        mixed_wav, _ = librosa.load(args.mixed_file, sr=16000)
        mag, phase = audio.wav2spec(mixed_wav)
        mag = torch.from_numpy(mag).float().cuda()
        mag = mag.unsqueeze(0)
        mask = model(mag, dvec)
        est_mag = mag * mask

        est_mag = est_mag[0].cpu().detach().numpy()
        est_wav = audio.spec2wav(est_mag, phase)

        os.makedirs(args.out_dir, exist_ok=True)
        out_path = os.path.join(args.out_dir, "result.wav")
        librosa.output.write_wav(out_path, est_wav, sr=16000)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--config", type=str, required=True)
    parser.add_argument("-e", "--embedder_path", type=str, required=True)
    parser.add_argument("--checkpoint_path", type=str, default=None)
    parser.add_argument("-m", "--mixed_file", type=str, required=True)
    parser.add_argument("-r", "--reference_file", type=str, required=True)
    parser.add_argument("-o", "--out_dir", type=str, required=True)
    args = parser.parse_args()

    hp = HParam(args.config)
    main(args, hp)
