# Thread: https://github.com/ImprintLab/MedSegDiff/pull/158
# Reported: sampling segmentations with DPM-Solver (scripts/segmentation_sample.py) grew GPU memory by
#   about 2 GB with every sample until CUDA out of memory (issues #49, #157 and others).
# Confirmed cause: the merged PR and the maintainer: the sampled tensors "are processed with gradients"
#   in these PyTorch versions, so the DPM-Solver output handed back from p_sample_loop_known kept its
#   whole sampling graph alive in the caller's ensemble list; the fix detaches the sample right after
#   dpm_solver.sample() (the maintainer notes torch.no_grad() would also resolve it).
# Class: sampling/decoding loop output kept with its autograd graph across samples
import torch
import torch as th


def norm(t):
    return (t - t.min()) / (t.max() - t.min() + 1e-8)


class GaussianDiffusion:
    def __init__(self, betas, dpm_solver_cls, noise_schedule_cls, model_wrapper):
        self.betas = betas
        self.dpm_solver = True
        self.DPM_Solver = dpm_solver_cls
        self.NoiseScheduleVP = noise_schedule_cls
        self.model_wrapper = model_wrapper

    def p_sample_loop_known(self, model, shape, img, step=1000, clip_denoised=True, model_kwargs=None, device=None):
        if device is None:
            device = next(model.parameters()).device
        img = img.to(device)
        noise = th.randn_like(img[:, :1, ...]).to(device)
        x_noisy = torch.cat((img[:, :-1, ...], noise), dim=1)

        final = {}
        noise_schedule = self.NoiseScheduleVP(schedule='discrete', betas=th.from_numpy(self.betas))
        model_fn = self.model_wrapper(model, noise_schedule, model_type="noise", model_kwargs=model_kwargs)
        dpm_solver = self.DPM_Solver(model_fn, noise_schedule, algorithm_type="dpmsolver++",
                                     correcting_x0_fn="dynamic_thresholding", img=img[:, :-1, ...])
        sample, cal = dpm_solver.sample(noise.to(dtype=th.float), steps=step, order=2,  # leak: ANY
                                        skip_type="time_uniform", method="multistep")
        sample[:, -1, :, :] = norm(sample[:, -1, :, :])  # leak: ANY
        final["sample"] = sample
        final["cal"] = cal
        cal_out = torch.clamp(final["cal"] + 0.25 * final["sample"][:, -1, :, :].unsqueeze(1), 0, 1)
        return final["sample"], x_noisy, img, final["cal"], cal_out


def main(args, model, diffusion, data, staple, save_image):
    model.eval()
    for _ in range(len(data)):
        b, m, path = next(data)
        img = th.cat((b, th.randn_like(b[:, :1, ...])), dim=1)
        enslist = []
        for i in range(args.num_ensemble):
            sample, x_noisy, org, cal, cal_out = diffusion.p_sample_loop_known(
                model, (args.batch_size, 3, args.image_size, args.image_size), img,
                step=args.diffusion_steps, clip_denoised=args.clip_denoised, model_kwargs={})
            if args.version == 'new':
                enslist.append(sample[:, -1, :, :])
            else:
                enslist.append(cal_out)
        ensres = staple(th.stack(enslist, dim=0)).squeeze(0)
        save_image(ensres, path)
