# Fixed twin of case 09: labels and predictions are detached before they are cached.
# Thread: https://github.com/deepchecks/deepchecks/issues/1148
# Class: a check/metric that caches model outputs carrying their graph
import torch


def infer_on_batch(model, images, device):
    return model(images.to(device))


class ImageSegmentPerformance:
    def __init__(self, image_properties, number_of_samples_to_infer_bins=1000, number_of_bins=5):
        self.image_properties = image_properties
        self.number_of_samples_to_infer_bins = number_of_samples_to_infer_bins
        self.number_of_bins = number_of_bins
        self._state = None

    def initialize_run(self, context):
        self._state = {"samples_for_binning": [], "bins": None}

    def update(self, context, batch):
        images = batch["images"]
        labels = batch["labels"]
        predictions = infer_on_batch(context.model, images, context.device)
        properties = [{name: fn(img) for name, fn in self.image_properties} for img in images]
        labels = [t.detach() for t in labels]
        predictions = [t.detach() for t in predictions]
        samples = list(zip(labels, predictions, properties))
        if self._state["bins"] is not None:
            self._divide_to_bins(self._state["bins"], samples)
        else:
            self._state["samples_for_binning"].extend(samples)
            if len(self._state["samples_for_binning"]) >= self.number_of_samples_to_infer_bins:
                self._state["bins"] = self._create_bins(self._state["samples_for_binning"])
                self._divide_to_bins(self._state["bins"], self._state["samples_for_binning"])
                self._state["samples_for_binning"] = []

    def _create_bins(self, samples):
        bins = {}
        for name, _ in self.image_properties:
            values = torch.tensor([float(p[name]) for _, _, p in samples])
            edges = torch.quantile(values, torch.linspace(0, 1, self.number_of_bins + 1))
            bins[name] = [{"start": edges[i], "stop": edges[i + 1], "samples": []}
                          for i in range(self.number_of_bins)]
        return bins

    def _divide_to_bins(self, bins, samples):
        for label, prediction, props in samples:
            for name, prop_bins in bins.items():
                for b in prop_bins:
                    if b["start"] <= props[name] <= b["stop"]:
                        b["samples"].append((label, prediction))
                        break
