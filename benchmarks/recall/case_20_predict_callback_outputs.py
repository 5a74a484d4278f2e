# Recall case 20: a prediction callback collects every batch's outputs and inputs on the GPU
# Thread: https://github.com/sktime/pytorch-forecasting/issues/2224
# Reported: `model.predict()` on CUDA: VRAM grows linearly across the inference run.
# Confirmed cause: `PredictCallback.on_predict_batch_end` appends each batch output (and x, y,
#   decoder lengths) to lists "without calling .detach() or .cpu()", so every prediction tensor
#   stays in VRAM until the epoch ends; merged fix (#2228) applies
#   `move_to_device(detach(...), "cpu")` at each append.
# Class: outputs kept on the device by a Lightning callback over the predict loop
from lightning.pytorch.callbacks import BasePredictionWriter, Callback


class PredictCallback(Callback):
    def __init__(self, mode="prediction", return_x=False, return_y=False):
        super().__init__()
        self.mode = mode
        self.return_x = return_x
        self.return_y = return_y
        self.predictions = []
        self.info = {"x": [], "y": [], "decoder_lengths": []}

    def on_predict_epoch_start(self, trainer, pl_module):
        self.predictions = []
        self.info = {"x": [], "y": [], "decoder_lengths": []}

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        processed_output = outputs["prediction"] if self.mode == "prediction" else outputs
        self.predictions.append(processed_output)  # leak: ML207
        if self.return_x:
            self.info["x"].append(x)
        if self.return_y:
            self.info["y"].append(y[0])
        self.info["decoder_lengths"].append(x["decoder_lengths"])

    def on_predict_epoch_end(self, trainer, pl_module):
        pl_module.collected_predictions = (self.predictions, self.info)
