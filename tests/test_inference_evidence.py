"""ML201's evidence that a forward pass is inference (issues 13, 18): eval mode, an inference
loop, a model that is not trained; what "grad maybe off" means to each rule; and where
nothing is held past the statement (test files, dry runs). Each case has its near miss."""

from __future__ import annotations

import textwrap

from memlint.static.source_check import check_source


def found(source: str, *codes: str, path: str = "train.py") -> list[tuple[int, str]]:
    codes = codes or ("ML101", "ML201")
    return [(f.line, f.code) for f in check_source(textwrap.dedent(source), path, codes) if f.code in codes]


def messages(source: str, code: str = "ML201", path: str = "train.py") -> list[str]:
    return [f.message for f in check_source(textwrap.dedent(source), path, [code]) if f.code == code]


# ----- grad from a flag is unknown, not off (issue 18) ----------------------------------------------
FLAG_EPOCH = """
import torch

def run_epoch(model, criterion, loader, optimizer, train):
    losses = []
    model.train(train)
    with torch.set_grad_enabled(train):
        for x, y in loader:
            loss = criterion(model(x), y)
            if train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            losses.append(loss)
    return sum(l.item() for l in losses) / len(losses)
"""


def test_under_a_grad_flag_a_leak_rule_reports_when_a_backward_pass_says_grad_is_on():
    assert found(FLAG_EPOCH) == [(14, "ML101")]


def test_under_a_grad_flag_without_a_backward_pass_nothing_is_claimed():
    # The reported shape: set_grad_enabled(model.grad_inference), eval(), losses collected.
    source = """
    import torch

    def evaluate(model, criterion, loader):
        losses = []
        with torch.set_grad_enabled(model.grad_inference):
            model.eval()
            for x, y in loader:
                losses.append(criterion(model(x), y))
        return torch.stack(losses).mean().item()
    """
    assert found(source) == []
    # the same with no flag at all is inference with grad on: the collected losses leak (ML101),
    # the forward pass is inference (ML201)
    assert found(source.replace("with torch.set_grad_enabled(model.grad_inference):", "if True:")) == [
        (9, "ML101"), (9, "ML201")]


def test_under_a_grad_flag_a_carried_hidden_state_with_an_optimizer_step_is_reported():
    source = """
    import torch

    def run_epoch(model, criterion, loader, optimizer, hidden, train):
        with torch.set_grad_enabled(train):
            for x, y in loader:
                output, hidden = model(x, hidden)
                loss = criterion(output, y)
                if train:
                    optimizer.zero_grad()
                    loss.backward(retain_graph=True)
                    optimizer.step()
    """
    assert found(source, "ML101", "ML102", "ML201") == [(7, "ML102")]
    detached = source.replace("output, hidden = model(x, hidden)", "output, hidden = model(x, hidden.detach())")
    assert found(detached, "ML101", "ML102", "ML201") == []
    # without retain_graph, a graph carried in the state of a model not seen here would fail the
    # second backward pass at once: the model cuts it, or the script stops at step 2; no leak
    freed = source.replace("loss.backward(retain_graph=True)", "loss.backward()")
    assert found(freed, "ML101", "ML102", "ML201") == []


def test_a_function_only_called_where_grad_may_be_off_keeps_findings_only_with_its_own_backward():
    source = """
    import torch

    def validate(model, loader):
        model.eval()
        return [model(x).argmax(1) for x in loader]

    def fit(model, loader, train):
        with torch.set_grad_enabled(train):
            validate(model, loader)
    """
    assert found(source) == []
    assert found(source.replace("with torch.set_grad_enabled(train):", "if train:")) == [(6, "ML201")]


# ----- inference without eval(): a loop that collects outputs, no backward, no optimizer ------------
PRETRAINED = """
import torch
from transformers import AutoModel

def embed(texts, tokenizer):
    model = AutoModel.from_pretrained("bert-base-uncased").cuda()
    vectors = []
    for batch in texts:
        out = model(**tokenizer(batch, return_tensors="pt").to("cuda"))
        vectors.append({kept})
    return {returned}
"""


def test_a_pretrained_model_whose_outputs_a_loop_collects_is_inference():
    source = PRETRAINED.format(kept="out.last_hidden_state[:, 0]", returned="torch.cat(vectors).cpu().numpy()")
    assert found(source) == [(9, "ML201")]
    assert messages(source) == ["'model' runs inference with grad on; 'vectors' keeps each step's graph"]


