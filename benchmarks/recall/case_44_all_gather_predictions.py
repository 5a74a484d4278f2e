# Recall case 44: every rank's predictions for the whole test set gathered as pickled objects
# Thread: https://github.com/facebookresearch/maskrcnn-benchmark/pull/383
# Reported: with the new pickle-based all_gather of inference results, large datasets run out
#   of GPU memory ("Because of the large size of each data, I get OOM error").
# Confirmed cause: fmassa: gathering every rank's pickled predictions "will probably be
#   problematic for large datasets, as we will run out of memory on the GPU when trying to
#   perform this communication": each rank receives world_size copies of all predictions.
# Class: all_gather_object of whole evaluation results
import torch
import torch.distributed as dist


def compute_on_dataset(model, data_loader, device):
    model.eval()
    results_dict = {}
    with torch.no_grad():
        for images, targets, image_ids in data_loader:
            outputs = model(images.to(device))
            outputs = [o.to("cpu") for o in outputs]
            results_dict.update({img_id: result for img_id, result in zip(image_ids, outputs)})
    return results_dict


def accumulate_predictions_from_multiple_gpus(predictions_per_gpu):
    all_predictions = [None] * dist.get_world_size()
    dist.all_gather_object(all_predictions, predictions_per_gpu)  # leak: ANY
    if dist.get_rank() != 0:
        return None
    predictions = {}
    for p in all_predictions:
        predictions.update(p)
    return [predictions[i] for i in sorted(predictions)]


def inference(model, data_loader, dataset_name, device="cuda"):
    predictions = compute_on_dataset(model, data_loader, device)
    dist.barrier()
    predictions = accumulate_predictions_from_multiple_gpus(predictions)
    if dist.get_rank() == 0:
        torch.save(predictions, f"{dataset_name}_predictions.pth")
    return predictions
