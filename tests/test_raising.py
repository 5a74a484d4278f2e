"""memlint.static.raising: which code always raises, read from the module alone."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.static.raising import find_raising_code, names_bound_nowhere


def dead_lines(source: str) -> list[str]:
    """The first line of each statement that never runs."""
    source = textwrap.dedent(source).lstrip()
    module = cst.parse_module(source)
    found = find_raising_code(module, source)
    return sorted(module.code_for_node(node).strip().splitlines()[0] for node in _statements(module)
                  if id(node) in found.dead_statements)


def _statements(module: cst.Module):
    stack = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BaseStatement):
            yield node
        stack.extend(node.children)


@pytest.mark.parametrize("source, unbound", [
    ("print(x)\n", {"x"}),
    ("x = 1\nprint(x)\n", set()),
    ("def f():\n    y = 1\nprint(y)\n", set()),  # bound in some scope: not certain
    ("def f():\n    global z\n    z = 1\nprint(z)\n", set()),
    ("try:\n    import apex\nexcept ImportError:\n    pass\nprint(apex)\n", set()),
    ("print(len([]), __file__, profile)\n", set()),  # builtins, module attributes, kernprof's @profile
    ("from x import *\nprint(y)\n", set()),  # unknown without the star import's names
    ("exec('w = 1')\nprint(w)\n", set()),
    ("print([v for v in range(3)])\n", set()),
])
def test_names_bound_nowhere(source, unbound):
    assert names_bound_nowhere(source) == frozenset(unbound)


def test_the_rest_of_the_block_after_a_name_bound_nowhere():
    assert dead_lines("""
        import os
        if os.environ.get("A"):
            files = os.listdir(missing)
            load(files)
            more(files)
        after()
    """) == ["load(files)", "more(files)"]


def test_names_read_only_on_some_paths_raise_nothing_for_sure():
    for expression in ("a or missing", "missing if a else b", "lambda: missing", "[missing for a in b]",
                       "a < b < missing"):
        assert dead_lines(f"a = b = 1\nx = {expression}\nafter()\n") == [], expression
    for expression in ("missing or a", "[a for a in missing]", "f'{missing}'", "{'k': missing}", "x[missing]"):
        assert dead_lines(f"a = x = 1\ny = {expression}\nafter()\n") == ["after()"], expression


@pytest.mark.parametrize("call, refused", [
    ("Encoder(1, 2)", True),  # a required parameter missing
    ("Encoder(1, 2, 3)", False),
    ("Encoder(1, 2, num_layers=3)", False),
    ("Encoder(1, 2, 3, 4, 5)", True),  # too many positional arguments
    ("Encoder(1, 2, 3, dim=2)", True),  # one parameter twice
    ("Encoder(1, 2, 3, width=4)", True),  # no such parameter
    ("Encoder(*args)", False),  # the count is unknown
    ("Encoder(1, **options)", False),
])
def test_a_call_that_cannot_fit_the_signature(call, refused):
    source = f"""
        args = options = ()

        class Encoder:
            def __init__(self, features, dim, num_layers, scale=1.0):
                self.dim = dim

        model = {call}
        after()
    """
    assert dead_lines(source) == (["after()"] if refused else [])


def test_signatures_that_cannot_be_trusted_are_not_read():
    # defined twice, decorated, or with star arguments: no certain TypeError
    for definition in ("def f(a):\n    pass\ndef f(a, b):\n    pass\n",
                       "@register\ndef f(a, b):\n    pass\n",
                       "def f(a, *rest):\n    pass\n"):
        assert dead_lines(f"register = print\n{definition}f(1, 2)\nafter()\n") == [], definition


def test_a_function_whose_body_raises_makes_its_callers_raise():
    assert dead_lines("""
        def build():
            prepare()
            return Missing()

        def check():
            if flag:
                return 1
            return Missing()

        flag = prepare = None
        first = second = print
        check()
        first()
        build()
        second()
    """) == ["second()"]


def test_a_class_whose_init_raises_is_never_made():
    source = textwrap.dedent("""
        class Net:
            def __init__(self):
                self.conv = GINConv()

            def relocate(self):
                pass

        class Plain:
            def __init__(self):
                self.conv = 1
    """)
    found = find_raising_code(cst.parse_module(source), source)
    assert found.classes_never_made == {"Net"}


COMMAND_LINE = """
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--dataname", type=str, default="adult")
    parser.add_argument("-g", "--gpu-index", type=int, default=0)
    parser.add_argument("steps", type=int)
    parser.add_argument("--lr", dest="learning_rate", type=float)
    group = parser.add_argument_group("extra")
    group.add_argument("--seed", type=int, default=0)
    {more}
    args = parser.parse_args()
    args.device = "cpu"

    def run(args):
        return args.anything

    if __name__ == "__main__":
        fields = (args.dataname, args.gpu_index, args.steps, args.learning_rate, args.seed, args.device)
        {read}
        after()
