# Fixed twin of case 05: each batch of embeddings is moved to the CPU as soon as it is computed
# Thread: https://github.com/deepset-ai/haystack/pull/618
# Reported: DPR embedding of large document sets uses a large and growing amount of GPU memory (raised in issue #602)
# Confirmed cause: DensePassageRetriever._get_predictions aggregates the query and passage embeddings of every batch as GPU tensors and only moves them to the CPU at the end; the merged PR (maintainer LGTM) moves each batch to the CPU right away
# Class: predict keeps every batch output on the GPU
import numpy as np
import torch


class DensePassageRetriever:
    def __init__(self, model, device):
        self.model = model
        self.device = device

    def _get_predictions(self, data_loader):
        all_embeddings = {"query": [], "passages": []}
        self.model.eval()
        for batch in data_loader:
            batch = {key: batch[key].to(self.device) for key in batch}
            with torch.no_grad():
                query_embeddings, passage_embeddings = self.model.forward(**batch)[0]
                if query_embeddings is not None:
                    all_embeddings["query"].append(query_embeddings.cpu().numpy())
                if passage_embeddings is not None:
                    all_embeddings["passages"].append(passage_embeddings.cpu().numpy())
        if all_embeddings["passages"]:
            all_embeddings["passages"] = np.concatenate(all_embeddings["passages"])
        if all_embeddings["query"]:
            all_embeddings["query"] = np.concatenate(all_embeddings["query"])
        return all_embeddings
