# Fixed twin of case 04: the pipeline call is wrapped in torch.inference_mode(), as the maintainer
#   recommends for callers outside the CLI.
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
    with torch.inference_mode():
        video, audio, *_ = pipeline(
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
