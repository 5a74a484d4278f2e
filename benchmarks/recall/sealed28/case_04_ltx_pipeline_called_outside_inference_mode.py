# Thread: https://github.com/Lightricks/LTX-2/issues/152
# Reported: driving the two-stage text/image-to-video pipeline from one's own Python script (not the
#   CLI) runs out of GPU memory: after the text encoder is dropped and the transformer is loaded,
#   CUDA OOM.
# Confirmed cause: the pipelines' __call__ runs with autograd on (only the CLI main() sits under
#   torch.inference_mode()), so the Gemma text encoder's (~37 GB) and the transformer's activations
#   are recorded on the autograd graph for a backward that never comes. The maintainer: "From Python,
#   wrap the call: with torch.inference_mode(): video, audio, *_ = pipeline(...). Skipping that keeps
#   Gemma/transformer activations on the autograd graph and can OOM."
# Class: inference / generation run with grad enabled from user code
import argparse

import torch
from ltx_pipelines.ti2vid_two_stages import TI2VidTwoStagesPipeline
from ltx_pipelines.utils.media_io import encode_video


def load_pipeline(args):
    return TI2VidTwoStagesPipeline(
        checkpoint_path=args.checkpoint_path,
        distilled_lora=[],
        spatial_upsampler_path=args.spatial_upsampler_path,
        gemma_root=args.gemma_root,
        loras=[],
    )


def render_clip(pipeline, prompt, out_path, seed=0, height=704, width=1216, num_frames=121, frame_rate=24.0):
    video, audio, *_ = pipeline(  # leak: ANY
        prompt=prompt,
        negative_prompt="blurry, low quality, still frame",
        seed=seed,
        height=height,
        width=width,
        num_frames=num_frames,
        frame_rate=frame_rate,
        num_inference_steps=40,
        images=[],
    )
    encode_video(video=video, audio=audio, fps=frame_rate, output_path=out_path)
    return out_path


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint-path", dest="checkpoint_path", required=True)
    parser.add_argument("--spatial-upsampler-path", dest="spatial_upsampler_path", required=True)
    parser.add_argument("--gemma-root", dest="gemma_root", required=True)
    parser.add_argument("--prompts", nargs="+", required=True)
    cli = parser.parse_args()

    pipeline = load_pipeline(cli)
    for i, text in enumerate(cli.prompts):
        render_clip(pipeline, text, f"clip_{i:03d}.mp4", seed=i)
