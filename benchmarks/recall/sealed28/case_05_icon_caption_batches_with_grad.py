# Thread: https://github.com/microsoft/OmniParser/pull/29
# Reported: "Without this, any inference will instantly OOM even on a 12GB card (model itself only
#   need 2GB)" -- captioning the detected icons of one screenshot exhausts the GPU.
# Confirmed cause: get_parsed_content_icon captions the icon crops batch by batch with the
#   trust_remote_code caption model (Florence-2 / BLIP-2) while autograd is on, so the vision
#   encoder's activations for every batch are recorded for a backward that never comes; the merged
#   PR decorates get_parsed_content_icon with @torch.inference_mode().
# Class: inference / captioning helper run with grad enabled (batch loop over model.generate)
import torch
from torchvision.transforms import ToPILImage


def get_parsed_content_icon(filtered_boxes, ocr_bbox, image_source, caption_model_processor, prompt=None):  # leak: ANY
    to_pil = ToPILImage()
    non_ocr_boxes = filtered_boxes[len(ocr_bbox):] if ocr_bbox else filtered_boxes
    height, width = image_source.shape[0], image_source.shape[1]
    croped_pil_image = []
    for coord in non_ocr_boxes:
        xmin, xmax = int(coord[0] * width), int(coord[2] * width)
        ymin, ymax = int(coord[1] * height), int(coord[3] * height)
        croped_pil_image.append(to_pil(image_source[ymin:ymax, xmin:xmax, :]))

    model, processor = caption_model_processor["model"], caption_model_processor["processor"]
    is_florence = "florence" in model.config.name_or_path
    if not prompt:
        prompt = "<CAPTION>" if is_florence else "The image shows"

    batch_size = 10
    generated_texts = []
    device = model.device
    for start in range(0, len(croped_pil_image), batch_size):
        batch = croped_pil_image[start:start + batch_size]
        inputs = processor(images=batch, text=[prompt] * len(batch), return_tensors="pt")
        if device.type == "cuda":
            inputs = inputs.to(device=device, dtype=torch.float16)
        else:
            inputs = inputs.to(device=device)
        if is_florence:
            generated_ids = model.generate(  # leak: ANY
                input_ids=inputs["input_ids"],
                pixel_values=inputs["pixel_values"],
                max_new_tokens=1024,
                num_beams=3,
                do_sample=False,
            )
        else:
            generated_ids = model.generate(**inputs, max_length=100, num_beams=5, no_repeat_ngram_size=2)
        texts = processor.batch_decode(generated_ids, skip_special_tokens=True)
        generated_texts.extend(text.strip() for text in texts)
    return generated_texts
