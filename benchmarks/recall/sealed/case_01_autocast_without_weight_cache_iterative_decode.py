# Recall case 01 (sealed): mixed-precision step context turns the autocast weight cache off
# Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/21611
# Reported: after upgrading Lightning to 2.6, a training step that runs the same decoder many
#   times (iterative decoding) runs out of GPU memory with 16/bf16-mixed precision; 2.5 was fine.
# Confirmed cause: the reporter's bisection and the merged fix (PR #21616): the precision
#   plugin's autocast context was changed to `torch.autocast(..., cache_enabled=False)`; without
#   the cache every call re-casts the same fp32 weights to half precision, and since each cast
#   copy is saved for backward, a step that calls the module N times keeps N copies of the
#   weights. The fix restores the cached autocast path for step execution (clearing the cache
#   when a nested no_grad/inference_mode block exits).
# Class: autocast weight cache disabled around repeated calls to the same module in one step
import torch
import lightning.pytorch as pl


class MixedPrecision:
    def __init__(self, precision="bf16-mixed", device="cuda"):
        self.precision = precision
        self.device = device

    def autocast_context_manager(self) -> torch.autocast:
        dtype = torch.bfloat16 if self.precision == "bf16-mixed" else torch.half
        return torch.autocast(self.device, dtype=dtype, cache_enabled=False)  # leak: ANY

    def forward_context(self):
        return self.autocast_context_manager()


class IterativeDecoder(pl.LightningModule):
    def __init__(self, encoder, decoder, num_steps=64):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.num_steps = num_steps

    def training_step(self, batch, batch_idx):
        memory = self.encoder(batch["src"])
        state = batch["init_state"]
        losses = []
        for t in range(self.num_steps):
            state, logits = self.decoder(state, memory)
            losses.append(torch.nn.functional.cross_entropy(logits, batch["tgt"][:, t]))
        loss = torch.stack(losses).mean()
        self.log("train_loss", loss.detach())
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


def run_step(plugin: MixedPrecision, module: IterativeDecoder, batch, batch_idx, optimizer):
    with plugin.forward_context():
        loss = module.training_step(batch, batch_idx)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()
