# Recall case 04 (sealed21): per-frame video inversion keeps every frame's result image and latent on the GPU
# Thread: https://github.com/yuval-alaluf/stylegan3-editing/issues/37
# Reported: inference_on_video.py processes one frame at a time, yet GPU memory keeps growing and the run goes OOM after ~600 frames on an 11 GB card; del, gc.collect() and torch.cuda.empty_cache() inside the loop do not help
# Confirmed cause: the maintainer points to the lines that store each frame's last inversion image and latent code in the results containers, all still CUDA tensors, and suggests storing them with .cpu(); the reporter, after profiling, confirms the growth comes mainly from the stored result images (larger than the latents)
# Class: predict/inference loop returning every step's output on the GPU
import torch
from tqdm import tqdm


def run_on_batch(inputs, net, opts, avg_image, landmarks_transform=None):
    y_hat, latent = None, None
    results_batch = {idx: [] for idx in range(inputs.shape[0])}
    results_latent = {idx: [] for idx in range(inputs.shape[0])}
    for _ in range(opts.n_iters_per_batch):
        if y_hat is None:
            x_input = torch.cat([inputs, avg_image.unsqueeze(0).repeat(inputs.shape[0], 1, 1, 1)], dim=1)
        else:
            x_input = torch.cat([inputs, y_hat], dim=1)
        y_hat, latent = net.forward(x_input, latents=latent, landmarks_transform=landmarks_transform,
                                    return_latents=True, resize=opts.resize_outputs)
        for idx in range(inputs.shape[0]):
            results_batch[idx].append(y_hat[idx])
            results_latent[idx].append(latent[idx])
        y_hat = net.face_pool(y_hat)
    return results_batch, results_latent


def run_inference(input_paths, input_images, landmarks_transforms, net, opts, image_transforms, avg_image):
    results = {"source_images": [], "result_images": [], "result_latents": {}, "landmarks_transforms": []}
    # run inference one frame at a time
    for input_image, input_path in tqdm(zip(input_images, input_paths)):
        results["source_images"].append(input_image)
        image_name = input_path.name
        if landmarks_transforms is not None:
            if image_name not in landmarks_transforms:
                continue
            image_landmarks_transform = torch.from_numpy(landmarks_transforms[image_name][-1]).cuda()
        else:
            image_landmarks_transform = None
        with torch.no_grad():
            transformed_image = image_transforms(input_image)
            result_batch, latents = run_on_batch(inputs=transformed_image.unsqueeze(0).cuda(),
                                                 net=net,
                                                 opts=opts,
                                                 avg_image=avg_image,
                                                 landmarks_transform=image_landmarks_transform)
            # keep the last inversion and latent code of this frame
            results["result_images"].append(result_batch[0][-1])  # leak: ANY
            results["result_latents"][image_name] = latents[0][-1]  # leak: ANY
            results["landmarks_transforms"].append(image_landmarks_transform)
    return results
