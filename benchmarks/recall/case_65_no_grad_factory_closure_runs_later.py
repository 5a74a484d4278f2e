# Recall case 65: a @torch.no_grad() factory returns the closure that does the real work
# Thread: https://github.com/invoke-ai/InvokeAI/pull/375
# Reported: (lstein/stable-diffusion #358) after a refactor, img2img/txt2img need far more VRAM
#   than before and run out of memory at sizes that used to work.
# Confirmed cause: the merged PR (author of the refactor, approved by the maintainer): the
#   generator was switched from an iterator to a closure; `get_make_image` is decorated with
#   `@torch.no_grad()`, but the returned `make_image` closure runs later, outside that
#   decorator, so the whole sampling loop builds autograd graphs. Fixed by decorating the
#   closures themselves with `@torch.no_grad()`.
# Class: inference outside no_grad -- grad mode scoped to a factory, not to the closure it returns
import torch
from einops import repeat


class Generator:
    def __init__(self, model, precision="autocast"):
        self.model = model
        self.precision = precision

    def sample_to_image(self, samples):
        x = self.model.decode_first_stage(samples)
        x = torch.clamp((x + 1.0) / 2.0, min=0.0, max=1.0)
        return (255.0 * x[0].permute(1, 2, 0)).to(torch.uint8).cpu().numpy()

    def generate(self, prompt, init_image, width, height, iterations=1, seed=None, **kwargs):
        make_image = self.get_make_image(prompt, init_image=init_image, width=width, height=height, **kwargs)
        results = []
        for _ in range(iterations):
            x_T = torch.randn(1, 4, height // 8, width // 8, device=self.model.device)
            results.append(make_image(x_T))
        return results


class Img2Img(Generator):
    @torch.no_grad()
    def get_make_image(self, prompt, sampler, steps, cfg_scale, ddim_eta, conditioning,
                       init_image, strength, step_callback=None, **kwargs):
        sampler.make_schedule(ddim_num_steps=steps, ddim_eta=ddim_eta, verbose=False)
        init_image = repeat(init_image, "1 ... -> b ...", b=1)
        with torch.autocast("cuda"):
            init_latent = self.model.get_first_stage_encoding(self.model.encode_first_stage(init_image))
        t_enc = int(strength * steps)
        uc, c = conditioning

        def make_image(x_T):  # leak: ANY
            z_enc = sampler.stochastic_encode(
                init_latent, torch.tensor([t_enc]).to(self.model.device), noise=x_T
            )
            samples = sampler.decode(
                z_enc, c, t_enc,
                img_callback=step_callback,
                unconditional_guidance_scale=cfg_scale,
                unconditional_conditioning=uc,
            )
            return self.sample_to_image(samples)

        return make_image
