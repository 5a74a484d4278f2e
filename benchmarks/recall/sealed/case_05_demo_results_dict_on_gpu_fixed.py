# Fixed twin of case 05: each result is moved to the CPU before it is kept.
# Thread: https://github.com/X-niper/UniTalker/pull/7
# Class: per-item inference results kept on the device in a long-lived dict
import os

import librosa
import numpy as np
import torch


def run_demo(args, model, loss_module, processor, wav_f_names, template_id_config,
             condition_id_config, dataset_config, split_long_audio, merge_out_list):
    out_dict = {}
    with torch.no_grad():
        for wav_f in wav_f_names:
            out_dict[wav_f] = {}
            audio_data, sr = librosa.load(os.path.join(args.test_wav_dir, wav_f), sr=16000)
            audio_data = np.squeeze(processor(audio_data, sampling_rate=sr).input_values)
            audio_data_splits = split_long_audio(audio_data, processor)
            for dataset_name in args.demo_dataset:
                template = dataset_config[dataset_name]["scale"] * template_id_config[dataset_name].cuda()
                condition_id = condition_id_config[dataset_name].cuda()
                annot_type = dataset_config[dataset_name]["annot_type"]
                fps = 25 if annot_type == "BIWI_23370_vertices" else 30
                out_list = []
                for piece in audio_data_splits:
                    piece = torch.Tensor(piece[None]).cuda()
                    out, _, _ = model(piece, template, face_motion=None, style_idx=condition_id,
                                      annot_type=annot_type, fps=fps)
                    out_list.append(out.cpu().numpy().squeeze(0))
                out = merge_out_list(out_list, fps)
                out = loss_module.get_vertices(torch.from_numpy(out).cuda(), annot_type)
                out_dict[wav_f][dataset_name] = out.cpu()
    os.makedirs(os.path.dirname(args.test_out_path), exist_ok=True)
    np.savez(args.test_out_path, **out_dict)
