# Fixed twin of case 03: the BERTScore scorer is loaded once before the loop and passed into the helper
# Thread: https://github.com/ttanida/rgrg/pull/27
# Reported: during test-set evaluation GPU memory climbs from batch to batch and OOMs even at batch size 1
# Confirmed cause: get_generated_reports() called evaluate.load("bertscore") on each call inside the dataset loop; loading it once before the loop fixed it (PR merged, author agreed)
# Class: heavy helper model re-instantiated per batch inside an eval loop and kept alive by a loader cache
import torch
from transformers import AutoModel, AutoTokenizer

_LOADED_METRICS = []  # stands in for the metric library's module cache: every load stays referenced


class BertScore:
    def __init__(self, model_type="roberta-large", device="cuda"):
        self.tokenizer = AutoTokenizer.from_pretrained(model_type)
        self.model = AutoModel.from_pretrained(model_type).to(device).eval()
        self.device = device

    @torch.no_grad()
    def compute(self, predictions, references):
        p = self.tokenizer(predictions, return_tensors="pt", padding=True, truncation=True).to(self.device)
        r = self.tokenizer(references, return_tensors="pt", padding=True, truncation=True).to(self.device)
        ep = torch.nn.functional.normalize(self.model(**p).last_hidden_state.mean(1), dim=-1)
        er = torch.nn.functional.normalize(self.model(**r).last_hidden_state.mean(1), dim=-1)
        return {"f1": (ep * er).sum(-1).tolist()}


def load_metric(name, device="cuda"):
    metric = BertScore(device=device)
    _LOADED_METRICS.append(metric)
    return metric


def get_generated_reports(generated_sentences, reference_sentences, bert_score):
    scores = bert_score.compute(predictions=generated_sentences, references=reference_sentences)
    return [g for g, f1 in zip(generated_sentences, scores["f1"]) if f1 > 0.9]


def evaluate_language_model(model, test_loader):
    reports = []
    bert_score = load_metric("bertscore")
    for batch in test_loader:
        generated = model.generate(batch["images"].cuda())
        reports.extend(get_generated_reports(generated, batch["reference_reports"], bert_score))
    return reports