"""


def test_a_field_the_command_line_never_defines_raises():
    assert dead_lines(COMMAND_LINE.format(more="", read="epoch = args.epoch")) == ["after()"]
    assert dead_lines(COMMAND_LINE.format(more="", read="epoch = args.seed")) == []
    # set_defaults, an option added by a helper, or sub-commands may add fields unseen
    for more in ("parser.set_defaults(epoch=3)", "from options import add_model_args; add_model_args(parser)",
                 "commands = parser.add_subparsers()"):
        assert dead_lines(COMMAND_LINE.format(more=more, read="epoch = args.epoch")) == [], more


def test_a_function_whose_own_parameter_has_the_namespaces_name_is_not_read():
    source = COMMAND_LINE.format(more="", read="epoch = run(args)")
    assert dead_lines(source) == []


def test_a_raise_statement_ends_its_block_even_in_a_snippet():
    source = "def save(model):\n    raise RuntimeError('not supported')\n    model.save()\n"
    module = cst.parse_module(source)
    found = find_raising_code(module, source, complete=False)
    assert [module.code_for_node(n).strip() for n in _statements(module) if id(n) in found.dead_statements] \
        == ["model.save()"]
    # a snippet's undefined names are not read
    snippet = "model = Net()\nrun(model)\n"
    assert not find_raising_code(cst.parse_module(snippet), snippet, complete=False)


def test_a_class_called_through_its_metaclass_has_no_signature_to_read():
    source = """
        import enum

        class Mode(enum.Enum):
            TRAIN = (1, "train")

            def __init__(self, number, label):
                self.label = label

        mode = Mode((1, "train"))
        print(mode)
    """
    assert dead_lines(source) == []  # a member looked up by value, not __init__(number, label)
    assert dead_lines(source.replace("enum.Enum", "object")) == ["print(mode)"]


_BASE_AND_SUBCLASS = """
    class FlowDataset:
        def __init__(self, aug_params=None, sparse=False, input_frames=5):
            self.image_list = []

    class KITTICenter(FlowDataset):
        def __init__(self, aug_params=None, split="training", root="datasets/KITTI"):
            super().__init__(aug_params, sparse=True, kitti=True)
            for index in range(200):
                self.image_list.append([root, index])

    class Sintel(FlowDataset):
        def __init__(self, aug_params=None, root="datasets/Sintel"):
            super(Sintel, self).__init__(aug_params, input_frames=3)
            self.image_list.append(root)
"""


def test_super_init_with_a_keyword_the_base_cannot_take_always_raises():
    """KITTICenter's ``super().__init__(..., kitti=True)`` cannot fit FlowDataset.__init__: the
    rest of its __init__ never runs; Sintel's call fits."""
    assert dead_lines(_BASE_AND_SUBCLASS) == ["for index in range(200):"]


@pytest.mark.parametrize("change", [
    ("class FlowDataset:\n        def __init__(self, aug_params=None, sparse=False, input_frames=5):",
     "class FlowDataset:\n        def __init__(self, aug_params=None, sparse=False, input_frames=5, **kwargs):"),
    ("class KITTICenter(FlowDataset):", "class KITTICenter(FlowDataset, Mixin):"),  # another base's __init__ may run
    ("super().__init__(aug_params, sparse=True, kitti=True)", "super(FlowDataset, self).__init__(aug_params, kitti=True)"),
])
def test_super_init_that_may_fit_is_not_taken_to_raise(change):
    assert dead_lines(_BASE_AND_SUBCLASS.replace(*change)) == []