def test_inference_loop_near_misses():
    def clean(kept="out.last_hidden_state[:, 0]", returned="torch.cat(vectors).cpu().numpy()", extra=""):
        return found(PRETRAINED.format(kept=kept, returned=returned) + extra) == []

    # nothing kept with a graph: no collecting finding; but each forward records a graph the code
    # only reads detached, the waste ML201 reports as such (a direct ``out.detach()`` was reported alike)
    detached = PRETRAINED.format(kept="out.last_hidden_state[:, 0].detach().cpu()", returned="torch.cat(vectors).numpy()")
    assert messages(detached) == ["'model' runs with grad on, but its output is only read detached or as numbers"]
    assert clean(kept="out.last_hidden_state[:, 0].argmax(-1)")  # reduced per batch
    # handed back with its graph, to a caller that trains through it
    assert clean(returned="torch.cat(vectors)", extra="""
def train(texts, tokenizer, head, optimizer):
    loss = head(embed(texts, tokenizer)).sum()
    loss.backward()
    optimizer.step()
""")
    # backpropagated in the same function after the loop (REINFORCE-like)
    source = PRETRAINED.format(kept="out.last_hidden_state[:, 0]", returned="None").replace(
        "    return None", "    torch.stack(vectors).sum().backward()")
    assert found(source) == []


def test_a_sequence_built_in_a_forward_pass_is_not_inference():
    source = """
    import torch
    from torch import nn

    class Decoder(nn.Module):
        def forward(self, x, steps):
            outputs = []
            h = x
            for t in range(steps):
                h = self.cell(h)
                outputs.append(h)
            return torch.stack(outputs)
    """
    assert found(source) == []


# ----- models that are not trained, run inside a training step (issue 13) ----------------------------
def test_a_teacher_in_a_lightning_module_is_reported_unless_the_optimizer_holds_it():
    source = """
    import torch
    import torch.nn.functional as F
    import lightning as L

    class Distiller(L.LightningModule):
        def __init__(self, student, teacher):
            super().__init__()
            self.student = student
            self.teacher = teacher

        def training_step(self, batch, batch_idx):
            x, y = batch
            soft = self.teacher(x)
            logits = self.student(x)
            return F.kl_div(F.log_softmax(logits, -1), F.softmax(soft, -1), reduction="batchmean")

        def configure_optimizers(self):
            return torch.optim.AdamW(self.student.parameters(), lr=1e-4)
    """
    assert found(source) == [(14, "ML201")]
    assert "(named as a teacher model)" in messages(source)[0]
    # self.parameters() holds the teacher too: it is trained (on purpose or not), not this rule's case
    assert found(source.replace("self.student.parameters()", "self.parameters()")) == []
    # frozen where it is built, in another method
    assert found(source.replace("self.teacher = teacher", "self.teacher = teacher.requires_grad_(False)\n"
                                "        self.teacher.requires_grad_(False)")) == []


def test_a_model_that_only_provides_loss_targets_and_is_in_no_optimizer():
    source = """
    import torch
    import torch.nn.functional as F

    def train(backbone, aux_net, loader):
        optimizer = torch.optim.SGD(backbone.parameters(), lr=0.1)
        for images, labels in loader:
            features = backbone(images)
            hints = aux_net(images)
            loss = F.mse_loss(features, hints) + F.cross_entropy(features.mean((2, 3)), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """
    assert found(source) == [(9, "ML201")]
    assert "(a loss target only, in no optimizer)" in messages(source)[0]
    # the optimizer comes from the caller: nothing says aux_net is not trained
    assert found(source.replace("def train(backbone, aux_net, loader):", "def train(backbone, aux_net, loader, optimizer):")
                 .replace("        optimizer = torch.optim.SGD(backbone.parameters(), lr=0.1)\n", "")) == []
    # an input of the loss: trained through it
    assert found(source.replace("F.mse_loss(features, hints)", "F.mse_loss(hints, features)")) == []


def test_a_teacher_frozen_in_another_function_records_no_graph():
    # DINO: main() freezes the teacher's parameters, train_one_epoch() runs it without no_grad
    source = """
    import torch

    def main(student, teacher, loader, optimizer, dino_loss):
        for p in teacher.parameters():
            p.requires_grad = False
        train_one_epoch(student, teacher, loader, optimizer, dino_loss)

    def train_one_epoch(student, teacher, loader, optimizer, dino_loss):
        for images in loader:
            teacher_output = teacher(images[:2])
            student_output = student(images)
            loss = dino_loss(student_output, teacher_output)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """
    assert found(source) == []


