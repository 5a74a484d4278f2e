# Thread: https://github.com/meta-pytorch/botorch/issues/1788 (fixed by https://github.com/meta-pytorch/botorch/pull/1890)
# Reported: building a variational GP (SingleTaskVariationalGP) again and again in a loop makes
#   GPU memory grow until OOM, even though each model is discarded; wrapping the model creation
#   in torch.no_grad() keeps memory flat.
# Confirmed cause: the inducing-point allocator evaluates the kernel matrix with autograd on and
#   hands it to the in-place pivoted-Cholesky routine; the maintainers' fix evaluates the kernel
#   under torch.no_grad() (the allocator's output is not differentiable anyway) and rejects a
#   kernel matrix that requires grad.
# Class: inference-only computation (kernel evaluation) run with grad enabled inside a library helper
import torch


def _pivoted_cholesky_init(train_inputs, kernel_matrix, max_length, epsilon=1e-6):
    item_size = kernel_matrix.shape[-2]
    cis = torch.zeros((max_length, item_size), device=kernel_matrix.device, dtype=kernel_matrix.dtype)
    di2s = kernel_matrix.diagonal()
    selected_items = []
    selected_item = torch.argmax(di2s)
    selected_items.append(selected_item)
    while len(selected_items) < max_length:
        k = len(selected_items) - 1
        ci_optimal = cis[:k, selected_item]
        di_optimal = torch.sqrt(di2s[selected_item])
        elements = kernel_matrix[..., selected_item, :]
        eis = (elements - torch.matmul(ci_optimal, cis[:k, :])) / di_optimal
        cis[k, :] = eis
        di2s = di2s - eis.pow(2.0)
        di2s[selected_item] = -float("inf")
        selected_item = torch.argmax(di2s)
        if di2s[selected_item] < epsilon:
            break
        selected_items.append(selected_item)
    ind_points = train_inputs[torch.stack(selected_items)]
    return ind_points[:max_length, :]


class GreedyVarianceReduction:
    def allocate_inducing_points(self, inputs, covar_module, num_inducing, input_batch_shape):
        train_train_kernel = covar_module(inputs).evaluate_kernel()  # leak: ANY
        inducing_points = _pivoted_cholesky_init(
            train_inputs=inputs,
            kernel_matrix=train_train_kernel,
            max_length=num_inducing,
        )
        return inducing_points


def create_gp_forward(allocator, covar_module, device):
    train_X = torch.rand(4096, 5, device=device)
    inducing = allocator.allocate_inducing_points(train_X, covar_module, 128, torch.Size([]))
    return inducing


if __name__ == "__main__":
    from gpytorch.kernels import MaternKernel, ScaleKernel

    device = "cuda" if torch.cuda.is_available() else "cpu"
    allocator = GreedyVarianceReduction()
    for _ in range(10000):
        kernel = ScaleKernel(MaternKernel()).to(device)
        create_gp_forward(allocator, kernel, device)
