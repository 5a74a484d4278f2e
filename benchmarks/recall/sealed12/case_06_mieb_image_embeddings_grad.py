# Recall case 06 (sealed12): image/text embedding helpers of a benchmark wrapper run the encoder with autograd on while looping over all batches
# Thread: https://github.com/embeddings-benchmark/mteb/pull/1378
# Reported: OOMs when encoding images for the image benchmark (MIEB) with some model wrappers
# Confirmed cause: grads were being computed during embedding extraction; merged PR '[mieb] Fix torch no grad' adds torch.no_grad() (reviewer: 'thanks for the fix!')
# Class: inference/embedding loop over a dataset without no_grad, results collected in a list
import torch
from torch.utils.data import DataLoader
from transformers import AutoModel, AutoProcessor


class VisionTextModelWrapper:
    def __init__(self, model_name="openai/clip-vit-large-patch14", device="cuda"):
        self.device = device
        self.model = AutoModel.from_pretrained(model_name).to(device)
        self.model.eval()
        self.processor = AutoProcessor.from_pretrained(model_name)

    def get_image_embeddings(self, images, batch_size=32):
        all_image_embeddings = []
        if isinstance(images, DataLoader):
            batches = images
        else:
            batches = [images[i:i + batch_size] for i in range(0, len(images), batch_size)]
        for batch in batches:  # leak: ANY
            inputs = self.processor(images=batch, return_tensors="pt")
            image_outputs = self.model.get_image_features(**inputs.to(self.device))
            all_image_embeddings.append(image_outputs.cpu())
        return torch.cat(all_image_embeddings, dim=0)

    def get_text_embeddings(self, texts, batch_size=32):
        all_text_embeddings = []
        for i in range(0, len(texts), batch_size):  # leak: ANY
            inputs = self.processor(text=texts[i:i + batch_size], return_tensors="pt", padding=True, truncation=True)
            text_outputs = self.model.get_text_features(**inputs.to(self.device))
            all_text_embeddings.append(text_outputs.cpu())
        return torch.cat(all_text_embeddings, dim=0)


def evaluate_retrieval(wrapper, images, captions):
    img = wrapper.get_image_embeddings(images)
    txt = wrapper.get_text_embeddings(captions)
    sims = torch.nn.functional.normalize(txt, dim=-1) @ torch.nn.functional.normalize(img, dim=-1).T
    return (sims.argmax(dim=1) == torch.arange(len(captions))).float().mean().item()