# ----- where nothing is held past the statement (issue 13) --------------------------------------------
EVAL_CHECK = """
import torch

def test_logits_match(model, reference, x):
    model.eval()
    logits = model(x)
    assert torch.allclose(logits, reference(x))
"""


def test_eval_mode_forwards_in_test_files_are_quiet_unless_their_graphs_are_kept():
    assert found(EVAL_CHECK, path="tests/test_model.py") == []
    assert found(EVAL_CHECK, path="model_test.py") == []
    assert found(EVAL_CHECK, path="check_model.py") == [(6, "ML201")]
    # a test double of a framework method hands its graph back: still reported in a test file
    returned = """
    import torch
    from skorch import NeuralNet

    class MyNet(NeuralNet):
        def validation_step(self, batch):
            self.module_.eval()
            y_pred = self.module_(batch[0])
            return {"loss": self.criterion_(y_pred, batch[1]), "y_pred": y_pred}
    """
    assert found(returned, path="tests/test_net.py") == [(8, "ML201")]


def test_a_dry_run_whose_result_is_dropped_is_quiet():
    source = """
    import torch

    def export(model, example, path):
        model.eval()
        model(example)  # warm up
        torch.onnx.export(model, example, path)
    """
    assert found(source) == []
    assert found(source.replace("model(example)  # warm up", "out = model(example)\n        print(out.shape)")) == [
        (6, "ML201")]
    # inside a loop the graph of each call is dropped too, but the loop is real work: reported
    assert found(source.replace("model(example)  # warm up", "for _ in range(3):\n            model(example)")) == [
        (7, "ML201")]


def test_grad_cam_is_quiet_but_a_teacher_in_eval_mode_in_a_training_step_is_not():
    cam = """
    import torch

    def cam(model, head, image, class_idx):
        model.eval()
        features = model(image)
        features.retain_grad()
        score = head(features.mean((2, 3)))[0, class_idx] + text_prior(image)
        score.backward()
        return (features.grad.mean((2, 3), keepdim=True) * features).sum(1)
    """
    assert found(cam) == []
    training = """
    import torch
    import torch.nn.functional as F

    def train(teacher, student, loader):
        optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
        teacher.eval()
        for x, y in loader:
            loss = F.mse_loss(student(x), teacher(x))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """
    assert found(training) == [(9, "ML201")]
    assert "is not trained (in eval mode)" in messages(training)[0]


def test_a_smoke_test_on_made_up_inputs_is_quiet():
    # a model file's __main__ check: one forward on random inputs and literals, printed
    smoke = """
    import torch
    from torch import nn

    def _test_decoder():
        m = nn.TransformerDecoderLayer(16, 2)
        m.eval()
        memory = torch.randn(7, 2, 16)
        lengths = torch.full((2,), 7)
        out = m(torch.randn(5, 2, 16), memory)
        print(out.shape, lengths, [[1, 2], [3]])

    if __name__ == "__main__":
        _test_decoder()
    """
    assert found(smoke) == []
    # the same forward on a real input is evaluation with grad on
    assert found(smoke.replace("memory = torch.randn(7, 2, 16)", "memory = torch.load('memory.pt')")) == [(10, "ML201")]
    # and random inputs fed batch after batch are a pass, not a smoke test
    looped = """
    import torch
    from torch import nn

    def bench(m: nn.Module, steps):
        m.eval()
        outs = []
        for _ in range(steps):
            outs.append(m(torch.randn(64, 16)))
        return len(outs)
    """
    assert found(looped) == [(9, "ML201")]


