# Thread: https://github.com/facebookresearch/pytext/pull/1367
# Reported: "I keep getting cuda oom in this load_best_model stage" at the end of training.
# Confirmed cause: load_best_model moved the saved best state dict to the GPU with
#   move_state_dict_to_gpu (which rewrites the dict in place, so state.best_model_state itself now
#   holds a full GPU copy of the weights) and then also called model.cuda(); "move_state_dict_to_gpu and
#   model.cuda() are not both needed ... it will double gpu memory". The landed fix loads the CPU state
#   dict directly and lets model.cuda() do the single move.
# Class: extra copy of the model kept on the GPU (best checkpoint state)
import torch

CUDA_ENABLED = torch.cuda.is_available()


class TrainingState:
    def __init__(self, model, optimizer, rank=0):
        self.model = model
        self.optimizer = optimizer
        self.rank = rank
        self.epoch = 0
        self.best_model_state = None
        self.best_model_metric = None
        self.epochs_since_last_improvement = 0


class Trainer:
    def move_state_dict_to_cpu(self, state_dict):
        for key, maybe_parameter in state_dict.items():
            if isinstance(maybe_parameter, torch.Tensor):
                state_dict[key] = maybe_parameter.cpu()
            else:
                self.move_state_dict_to_cpu(maybe_parameter)
        return state_dict

    def update_best_model(self, state, eval_metric):
        state.epochs_since_last_improvement = 0
        state.best_model_metric = eval_metric
        if state.rank != 0:
            return
        model_state = state.model.state_dict()
        # save to cpu to avoid multiple model copies in gpu memory
        if CUDA_ENABLED:
            self.move_state_dict_to_cpu(model_state)
        state.best_model_state = model_state

    def load_best_model(self, state):
        if CUDA_ENABLED:
            # move current model to CPU to avoid multiple models in GPU memory
            state.model.cpu()
            state.model.load_state_dict(state.best_model_state)
            # move model back to GPU
            state.model.cuda()
        else:
            state.model.load_state_dict(state.best_model_state)

    def train(self, train_iter, eval_iter, model, optimizer, evaluate, epochs):
        state = TrainingState(model, optimizer)
        for epoch in range(epochs):
            state.epoch = epoch
            model.train()
            for inputs, targets in train_iter:
                loss = model.get_loss(model(*inputs), targets)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                eval_metric = evaluate(model, eval_iter)
            if state.best_model_metric is None or eval_metric > state.best_model_metric:
                self.update_best_model(state, eval_metric)
            else:
                state.epochs_since_last_improvement += 1
        if state.best_model_state is not None:
            self.load_best_model(state)
        return state.model, state.best_model_metric
