# Recall case 05 (sealed8): embedding extraction runs the backbone with autograd on, saving activations for a backward that never comes
# Thread: https://github.com/christiansafka/img2vec/pull/33
# Reported: get_vec uses far more memory than inference needs (large image lists / GPU)
# Confirmed cause: the forward pass in get_vec was not wrapped in torch.no_grad(); the merged PR ("use torch no grad to
#   reduce memory usage") adds it and the maintainer accepted it
# Class: inference/eval helper calls the model without no_grad (a forward hook copies the embedding out)
import numpy as np
import torch
import torchvision.models as models
import torchvision.transforms as transforms


class Img2Vec:
    def __init__(self, cuda: bool = False, model: str = "resnet-18", layer_output_size: int = 512):
        self.device = torch.device("cuda" if cuda else "cpu")
        self.layer_output_size = layer_output_size
        self.model_name = model
        self.model = models.resnet18(weights=models.ResNet18_Weights.DEFAULT)
        self.extraction_layer = self.model._modules.get("avgpool")
        self.model = self.model.to(self.device)
        self.model.eval()
        self.scaler = transforms.Resize((224, 224))
        self.normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
        self.to_tensor = transforms.ToTensor()

    def get_vec(self, img, tensor: bool = False):
        """Get vector embedding from a PIL image or a list of PIL images."""
        if isinstance(img, list):
            batch = [self.normalize(self.to_tensor(self.scaler(im))) for im in img]
            images = torch.stack(batch).to(self.device)
            my_embedding = torch.zeros(len(img), self.layer_output_size, 1, 1)

            def copy_data(m, i, o):
                my_embedding.copy_(o.data)

            h = self.extraction_layer.register_forward_hook(copy_data)
            h_x = self.model(images)  # leak: ANY
            h.remove()
            if tensor:
                return my_embedding
            return my_embedding.numpy()[:, :, 0, 0]
        image = self.normalize(self.to_tensor(self.scaler(img))).unsqueeze(0).to(self.device)
        my_embedding = torch.zeros(1, self.layer_output_size, 1, 1)

        def copy_data(m, i, o):
            my_embedding.copy_(o.data)

        h = self.extraction_layer.register_forward_hook(copy_data)
        h_x = self.model(image)  # leak: ANY
        h.remove()
        if tensor:
            return my_embedding
        return my_embedding.numpy()[0, :, 0, 0]


if __name__ == "__main__":
    from PIL import Image

    img2vec = Img2Vec(cuda=True)
    images = [Image.new("RGB", (640, 480)) for _ in range(256)]
    vectors = img2vec.get_vec(images)
    print(np.asarray(vectors).shape)
