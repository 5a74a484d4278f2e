# Recall case 43: fine-tuning BERT loaded with output_attentions=True
# Thread: https://github.com/huggingface/transformers/issues/9387
# Reported: the user asks what output_attentions=True costs in fine-tuning (GPU memory, batch size).
# Confirmed cause: the maintainer: with output_attentions=True "memory consumption should
#   increase significantly (for large sequence_length) since we now store all attentions of
#   size (batch_size, num_heads, sequence_length, sequence_length)" for every layer, which the
#   training step never uses (he adds that in training the stored activations dominate anyway:
#   a waste, not a leak).
# Class: training with output_attentions/output_hidden_states on a Hugging Face model
import pytorch_lightning as pl
import torch
from torch import nn
from transformers import BertModel


class BertClassifier(pl.LightningModule):
    def __init__(self, hparams):
        super().__init__()
        self.save_hyperparameters(hparams)
        self.bert_encoder = BertModel.from_pretrained(hparams.architecture, output_attentions=True)  # leak: ANY
        self.classifier = nn.Linear(self.bert_encoder.config.hidden_size, hparams.num_labels)
        self.loss = nn.CrossEntropyLoss()

    def forward(self, input_ids, attention_mask):
        outputs = self.bert_encoder(input_ids=input_ids, attention_mask=attention_mask)
        return self.classifier(outputs.pooler_output)

    def training_step(self, batch, batch_idx):
        logits = self(batch["input_ids"], batch["attention_mask"])
        loss = self.loss(logits, batch["labels"])
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
