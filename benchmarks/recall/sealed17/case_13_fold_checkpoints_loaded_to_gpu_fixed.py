# Fixed twin of case 13: the fold checkpoints are loaded to the CPU (`map_location=torch.device("cpu")`); load_checkpoint_ram copies one fold at a time into the network
# Thread: https://github.com/MIC-DKFZ/nnUNet/issues/34
# Reported: the maintainer noted that during ensemble inference all fold checkpoints are loaded onto the GPU, which causes problems when GPU memory is short; only the parameters in use should be on the GPU, the rest in RAM
# Confirmed cause: load_model_and_checkpoint_files loaded every fold's checkpoint with map_location on the current CUDA device, so the parameters of all folds sat on the GPU although one set is used at a time; the maintainer fixed it (reported "fixed internally", later released) by loading the checkpoints to the CPU and copying one fold into the network at a time
# Class: torch.load onto the GPU
import numpy as np
import torch
from batchgenerators.utilities.file_and_folder_operations import join, subfolders

from nnunet.training.model_restore import restore_model


def load_model_and_checkpoint_files(folder, folds=None):
    if isinstance(folds, str):
        folds = [join(folder, "all")]
    elif folds is None:
        folds = subfolders(folder, prefix="fold")
    else:
        folds = [join(folder, "fold_%d" % i) for i in folds]

    trainer = restore_model(join(folds[0], "model_best.model.pkl"))
    trainer.output_folder = folder
    trainer.initialize(False)
    all_best_model_files = [join(i, "model_best.model") for i in folds]
    print("using the following model files: ", all_best_model_files)
    all_params = [torch.load(i, map_location=torch.device("cpu")) for i in all_best_model_files]
    return trainer, all_params


def predict_cases(model, list_of_lists, output_filenames, folds, do_tta=True):
    trainer, params = load_model_and_checkpoint_files(model, folds)
    for case_files, output_filename in zip(list_of_lists, output_filenames):
        d, _, dct = trainer.preprocess_patient(case_files)
        softmax = []
        for p in params:
            trainer.load_checkpoint_ram(p, False)
            softmax.append(trainer.predict_preprocessed_data_return_softmax(d, do_tta, 1, False, 1)[None])
        softmax_mean = np.vstack(softmax).mean(0)
        seg = softmax_mean.argmax(0)
        np.save(output_filename, seg)
