# Fixed twin of case 56: sampling is decorated with @torch.no_grad().
# Thread: https://github.com/Project-MONAI/GenerativeModels/issues/243
# Class: iterative sampler (state fed back) with grad enabled and no backward
import torch
from tqdm import tqdm


class DiffusionInferer:
    def __init__(self, scheduler):
        self.scheduler = scheduler

    def __call__(self, inputs, diffusion_model, noise, timesteps, condition=None):
        noisy_image = self.scheduler.add_noise(original_samples=inputs, noise=noise, timesteps=timesteps)
        return diffusion_model(x=noisy_image, timesteps=timesteps, context=condition)

    @torch.no_grad()
    def sample(self, input_noise, diffusion_model, scheduler=None, save_intermediates=False,
               intermediate_steps=100, conditioning=None, verbose=True):
        if not scheduler:
            scheduler = self.scheduler
        image = input_noise
        progress_bar = tqdm(scheduler.timesteps) if verbose else iter(scheduler.timesteps)
        intermediates = []
        for t in progress_bar:
            model_output = diffusion_model(
                image, timesteps=torch.Tensor((t,)).to(input_noise.device), context=conditioning
            )
            image, _ = scheduler.step(model_output, t, image)
            if save_intermediates and t % intermediate_steps == 0:
                intermediates.append(image)
        if save_intermediates:
            return image, intermediates
        return image
