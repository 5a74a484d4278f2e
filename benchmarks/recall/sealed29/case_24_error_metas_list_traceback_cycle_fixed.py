# Thread: https://github.com/pytorch/pytorch/pull/106328
# Reported: failing CUDA tests traced to reference cycles in the test suite: objects from
#   failed tensor comparisons stayed alive until the cyclic GC ran.
# Confirmed cause: the comparison helper collects ErrorMeta exceptions in a local list; each
#   ErrorMeta holds a traceback whose frame is this function's frame, whose local `error_metas`
#   refers back to the list, so list -> ErrorMeta -> traceback -> frame -> list is a cycle that
#   pins the frame's tensors. The merged fix stops the frame's local from referring to the
#   ErrorMeta objects on exit (wrap the list and pop it when returning).
# Class: caught exceptions kept in a container keep the failing frame (and its tensors) alive
import torch


class ErrorMeta(Exception):
    def __init__(self, type, msg, *, id=()):
        super().__init__(msg)
        self.type = type
        self.msg = msg
        self.id = id

    def to_error(self):
        return self.type(self.msg)


class TensorPair:
    def __init__(self, actual, expected, rtol=1.3e-6, atol=1e-5, id=()):
        self.actual = actual
        self.expected = expected
        self.rtol = rtol
        self.atol = atol
        self.id = id

    def compare(self):
        diff = (self.actual - self.expected).abs()
        tolerance = self.atol + self.rtol * self.expected.abs()
        if not torch.all(diff <= tolerance):
            raise ErrorMeta(AssertionError, f"Tensor-likes are not close! max diff {diff.max().item()}", id=self.id)


def not_close_error_metas(actual, expected, **options):
    pairs = [TensorPair(a, e, id=(i,), **options) for i, (a, e) in enumerate(zip(actual, expected))]
    error_metas = []
    for pair in pairs:
        try:
            pair.compare()
        except ErrorMeta as error_meta:
            error_metas.append(error_meta)
    # The ErrorMeta tracebacks refer to this frame; drop the frame's own reference to them.
    error_metas = [error_metas]
    return error_metas.pop()


def assert_close(actual, expected, **options):
    error_metas = not_close_error_metas(actual, expected, **options)
    if error_metas:
        raise error_metas[0].to_error()


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for _ in range(200):
        a = [torch.randn(2048, 2048, device=device) for _ in range(4)]
        b = [x + 1 for x in a]
        try:
            assert_close(a, b)
        except AssertionError:
            pass
