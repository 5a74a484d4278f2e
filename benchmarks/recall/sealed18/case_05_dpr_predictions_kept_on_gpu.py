# Recall case 05 (sealed18): DPR retriever collects the embeddings of every batch on the GPU before concatenating
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
                    all_embeddings["query"].append(query_embeddings)  # leak: ANY
                if passage_embeddings is not None:
                    all_embeddings["passages"].append(passage_embeddings)  # leak: ANY
        if all_embeddings["passages"]:
            all_embeddings["passages"] = torch.cat(all_embeddings["passages"]).cpu().numpy()
        if all_embeddings["query"]:
            all_embeddings["query"] = torch.cat(all_embeddings["query"]).cpu().numpy()
        return all_embeddings
