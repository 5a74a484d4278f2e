# Fixed twin of case 44: each rank writes its shard to disk; rank 0 merges the files.
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


def accumulate_predictions_from_multiple_gpus(predictions_per_gpu, dataset_name):
    torch.save(predictions_per_gpu, f"{dataset_name}_predictions_rank{dist.get_rank()}.pth")
    dist.barrier()
    if dist.get_rank() != 0:
        return None
    predictions = {}
    for rank in range(dist.get_world_size()):
        predictions.update(torch.load(f"{dataset_name}_predictions_rank{rank}.pth", map_location="cpu"))
    return [predictions[i] for i in sorted(predictions)]


def inference(model, data_loader, dataset_name, device="cuda"):
    predictions = compute_on_dataset(model, data_loader, device)
    predictions = accumulate_predictions_from_multiple_gpus(predictions, dataset_name)
    if dist.get_rank() == 0:
        torch.save(predictions, f"{dataset_name}_predictions.pth")
    return predictions