def test_an_encoder_method_whose_outputs_leave_as_numpy_is_graph_unused():
    """``encode_sentences`` runs ``self.model`` with grad on and reads its output only through
    ``token_vectors.mean(dim=1).detach().cpu().numpy()``; what it returns is NumPy, carrying no
    graph: each forward records a graph for nothing (ML201). Under ``torch.no_grad()``: quiet."""
    source = """
    import numpy as np
    import torch

    class RepresentationModel:
        def __init__(self, model, tokenizer, device):
            self.model = model
            self.tokenizer = tokenizer
            self.device = device

        def encode_sentences(self, batches):
            embeddings = []
            for batch in batches:
                input_ids = self.tokenizer(batch, return_tensors="pt")["input_ids"].to(self.device)
                {guard}token_vectors = self.model(input_ids=input_ids)[0]
                embeddings.append(token_vectors.mean(dim=1).detach().cpu().numpy())
            return np.concatenate(embeddings)
    """
    assert found(source.format(guard="")) == [(15, "ML201")]
    guarded = source.format(guard="with torch.no_grad():\n                    ")
    assert found(guarded) == []


# ----- an eval-mode model whose output the loss needs (dataset distillation) -------------------------
DISTILLED = """
import torch
import torch.nn.functional as F


def distill(feature_model, loader, synthetic, optimizer, first, frozen_means):
    feature_model.eval()
    for inputs, targets in loader:
        optimizer.zero_grad()
        outputs = feature_model(synthetic[0])
        class_mean = torch.mean(outputs, dim=0)
        class_mean = {squeeze}
        if first:
            means = class_mean.unsqueeze(0)
        else:
            means = frozen_means.clone()
            means[-1:] = class_mean.unsqueeze(0)
        logits = F.linear(inputs, F.normalize(means, dim=1))
        loss = F.cross_entropy(logits, targets)
        loss.backward()
        optimizer.step()
"""


def test_an_eval_mode_output_that_reaches_the_loss_through_torch_shape_functions_and_branches_is_not_inference():
    """The synthetic images are the parameters being optimised: the eval-mode model's graph is
    what their gradient flows through. ``torch.squeeze(x)`` carries ``x``'s graph (its other
    arguments are dims), and a name bound in both branches of an ``if`` keeps both values."""
    for squeeze in ("torch.squeeze(class_mean)", "class_mean.squeeze()", "torch.reshape(class_mean, (-1,))"):
        assert found(DISTILLED.format(squeeze=squeeze), "ML201") == []
    # near miss: the output never reaches the loss (only a detached copy does)
    detached = DISTILLED.format(squeeze="torch.squeeze(class_mean)").replace(
        "torch.mean(outputs, dim=0)", "torch.mean(outputs.detach(), dim=0)")
    assert [line for line, _ in found(detached, "ML201")] == [10]


META_LEARNER = """
import torch
from torch import nn


class MetaLearner(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.optimizer = torch.optim.Adam(net.parameters())

    def forward(self, x, y):
        loss = nn.functional.mse_loss(self.net(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss


def main(loader, net):
    learner = MetaLearner(net).cuda()
    history = []
    for x, y in loader:
        loss = learner(x, y)
        history.append(loss.detach().cpu().item())
"""


def test_a_module_whose_forward_is_its_own_training_step_is_not_inference():
    """A meta-learner's ``forward`` backpropagates and steps its optimizer: calling it trains,
    whatever the caller reads of its output."""
    assert found(META_LEARNER, "ML201") == []
    # near miss: a forward that only computes (the caller reads the loss as a number)
    plain = META_LEARNER.replace("        self.optimizer.zero_grad()\n        loss.backward()\n        self.optimizer.step()\n", "")
    call_line = plain.splitlines().index("        loss = learner(x, y)") + 1
    assert [line for line, _ in found(plain, "ML201")] == [call_line]



MEAN_TEACHER = """
import torch
import torch.nn.functional as F


def train(loader, optimizer):
    model.train()
    for data, unsup in loader:
        optimizer.zero_grad()
        pred = model(unsup)
        teacher_pred = teacher_model(unsup)
        loss = F.mse_loss(model(data), data.y) + F.mse_loss(pred, teacher_pred)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    model = Net().cuda()
    teacher_model = Net().cuda()
    for param in teacher_model.parameters():
        param.detach_()
    train(loader, torch.optim.Adam(model.parameters()))
"""


def test_a_global_teacher_whose_parameters_the_script_detaches_is_frozen():
    """``param.detach_()`` on every parameter makes them stop requiring grad, as
    ``requires_grad_(False)`` does; the script does it after the function's definition."""
    assert found(MEAN_TEACHER, "ML201") == []
    kept = MEAN_TEACHER.replace("    for param in teacher_model.parameters():\n        param.detach_()\n", "")
    assert [line for line, _ in found(kept, "ML201")] == [11]
