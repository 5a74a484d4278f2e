# Recall case 30: saving an FSDP-trained model through trainer.model.state_dict()
# Thread: https://github.com/tatsu-lab/stanford_alpaca/issues/65
# Reported: CUDA OOM after the last epoch, while saving ("Failed to clone() tensor with name
#   lm_head.weight ... CUDA out of memory"), on 40 GB GPUs.
# Confirmed cause: `safe_save_model_for_hf_trainer` calls `trainer.model.state_dict()` on the
#   FSDP-wrapped model, which gathers the full parameters on the GPU of every rank; the fix that
#   worked offloads to the CPU on rank 0 only (`FSDP.state_dict_type(model, FULL_STATE_DICT,
#   FullStateDictConfig(offload_to_cpu=True, rank0_only=True))`).
# Class: FSDP full state dict gathered on every rank's GPU, through a Trainer wrapper
from dataclasses import dataclass, field

import transformers
from transformers import Trainer


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    cache_dir: str = field(default=None)
    model_max_length: int = field(default=512)


def safe_save_model_for_hf_trainer(trainer: Trainer, output_dir: str):
    """Collects the state dict and dumps it to disk."""
    state_dict = trainer.model.state_dict()  # leak: ML303
    if trainer.args.should_save:
        cpu_state_dict = {key: value.cpu() for key, value in state_dict.items()}
        del state_dict
        trainer._save(output_dir, state_dict=cpu_state_dict)


def train(model_name_or_path, data_module, output_dir):
    training_args = TrainingArguments(
        output_dir=output_dir, num_train_epochs=3, per_device_train_batch_size=4,
        gradient_accumulation_steps=8, learning_rate=2e-5, bf16=True,
        fsdp="full_shard auto_wrap", fsdp_transformer_layer_cls_to_wrap="LlamaDecoderLayer")
    model = transformers.AutoModelForCausalLM.from_pretrained(model_name_or_path, cache_dir=training_args.cache_dir)
    trainer = Trainer(model=model, args=training_args, **data_module)
    trainer.train()
    trainer.save_state()
    safe_save_model_for_hf_trainer(trainer=trainer, output_dir=training_args.output_dir)
