# Recall case 06 (sealed4): feature extractor registers forward hooks on every call and never empties its handle list
# Thread: https://github.com/omerbt/Splice/issues/134
# Reported: running time per iteration and process RSS keep increasing from epoch to epoch
# Confirmed cause: _clear_hooks removed the handles but left them in self.hook_handlers, which grows by dozens of entries per feature call (and is walked on every clear); fixed by the merged PR #135 that empties the list
# Class: hooks registered per call; the handle list they are kept in is never cleared
import torch


class VitExtractor:
    BLOCK_KEY, ATTN_KEY, QKV_KEY = "block", "attn", "qkv"
    KEY_LIST = [BLOCK_KEY, ATTN_KEY, QKV_KEY]

    def __init__(self, model_name, device):
        self.model = torch.hub.load("facebookresearch/dino:main", model_name).to(device)
        self.model.eval()
        self.hook_handlers = []
        self.layers = list(range(12))
        self.outputs_dict = {key: [] for key in VitExtractor.KEY_LIST}

    def _init_hooks_data(self):
        self.outputs_dict = {key: [] for key in VitExtractor.KEY_LIST}

    def _register_hooks(self):
        for block_idx, block in enumerate(self.model.blocks):
            if block_idx in self.layers:
                self.hook_handlers.append(block.register_forward_hook(self._get_hook(VitExtractor.BLOCK_KEY)))  # leak: ANY
                self.hook_handlers.append(block.attn.attn_drop.register_forward_hook(self._get_hook(VitExtractor.ATTN_KEY)))  # leak: ANY
                self.hook_handlers.append(block.attn.qkv.register_forward_hook(self._get_hook(VitExtractor.QKV_KEY)))  # leak: ANY

    def _clear_hooks(self):
        for handler in self.hook_handlers:
            handler.remove()

    def _get_hook(self, key):
        def _hook(module, inp, output):
            self.outputs_dict[key].append(output)
        return _hook

    def get_feature_from_input(self, input_img):
        self._register_hooks()
        self.model(input_img)
        feature = self.outputs_dict[VitExtractor.BLOCK_KEY]
        self._clear_hooks()
        self._init_hooks_data()
        return feature

    def get_keys_self_sim_from_input(self, input_img, layer_num):
        self._register_hooks()
        self.model(input_img)
        qkv = self.outputs_dict[VitExtractor.QKV_KEY][layer_num]
        self._clear_hooks()
        self._init_hooks_data()
        b, n, _ = qkv.shape
        keys = qkv.reshape(b, n, 3, -1)[:, :, 1]
        keys = keys / keys.norm(dim=-1, keepdim=True)
        return keys @ keys.transpose(1, 2)


def train(generator, target_img, device="cuda", n_epochs=2000):
    extractor = VitExtractor("dino_vitb8", device)
    optimizer = torch.optim.Adam(generator.parameters(), lr=2e-3)
    target_keys = extractor.get_keys_self_sim_from_input(target_img, layer_num=11).detach()
    target_cls = extractor.get_feature_from_input(target_img)[-1][:, 0].detach()
    for epoch in range(n_epochs):
        out = generator(target_img)
        keys = extractor.get_keys_self_sim_from_input(out, layer_num=11)
        cls = extractor.get_feature_from_input(out)[-1][:, 0]
        loss = torch.nn.functional.mse_loss(keys, target_keys) + 0.1 * torch.nn.functional.mse_loss(cls, target_cls)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
