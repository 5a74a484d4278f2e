# Fixed twin of case 15: the except block only sets a flag and the tiled fallback runs after it, as the PR does.
import logging

import torch

import comfy.model_management as model_management


class VAE:
    def __init__(self, first_stage_model, patcher, device, output_device, vae_dtype):
        self.first_stage_model = first_stage_model
        self.patcher = patcher
        self.device = device
        self.output_device = output_device
        self.vae_dtype = vae_dtype
        self.disable_offload = False

    def memory_used_decode(self, shape, dtype):
        return 2178 * shape[2] * shape[3] * 64 * model_management.dtype_size(dtype)

    def process_output(self, image):
        return torch.clamp((image + 1.0) / 2.0, min=0.0, max=1.0)

    def decode_tiled_(self, samples, tile_x=64, tile_y=64, overlap=16):
        rows = []
        for y in range(0, samples.shape[2], tile_y - overlap):
            for x in range(0, samples.shape[3], tile_x - overlap):
                tile = samples[:, :, y:y + tile_y, x:x + tile_x].to(self.vae_dtype).to(self.device)
                rows.append(self.process_output(self.first_stage_model.decode(tile).to(self.output_device).float()))
        return torch.cat(rows, dim=0)

    def decode(self, samples_in, vae_options={}):
        pixel_samples = None
        do_tile = False
        try:
            memory_used = self.memory_used_decode(samples_in.shape, self.vae_dtype)
            model_management.load_models_gpu([self.patcher], memory_required=memory_used, force_full_load=self.disable_offload)
            free_memory = model_management.get_free_memory(self.device)
            batch_number = max(1, int(free_memory / memory_used))
            for x in range(0, samples_in.shape[0], batch_number):
                samples = samples_in[x:x + batch_number].to(self.vae_dtype).to(self.device)
                out = self.process_output(self.first_stage_model.decode(samples, **vae_options).to(self.output_device).float())
                if pixel_samples is None:
                    pixel_samples = torch.empty((samples_in.shape[0],) + tuple(out.shape[1:]), device=self.output_device)
                pixel_samples[x:x + batch_number] = out
        except model_management.OOM_EXCEPTION:
            logging.warning("Warning: Ran out of memory when regular VAE decoding, retrying with tiled VAE decoding.")
            # the exception keeps the failed attempt's tensors alive; fall back only once it is gone
            do_tile = True

        if do_tile:
            pixel_samples = self.decode_tiled_(samples_in)

        return pixel_samples.to(self.output_device).movedim(1, -1)
