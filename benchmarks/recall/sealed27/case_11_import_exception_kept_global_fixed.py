# Thread: https://github.com/ModelCloud/GPTQModel/pull/1679
# Reported: after pipe.load_lora_weights(...) the refcount of a Flux transformer goes up and the
#   model's GPU memory is never released after `del`, gc.collect() and empty_cache().
# Confirmed cause: the kernel modules kept the caught ImportError itself in a module-level
#   variable; the exception holds its traceback, the traceback holds every frame of the call
#   stack that triggered the (lazy) import, and those frames hold the caller's model, so it can
#   never be freed. The merged fix stores str(e) instead of the exception object.
# Class: exception object (with traceback) kept past its except block
from typing import Optional, Tuple

import torch
import torch.nn as nn

marlin_import_exception = None
try:
    import gptqmodel_marlin_kernels
except ImportError as e:
    marlin_import_exception = str(e)


def _validate_marlin_device_support() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8


class MarlinQuantLinear(nn.Module):
    SUPPORTS_BITS = [4, 8]

    def __init__(self, bits: int, group_size: int, in_features: int, out_features: int, bias: bool = False):
        super().__init__()
        self.bits = bits
        self.group_size = group_size
        self.in_features = in_features
        self.out_features = out_features
        self.register_buffer("qweight", torch.empty((in_features // 16, out_features * 16 // (32 // bits)), dtype=torch.int32))
        self.register_buffer("scales", torch.empty((max(1, in_features // max(group_size, 1)), out_features), dtype=torch.float16))
        self.bias = nn.Parameter(torch.zeros(out_features, dtype=torch.float16)) if bias else None

    @classmethod
    def validate(cls, bits: int) -> Tuple[bool, Optional[Exception]]:
        if marlin_import_exception is not None:
            return False, ImportError(f"marlin kernels failed to import: {marlin_import_exception}")
        if bits not in cls.SUPPORTS_BITS:
            return False, NotImplementedError(f"bits={bits} not supported")
        if not _validate_marlin_device_support():
            return False, NotImplementedError("Marlin needs compute capability >= 8.0")
        return True, None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = gptqmodel_marlin_kernels.gptq_marlin_gemm(x, self.qweight, self.scales, self.bits)
        if self.bias is not None:
            out = out + self.bias
        return out
