"""The static engine: one walk per file for all rules, with shared scope facts.

``FileChecker`` walks one parsed module with every rule, keeping the facts of
:mod:`memlint.static.facts` up to date as it goes; rules read them and report.

Speed matters (a pre-commit hook runs on every commit): the walk visits only fields that
hold code (no whitespace or punctuation nodes) and rebuilds nothing.
"""

from __future__ import annotations

import builtins
import dataclasses
import io
import os
import re
import tokenize
from collections import Counter, defaultdict
from typing import Callable, Iterable, Sequence

import libcst as cst

from memlint.static import facts as F
from memlint.static.frameworks import PLAIN, ClassKinds, external_kinds
from memlint.static.outline import PARAMETER_DEFAULT, only_called_by_name, resolve_relative
from memlint.static.raising import NOTHING, RaisingCode, find_raising_code, star_imports_in
from memlint.static.facts import (
    Binding, ClassInfo, ClassScope, Facts, FunctionScope, GradMode, Graph, GraphValue, Kind, Loop, ModeChange,
    NO_GRAPH, REBOUND, child_fields, dotted_name, names_in,
)
from memlint.static.rule import Report, Rule
from memlint.static.tensor_api import NN_MODULE_ATTRIBUTES
from memlint.static.summaries import (
    BACKWARD, COLLECTIVE, COMPUTES_LOSS, MODULE_CALL, MODULE_CODE, OPTIMIZER_STEP, PINS_ONE_GPU, PROCESS_GROUP,
    PROCESS_GROUP_ON_REQUEST, REPEATS_MODULE, SAVES_CPU_STATE, SAVES_CPU_WEIGHTS, SAVES_DEVICE_STATE,
    SAVES_DEVICE_WEIGHTS, SAVES_MODULE_STATE, SEES_ONE_GPU,
    SETS_DEVICE,
    USES_CURRENT_DEVICE,
    STEP_LOOP, STOPS_MEMORY_HISTORY,
    FunctionSummary, ModuleSummary,
)

# ``.name =`` or ``.name += `` (any augmented assignment), never ``.name ==``.
_ATTRIBUTE_STORE = re.compile(r"\.(\w+)\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)")


class FileChecker:
    """Checks one module: parse once, walk once, every rule together."""

    def __init__(self, path: str, source: str, rule_classes: Sequence[type[Rule]], project=None) -> None:
        self.path = path
        self.source = source
        module = project.file_of_path(path) if project is not None else None
        self.facts = Facts(project, module.name if module else "", module.is_package if module else False)
        self.rules = [rule_class(self) for rule_class in rule_classes]
        self.reports: list[tuple[Rule, Report]] = []
        self.failures: list[tuple[Rule, Exception]] = []  # rules that raised: reported as ML902
        self._failed_rules: set[Rule] = set()
        self._sites_for_callers: dict[str, list] | None = None  # see _sites_that_may_call
        # Every scope and loop of the file, kept alive until the file is done: rules key
        # records by id(function) / id(loop), and a freed one's id is reused by the next.
        self._alive: list[object] = []
        # the enclosing functions' region stacks (modes, and whether the code set each)
        self._saved_grad_modes: list[tuple[list[GradMode], list[bool]]] = []
        self._statement: list[cst.CSTNode] = []
        self._constants: dict[int, dict[str, object]] = {}  # id() of a scope -> F.constant_names of it
        self._device_holders: dict[tuple, object] = {}  # see _holds_only_a_device
        self._unrun: dict[int, bool] = {}  # id() of a top-level def or class -> see _never_run
        self._builds_names: bool | None = None  # see F.builds_attribute_names, asked once per file
        self._imported_by_name: bool | None = None  # see _never_run
        self._imported_by_nobody = False  # see _never_run
        self._in_an_unused_package: bool | None = None  # see _never_run
        self._module_nobody_imports: bool | None = None  # see _never_run
        self._fails_at_import: bool | None = None  # see _never_run
        self._raising: RaisingCode | None = None  # code after what always raises: see _raising_code
        self._constructor_flags: dict[tuple[str, str], tuple | None] = {}  # see _constructor_flag
        self._attribute_store_counts: Counter[str] | None = None  # see _attribute_stores
        self._saves_anything = "save" in source  # a call may hand torch.save a caller's state (SAVES_ARGUMENT)
        self._pending_saves: list[tuple[cst.Call, FunctionScope]] = []  # see _note_pending_saves
        self._flag_branches: list[tuple[cst.CSTNode, tuple]] = []  # see _note_constructor_flag_branch
        self._init_branches: list[tuple[cst.If, F.ClassInfo, str, int | None, object]] = []  # see _note_init_parameter_branch
        self._parameter_branches: list[tuple[cst.If, F.FunctionScope]] = []  # see _note_parameter_branch
        self._dead_nodes: frozenset[int] | None = None  # id() of every node of _raising_code's dead statements
        self._definition_nodes: dict[int, frozenset[int]] = {}  # id() of a top-level def -> its nodes' ids
        self._statement_code: dict[int, str] = {}  # id() of a top-level statement -> its code (top_level_naming)
        self._loop_callees: dict[int, list[object]] = {}  # id(loop) -> what its body calls (see _run_loop)
        self._assign_targets: list[frozenset[str]] = []
        self._visit: dict[type, list[Callable]] = defaultdict(list)
        self._leave: dict[type, list[Callable]] = defaultdict(list)
        for rule in self.rules:
            for attribute in dir(type(rule)):
                if attribute.startswith("visit_"):
                    node_type = getattr(cst, attribute[6:], None)
                    if node_type is not None:
                        self._visit[node_type].append(getattr(rule, attribute))
                elif attribute.startswith("leave_"):
                    node_type = getattr(cst, attribute[6:], None)
                    if node_type is not None:
                        self._leave[node_type].append(getattr(rule, attribute))
        self._special: dict[type, Callable[[cst.CSTNode], None]] = {
            cst.Import: self._import,
            cst.ImportFrom: self._import_from,
            cst.ClassDef: self._class,
            cst.FunctionDef: self._function,
            cst.Lambda: self._lambda,
            cst.For: self._for,
            cst.While: self._while,
            cst.With: self._with,
            cst.If: self._if,
            cst.Assign: self._assign,
            cst.AnnAssign: self._assign,
            cst.AugAssign: self._aug_assign,
            cst.Call: self._call,
            cst.Return: self._return,
            cst.Yield: self._yield,
            cst.SimpleStatementLine: self._statement_line,
        }

    def _result_names(self, call: cst.Call) -> frozenset[str]:
        """The names ``call``'s own result is bound to: the targets of the statement when the call
        is its whole value (``rgb = render(...)``), none when it sits inside another expression
        (``loss = loss_fn(render(...), y)`` binds the loss, not the render)."""
        statement = self._statement[-1] if self._statement else None
        if isinstance(statement, cst.SimpleStatementLine):
            statement = statement.body[0] if len(statement.body) == 1 else None
        # (``loss = step(...).to(device)``: moved or cast, still the call's result and its graph)
        if isinstance(statement, (cst.Assign, cst.AnnAssign)) and statement.value is not None \
                and F.without_self_returning_calls(statement.value) is call:
            return self.assign_targets
        return frozenset()

    # ----- API for rules ---------------------------------------------------------------------
    @property
    def assign_targets(self) -> frozenset[str]:
        """Names the statement being walked binds (when walking an assignment's value)."""
        return self._assign_targets[-1] if self._assign_targets else frozenset()

    def add_report(self, rule: Rule, node: cst.CSTNode, message: str, *, needs_grad: bool, fix, severity,
                   function=None, help: str | None = None) -> None:
        statement = self._statement[-1] if self._statement else None
        function = function if function is not None else self.facts.function
        self.reports.append((rule, Report(node, message, statement, function, needs_grad, fix, severity, help)))

    def defer(self, rule: Rule, callback: Callable[[], None], scope: F.Scope | None = None) -> None:
        """Run ``callback`` at the exit of the current function (or of ``scope``: the module
        scope for whole-module decisions), reporting against the statement being walked now.

        A decision at a function's exit that needs what a function further down returns
        (``facts.resolve`` raises ``Pending``) runs again at the end of the module, with the
        facts of its function in place."""
        statement = self._statement[-1] if self._statement else None
        facts = self.facts
        function = facts.function

        def run() -> None:
            if rule in self._failed_rules:
                return
            self._statement.append(statement)
            facts.deciding = True
            try:
                callback()
            except F.Pending:
                self.facts.module_scope.deferred.append(lambda: self._decide_later(function, run))
            except RecursionError:
                raise
            except Exception as exc:
                self._rule_failed(rule, exc)
            finally:
                facts.deciding = False
                self._statement.pop()

        (scope if scope is not None else function).deferred.append(run)

    def _decide_later(self, function: FunctionScope, run: Callable[[], None]) -> None:
        """Run a deferred decision of ``function`` at the end of the module (every summary
        known), as if the walk were leaving ``function`` again."""
        facts = self.facts
        saved = facts.scope, facts.grad_modes
        facts.scope, facts.grad_modes = function, [function.entry_grad_mode]
        try:
            run()
        finally:
            facts.scope, facts.grad_modes = saved

    # ----- running ----------------------------------------------------------------------------
    def run(self, module: cst.Module) -> list[Report]:
        """Walk ``module`` with every rule; return the reports kept after no-grad filtering."""
        self.module = module
        self.facts.module_node = module
        self._statement.append(module)
        self._find_plain_functions(module)
        self._index_definitions(module)
        if "args" in self.source or "cfg" in self.source or "opt" in self.source or "config" in self.source:
            # module-level numbers read from the configuration (``batch_size = args.batch_size`` under
            # ``if __name__ == "__main__":``), known before the functions that read them are decided
            self.facts.module_scope.configuration_names = F.bound_once_to(
                module, F.is_configuration_value,
                "global" in self.source or "nonlocal" in self.source, ":=" in self.source)
        self._walk_all(module.body)
        self._note_pending_saves()
        self.facts.module_done = True
        self._run_deferred(self.facts.module_scope)
        return self._filtered_reports()

    def _star_imported_names(self) -> frozenset[str] | None:
        """Every name this module's ``from x import *`` may bring in, through the project's modules
        (and their own star imports); None when one names a module outside the project."""
        if "import *" not in self.source:
            return frozenset()
        project = self.facts.project
        if project is None:
            return None
        names: set[str] = set()
        todo = [(self.facts.module_name, self.facts.is_package, written) for written in star_imports_in(self.source)]
        seen: set[str] = set()
        while todo:
            here, is_package, written = todo.pop()
            level = len(written) - len(written.lstrip("."))
            target = resolve_relative(here, is_package, level, written.lstrip(".") or None)
            if target is None or len(seen) > 8:
                return None
            if target in seen:
                continue
            seen.add(target)
            exported = project.star_exports(target)
            if exported is None:
                return None
            found, stars, target_is_package = exported
            names |= found
            todo.extend((target, target_is_package, more) for more in stars)
        return frozenset(names)

    def module_summary(self) -> ModuleSummary:
        """What this module's functions and methods do, for the other modules of the project
        (see :mod:`memlint.static.summaries`); call after :meth:`run`."""
        facts = self.facts
        summary = ModuleSummary(facts.module_name)
        facts.exporting = True
        try:
            stepping = {id(loop.scope) for loop in facts.loop_of_node.values() if F.whole_steps(loop)}
            for scope in (facts.module_scope, *facts.function_scopes.values()):
                key = MODULE_CODE if scope is facts.module_scope else facts.definition_keys.get(id(scope.node))
                if key is None:
                    continue  # a nested function: not reachable by name from another module
                returns = facts.resolve(facts.summaries.get(id(scope.node), NO_GRAPH))
                effects = set(scope.effects)
                if id(scope) in stepping:
                    effects.add(STEP_LOOP)  # a caller's loop around it runs whole passes (epochs)
                # what its nested functions and lambdas do, it does when it calls them
                for inner in facts.function_scopes.values():
                    if inner is not scope and _inside(inner, scope):  # (not what it does to its own parameters)
                        effects |= {effect for effect in inner.effects if not effect.startswith(_BY_POSITION)}
                summary.functions[key] = FunctionSummary(
                    returns=returns,
                    entry_grad_mode=scope.entry_grad_mode if scope.entry_grad_mode_explicit else None,
                    effects=frozenset(effects),
                    calls=tuple(sorted(scope.call_keys)),
                    stores=_exported_stores(scope, facts),
                    context_grad_mode=scope.enter_grad_mode if scope.name == "__enter__" else
                    F.agreed_grad_mode(scope.yield_grad_modes),
                    decorator_grad_mode=scope.decorator_grad_mode,
                    factory_grad_mode=scope.factory_grad_mode,
                    eval_returns=facts.resolve(facts.eval_summaries[id(scope.node)])
                    if id(scope.node) in facts.eval_summaries else None,
                )
            summary.call_sites = {
                name: tuple((site.mode, site.caller.name, site.inherited,
                             f"{facts.module_name}.{site.self_class}" if site.self_class and facts.module_name else "",
                             site.by_attribute)
                            for site in sites)
                for name, sites in facts.call_sites.items()
            }
            summary.literal_calls = {name: tuple(calls) for name, calls in facts.literal_calls.items()}
            summary.saved_files = dict(facts.saved_files)
        finally:
            facts.exporting = False
        return summary

    def _filtered_reports(self) -> list[tuple[Rule, Report]]:
        """Drop grad-dependent reports inside functions that are only called under no-grad;
        inside functions only called where grad may be off (``set_grad_enabled(flag)``), keep
        those of a function that runs a backward pass itself (grad is on there, at least
        sometimes)."""
        only_off, maybe_off = _callee_grad_modes(self.facts)
        kept = []
        for rule, report in self.reports:
            if rule in self._failed_rules:
                continue
            if self._never_run(report.node):
                continue
            if report.needs_grad:
                if _inside_function_of(report.function, only_off):
                    continue
                if _inside_function_of(report.function, maybe_off) and not getattr(report.function, "has_backward", False):
                    continue
                if self._only_called_without_grad_in_project(report.function):
                    continue
                if self._parameter_branches and self._in_a_branch_no_call_with_grad_takes(report):
                    continue
            kept.append((rule, report))
        return kept

    def _never_run(self, node: cst.CSTNode) -> bool:
        """Is ``node`` inside a top-level function or class that nothing in the project can run?
        Its own module names it only inside its definition (or inside other definitions nothing
        can run), it has no decorator (which may register it), the module looks nothing up by
        name (``globals()``, ``sys.modules``), and the module is imported by other modules of the
        project only by name, none of which, nor any configuration file, names it (see
        Project.imported_only_by_name, Project.named_elsewhere). A leftover generator class in a
        module the project imports one helper from: what would happen if it ran is not a finding.
        Likewise anything in a package folder of an unpackaged repository that nothing outside it
        imports (Project.in_a_package_nobody_imports), in a module of a package that nothing
        imports (Project.a_module_nobody_imports), in a module whose import certainly fails
        (Project.fails_at_import: its relative imports name modules or names the project does not
        have), and a method of a class whose ``__init__`` always raises (``memlint.static.raising``)."""
        if self._after_what_always_raises(node) or self._in_a_class_never_made(node) \
                or (self._flag_branches and self._in_a_branch_no_construction_takes(node)) \
                or (self._init_branches and self._in_an_init_branch_no_construction_takes(node)):
            return True
        project = self.facts.project
        if project is None or not self.facts.module_name or "globals()" in self.source or "sys.modules" in self.source:
            return False
        if self._in_a_method_nothing_calls(node):
            return True
        if self._in_an_unused_package is None:
            self._in_an_unused_package = project.in_a_package_nobody_imports(project.file_of_path(self.path))
        if self._in_an_unused_package:
            return True  # vendored code nothing imports (Project.in_a_package_nobody_imports)
        if self._module_nobody_imports is None:
            self._module_nobody_imports = project.a_module_nobody_imports(project.file_of_path(self.path))
        if self._module_nobody_imports:
            return True
        if self._fails_at_import is None:
            self._fails_at_import = project.fails_at_import(project.file_of_path(self.path)) is not None
        if self._fails_at_import:
            return True  # a stale module: its imports name what the project no longer has
        if self._imported_by_name is None:
            module = project.file_of_path(self.path)
            # imported by nobody: no other module can name what it defines
            self._imported_by_nobody = self._a_script_nobody_imports(module)
            self._imported_by_name = self._imported_by_nobody or project.imported_only_by_name(module) \
                or project.imported_for_its_names(module)
        if not self._imported_by_name:
            return False
        top = self._top_level_definition(node)
        if top is None:
            return False
        if id(top) not in self._unrun:
            self._unrun[id(top)] = self._unreachable(top)
        return self._unrun[id(top)]

    def _raising_code(self) -> RaisingCode:
        """What always raises in this module (see ``memlint.static.raising``), read only when a
        report asks: most modules report nothing, and the answer reads every statement."""
        if self._raising is None:
            project = self.facts.project
            # Only in a module joined to a repository: a snippet or an example leaves its names
            # undefined on purpose (``model(x)`` in a rule's example), a script being written has not
            # imported them yet.
            joined = project is not None and bool(self.facts.module_name) and not self.path.endswith(".ipynb") \
                and project.joined_to_the_project(project.file_of_path(self.path))
            self._raising = find_raising_code(self.module, self.source, self.path,
                                              self._star_imported_names() if joined else None, complete=joined)
        return self._raising

    def _after_what_always_raises(self, node: cst.CSTNode) -> bool:
        """Is ``node`` in a statement that runs only after one that always raises (see
        ``memlint.static.raising``)?"""
        dead = self._raising_code().dead_statements
        if not dead:
            return False
        if self._dead_nodes is None:
            self._dead_nodes = frozenset(id(n) for statement in self._statements_with_ids(dead)
                                         for n in F.descendants(statement))
        return id(node) in self._dead_nodes

    def _statements_with_ids(self, ids: set[int]) -> list[cst.CSTNode]:
        return [n for n in F.descendants(self.module) if id(n) in ids]

    def _in_a_class_never_made(self, node: cst.CSTNode) -> bool:
        """Is ``node`` in a method (not a static or class method) of a top-level class whose
        ``__init__`` always raises (``GINConv`` bound nowhere, a call that does not fit its
        callee), that no class of the project derives from? No instance of it ever exists."""
        never_made = self._raising_code().classes_never_made
        if not never_made:
            return False
        top = self._top_level_definition(node)
        if not isinstance(top, cst.ClassDef) or top.name.value not in never_made:
            return False
        method = next((statement for statement in F.block_statements(top.body)
                       if isinstance(statement, cst.FunctionDef) and id(node) in self._node_ids(statement)), None)
        if method is None or method.name.value == "__init__" or any(
                (F.dotted_name(d.decorator) or "").rsplit(".", 1)[-1] in ("staticmethod", "classmethod")
                for d in method.decorators):
            return False
        project = self.facts.project
        return project is None or not self.facts.module_name \
            or not project.subclassed_elsewhere(top.name.value, project.file_of_path(self.path))

    def _in_a_method_nothing_calls(self, node: cst.CSTNode) -> bool:
        """Is ``node`` in a method of a plain class (no base but ``object``, or only the project's
        own classes: no framework calls its methods by name) of a repository not packaged for
        others, that no code of the repository can reach: no ``.name`` on anything but an
        imported module (``torch.load`` is not ``gan.load``), no other mention of the name (a
        string for ``getattr``, a callback), no decorator, and no configuration file naming it? A
        GAN's ``load()`` nothing calls."""
        top = self._top_level_definition(node)
        if self._builds_names is None:
            self._builds_names = F.builds_attribute_names(self.source)
        if not isinstance(top, cst.ClassDef) or top.decorators or self._builds_names \
                or any(arg.keyword is not None for arg in top.bases):
            return False
        method = next((statement for statement in F.block_statements(top.body)
                       if isinstance(statement, cst.FunctionDef) and id(node) in self._node_ids(statement)), None)
        if method is None or method.decorators or method.name.value.startswith("__"):
            return False
        if not self._only_project_bases(top, module_may_be_base=method.name.value not in NN_MODULE_ATTRIBUTES):
            return False
        key = id(method)
        if key not in self._unrun:
            project = self.facts.project
            self._unrun[key] = project.unpackaged() and not project.reachable_by_name(
                method.name.value, project.file_of_path(self.path))
        return self._unrun[key]

    def _only_project_bases(self, top: cst.ClassDef, module_may_be_base: bool = False) -> bool:
        """Is every base of the class, through its ancestors, ``object``, ``abc.ABC`` or a class
        of the project (``DQNWorker(DistributedWorker)``)? No framework then calls its methods by
        name: only the project's code can, which ``reachable_by_name`` reads. ``module_may_be_base``:
        ``torch.nn.Module`` counts too (for a method by a name torch never calls: not one of its
        attributes, see ``NN_MODULE_ATTRIBUTES``)."""
        if all(dotted_name(arg.value) in ("object", None) for arg in top.bases):
            return True
        project = self.facts.project
        if project is None or not self.facts.module_name:
            return False
        for base in project.ancestors(f"{self.facts.module_name}.{top.name.value}"):
            if base in ("object", "builtins.object", "abc.ABC"):
                continue
            if module_may_be_base and base in ("torch.nn.Module", "torch.nn.modules.module.Module"):
                continue
            definition = project.definition(base)
            if definition is None or definition.class_outline is None:
                return False  # a framework's class, or a base that names nothing known
        return True

    def _node_ids(self, definition: cst.CSTNode) -> frozenset[int]:
        ids = self._definition_nodes.get(id(definition))
        if ids is None:
            ids = self._definition_nodes[id(definition)] = frozenset(id(n) for n in F.descendants(definition))
        return ids

    def _a_script_nobody_imports(self, module) -> bool:
        """Is the module a program (a top-level ``if __name__ == "__main__":`` block, or a top-level
        statement that parses the command line), outside any package (no ``__init__.py`` beside
        it), that no module of the project imports? What it defines runs only if it calls it."""
        if module.is_package or os.path.exists(os.path.join(os.path.dirname(self.path), "__init__.py")):
            return False
        if not any(_is_main_guard(statement) or _parses_the_command_line(statement) for statement in self.module.body):
            return False
        return self.facts.project.imported_by_nobody(module)

    def _top_level_definition(self, node: cst.CSTNode) -> "cst.FunctionDef | cst.ClassDef | None":
        """The top-level ``def`` or ``class`` ``node`` is in (None: module-level code)."""
        key = id(node)
        for statement in self.module.body:
            if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                continue
            ids = self._definition_nodes.get(id(statement))
            if ids is None:
                ids = self._definition_nodes[id(statement)] = frozenset(id(n) for n in F.descendants(statement))
            if key in ids:
                return statement
        return None

    def _unreachable(self, node: "cst.FunctionDef | cst.ClassDef", _seen: frozenset[int] = frozenset()) -> bool:
        """Named in its own module only inside its own definition or inside other top-level
        definitions that nothing can run either (``ResnetGenerator`` built only by a
        ``define_G`` nothing calls), undecorated, and named by no other module."""
        name = node.name.value
        if node.decorators or len(_seen) > 8:
            return False
        seen = _seen | {id(node)}
        for statement in self.top_level_naming(name):
            if statement is node or id(statement) in seen:
                continue
            if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                if self._named_only_where_nothing_runs(statement, name) or self._bound_to_an_alias_nobody_names(statement):
                    continue
                return False  # named by module-level code, which runs on import
            if not self._unreachable(statement, seen):
                return False
        project = self.facts.project
        module = project.file_of_path(self.path)
        return self._imported_by_nobody or not project.named_elsewhere(name, module) \
            or not project.taken_from_elsewhere(name, module)

    def _bound_to_an_alias_nobody_names(self, statement: cst.BaseStatement) -> bool:
        """Is ``statement`` ``alias = <attribute of the definition>`` (``featuregather =
        FeatureGather.apply``) whose alias nothing names: no other statement of the module, and
        no other module or configuration file? Binding it runs nothing of the definition."""
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1):
            return False
        assign = statement.body[0]
        target = assign.targets[0].target
        if not isinstance(target, cst.Name) or not isinstance(assign.value, (cst.Attribute, cst.Name)):
            return False
        if any(other is not statement for other in self.top_level_naming(target.value)):
            return False
        project = self.facts.project
        module = project.file_of_path(self.path)
        return self._imported_by_nobody or not project.named_elsewhere(target.value, module) \
            or not project.taken_from_elsewhere(target.value, module)

    def _named_only_where_nothing_runs(self, statement: cst.BaseStatement, name: str) -> bool:
        """Does ``statement`` name ``name`` only in code after a statement that always raises
        (``test(test_loader)`` after ``model = Net()`` whose ``__init__`` raises TypeError)?"""
        dead = self._raising_code().dead_statements
        if not dead:
            return False
        names = []
        inside_dead: set[int] = set()
        stack = [(statement, False)]
        while stack:
            current, is_dead = stack.pop()
            is_dead = is_dead or id(current) in dead
            if type(current) is cst.Name and current.value == name:
                names.append(current)
                if is_dead:
                    inside_dead.add(id(current))
            stack.extend((child, is_dead) for child in F.expression_children(current))
        return bool(names) and len(inside_dead) == len(names)

    def top_level_naming(self, name: str) -> list[cst.BaseStatement]:
        """The module's top-level statements whose code names ``name`` as a whole word (in a
        definition's body, a call, a string alike): who in the module may refer to it."""
        pattern = re.compile(rf"\b{re.escape(name)}\b")
        found = []
        for statement in self.module.body:
            code = self._statement_code.get(id(statement))
            if code is None:
                code = self._statement_code[id(statement)] = _without_comments(self.module.code_for_node(statement))
            if pattern.search(code):
                found.append(statement)
        return found

    def _only_called_without_grad_in_project(self, function: object) -> bool:
        """Is ``function`` (or a function it is nested in) only called with grad off by the
        other modules of the project (``RunnerBase.eval_epoch``, decorated ``@torch.no_grad()``,
        calling ``task.evaluation(...)``, which calls ``model.compute_sim_matrix(...)``)?"""
        project = self.facts.project
        if project is None:
            return False
        here = project.file_of_path(self.path)
        facts = self.facts
        if self._sites_for_callers is None:  # the module's calls are complete when reports are filtered
            self._sites_for_callers = _sites_that_may_call(facts)
        sites = self._sites_for_callers
        return any(scope is not facts.module_scope and not scope.has_backward
                   and project.only_called_without_grad(
                       scope.name, here, sites, plain=F.method_owner(scope) is None and scope.parent is facts.module_scope,
                       owner=f"{facts.module_name}.{owner}" if (owner := F.method_owner(scope)) and facts.module_name
                       else "",
                       local_related=(lambda self_class, owner=F.method_owner(scope): owner is None or F.related_classes(
                           owner, self_class, facts.local_ancestors)))
                   for scope in _enclosing_functions(function))

    def _run_deferred(self, scope: F.Scope) -> None:
        while scope.deferred:
            callbacks, scope.deferred = scope.deferred, []
            for callback in callbacks:
                callback()

    # ----- the walk ---------------------------------------------------------------------------
    def _walk(self, node: cst.CSTNode) -> None:
        node_type = type(node)
        special = self._special.get(node_type)
        if special is not None:
            special(node)
            return
        visits = self._visit.get(node_type)
        if visits:
            self._call_rules(visits, node)
        # The children that hold code, in field order (inlined: this is the hot path).
        fields = F._CHILD_FIELDS.get(node_type)
        if fields is None:
            fields = child_fields(node_type)
        if fields:
            walk = self._walk
            kinds = F.VALUE_KIND
            for name in fields:
                value = getattr(node, name)
                kind = kinds.get(type(value))
                if kind is None:
                    kind = F.value_kind(type(value))
                if kind == 1:
                    walk(value)
                elif kind == 2:
                    for item in value:
                        kind = kinds.get(type(item))
                        if kind == 1 or (kind is None and F.value_kind(type(item)) == 1):
                            walk(item)
        leaves = self._leave.get(node_type)
        if leaves:
            self._call_rules(leaves, node)

    def _enter(self, node: cst.CSTNode) -> None:
        visits = self._visit.get(type(node))
        if visits:
            self._call_rules(visits, node)

    def _exit(self, node: cst.CSTNode) -> None:
        leaves = self._leave.get(type(node))
        if leaves:
            self._call_rules(leaves, node)

    def _call_rules(self, callbacks: list[Callable], node: cst.CSTNode) -> None:
        for callback in callbacks:
            try:
                callback(node)
            except RecursionError:
                raise
            except Exception as exc:
                self._rule_failed(callback.__self__, exc)

    def _rule_failed(self, rule: Rule, exc: Exception) -> None:
        """A bug in one rule: disable that rule for this file and report ML902 naming it."""
        self.failures.append((rule, exc))
        for table in (self._visit, self._leave):
            for callbacks in table.values():
                callbacks[:] = [cb for cb in callbacks if cb.__self__ is not rule]
        self.reports = [(r, report) for r, report in self.reports if r is not rule]
        self._failed_rules.add(rule)

    def _walk_all(self, nodes: Iterable[cst.CSTNode]) -> None:
        for node in nodes:
            self._walk(node)

    def _walk_block(self, block: cst.BaseSuite) -> None:
        if isinstance(block, cst.IndentedBlock):
            self._walk_all(block.body)
        else:
            self._walk(block)

    # ----- statements with scope facts ---------------------------------------------------------
    def _statement_line(self, node: cst.SimpleStatementLine) -> None:
        self._statement.append(node)
        self._enter(node)
        for small in node.body:
            self._walk(small)
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                self._grad_mode_statement(small.value)
        self._exit(node)
        self._statement.pop()

    def _grad_mode_statement(self, call: cst.Call) -> None:
        """``torch.set_grad_enabled(False)`` as a statement: grad is off from here to the end
        of the enclosing block (or until ``set_grad_enabled(True)``). ``torch.no_grad()`` alone
        on a line does nothing."""
        if self.facts.qualified_name(call.func) in F.SET_GRAD_ENABLED:
            mode = grad_mode_of(call, self.facts)
            if mode is not None:
                self.facts.grad_modes[-1] = mode
                self.facts.grad_mode_explicit[-1] = True
                self._note_entered_grad_mode(mode)
        elif type(call.func) is cst.Attribute and call.func.attr.value == "__enter__" and not call.args:
            # self.no_grad_context.__enter__() with no_grad_context = torch.no_grad()
            receiver = dotted_name(call.func.value)
            binding = self.facts.lookup(receiver) if receiver is not None else None
            entered = binding.node if binding is not None else call.func.value
            mode = grad_mode_of(entered, self.facts) if isinstance(entered, cst.BaseExpression) else None
            if mode is not None:
                self._note_entered_grad_mode(mode)

    def _note_entered_grad_mode(self, mode: GradMode) -> None:
        """An ``__enter__`` method sets ``mode`` for what follows it: the mode ``with`` an
        instance of its class runs its block in (MAYBE_OFF when set under a branch only)."""
        function = self.facts.function
        if function.name != "__enter__" or function.class_info is None:
            return
        if len(self.facts.branch_path) > function.branch_depth:
            mode = GradMode.MAYBE_OFF  # if self.no_grad: ...
        function.enter_grad_mode = mode if function.enter_grad_mode in (None, mode) else GradMode.MAYBE_OFF

    def _mode_set_as_made(self, target: str | None, value: cst.BaseExpression) -> None:
        """``model = Net().to(device).eval()``: the mode a chain of self-returning calls leaves the
        module in, as if ``model.eval()`` followed (the last mode change in the chain wins)."""
        function = self.facts.function
        if target is None or function is None:
            return
        root = target.split(".", 1)[0] if not target.startswith("self.") else target
        if any(change.target == target for change in function.mode_changes) \
                and root not in names_in(value) and target not in (F.dotted_name(n) for n in F.descendants(value)):
            # net.eval(); del net; net = Model(): another object, in its own (training) mode
            function.mode_changes.append(ModeChange(target, REBOUND, value, tuple(self.facts.branch_path),
                                                    tuple(id(loop.node) for loop in self.facts.loops_in_function())))
        mode = None
        node = value
        while type(node) is cst.Call and type(node.func) is cst.Attribute \
                and node.func.attr.value in F.SELF_RETURNING_METHODS:
            mode = mode or _mode_change(node.func.attr.value, node)
            node = node.func.value
        if mode is not None:
            function.mode_changes.append(ModeChange(target, mode, value, tuple(self.facts.branch_path),
                                                    tuple(id(loop.node) for loop in self.facts.loops_in_function())))

    def _off_by_default(self) -> bool:
        """Is the walk in a branch of the current function that its parameters' literal
        defaults turn off (the body of ``if local_rank >= 0:`` in ``def run(..., local_rank=-1)``)?
        It runs only for a caller that passes another value."""
        function = self.facts.function
        if not isinstance(function.node, cst.FunctionDef):
            return False
        defaults = F.literal_defaults(function.node)
        if not defaults:
            return False
        for key, branch in self.facts.branch_path:
            node = self.facts.if_nodes.get(key)
            value = F.value_with_defaults(node.test, defaults) if node is not None else F.NOT_A_LITERAL
            if value is not F.NOT_A_LITERAL and value == (branch == "else"):
                return True
        return False

    def _if(self, node: cst.If) -> None:
        """Branches are tracked so that a mode change in one branch is not taken as
        certain after the ``if`` (``model.train() if training else model.eval()``)."""
        facts = self.facts

        facts.if_nodes[id(node)] = node

        def body() -> None:
            self._walk(node.test)
            # a branch a constant test turns off never runs: it is not walked (no facts, no findings)
            taken = self._constant_branch(node.test)
            if taken is None and "self." in self.source:
                self._note_constructor_flag_branch(node)
                self._note_init_parameter_branch(node)
            if taken is None:
                self._note_parameter_branch(node)
                if "device_count" in self.source and _exits_when_many_gpus(node, facts, self.module):
                    # if torch.cuda.device_count() > 1: sys.exit(): past this, the program sees one GPU
                    # (asked only of a module that names the count: the guard may read a name bound to
                    # it, which means a walk of the scope's assignments)
                    facts.function.effects.update((SEES_ONE_GPU, PINS_ONE_GPU))
            if taken is not False:
                facts.branch_path.append((id(node), "body"))
                narrowed = self._narrow_in_branch(node.test)
                self._walk_block(node.body)
                if narrowed is not None:
                    self._widen_after_branch(*narrowed)
                facts.branch_path.pop()
            if node.orelse is not None and taken is not True:
                facts.branch_path.append((id(node), "else"))
                if isinstance(node.orelse, cst.If):
                    self._if(node.orelse)
                else:
                    self._walk_block(node.orelse.body)
                facts.branch_path.pop()
            self._narrow_after_tensor_guard(node)

        self._compound(node, body)

    def _rows_of_a_local_tensor(self, iterable: cst.BaseExpression) -> bool:
        """``for turn, row in enumerate(rows)`` with ``rows = context.unsqueeze(1)`` bound once in this
        function: the loop walks the rows of one tensor (the parts of one value), one per batch item."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
                and iterable.func.value in ("enumerate", "reversed") and len(iterable.args) >= 1:
            iterable = iterable.args[0].value
        if not isinstance(iterable, cst.Name):
            return False
        values = self.facts.function.stored_values.get(iterable.value, ())
        return len(values) == 1 and isinstance(values[0], cst.Call) and isinstance(values[0].func, cst.Attribute) \
            and values[0].func.attr.value in _ROW_VIEWS

    def _narrow_after_tensor_guard(self, node: cst.If) -> None:
        """``if torch.is_tensor(loss): break`` (or ``return`` / ``continue`` / ``raise``): after the
        ``if``, ``loss`` is no tensor, so it carries no graph (a NaN path hands back the loss,
        every other path a number)."""
        if node.orelse is not None or not _always_leaves(node.body):
            return
        tested = self.facts.tensor_test(node.test)
        if tested is None or not tested[1] or "." in tested[0]:
            return
        bindings = self.facts.scope.bindings
        binding = bindings.get(tested[0])
        if binding is not None and binding.kind is not Kind.MODULE:
            bindings[tested[0]] = dataclasses.replace(binding, graph=F.NO_GRAPH)

    def _narrow_in_branch(self, test: cst.BaseExpression) -> tuple[str, F.Binding, F.Binding] | None:
        """``if isinstance(x, np.ndarray): return x`` / ``if type(x) == float:``: in the branch, ``x``
        is no tensor, so it carries no graph (a helper that hands an array back as it is and
        converts a tensor otherwise). The name, the binding it had and the one put in its place."""
        name = self.facts.non_tensor_test(test)
        if name is None:
            return None
        bindings = self.facts.scope.bindings
        binding = bindings.get(name)
        if binding is None or binding.kind is Kind.MODULE:
            return None
        narrowed = bindings[name] = dataclasses.replace(binding, graph=F.NO_GRAPH)
        return name, binding, narrowed

    def _widen_after_branch(self, name: str, before: F.Binding, narrowed: F.Binding) -> None:
        bindings = self.facts.scope.bindings
        if bindings.get(name) is narrowed:  # not rebound in the branch
            bindings[name] = before

    def _constant_branch(self, test: cst.BaseExpression) -> bool | None:
        """Is an ``if`` test always true or always false (see F.constant_test)? The function's
        bindings are counted only when a name of the test is bound, so far, to a literal."""
        literal = F.literal_value(test)
        if literal is not F.NOT_A_LITERAL:
            return bool(literal)
        if isinstance(test, cst.BooleanOperation):
            # ``if True or is_train:`` / ``if False and x:``: the literal side decides alone
            decided = _short_circuit(test)
            if decided is not None:
                return decided
        if "device" in self.source:
            compared = self._device_compared_to_string(test)
            if compared is not None:
                return compared
        bindings = self.facts.function.bindings
        if not any(name in bindings and isinstance(bindings[name].node, cst.BaseExpression)
                   and F.literal_value(bindings[name].node) is not F.NOT_A_LITERAL
                   for name in F.names_in(test)):
            return None
        return F.constant_test(test, self._constant_names())

    def _note_constructor_flag_branch(self, node: cst.If) -> None:
        """``if self.iter_opt: ... else: ...`` in a method of a class whose ``__init__`` stores a
        parameter with a literal default (``self.iter_opt = iter_opt``, ``iter_opt=True``) that
        nothing else in the module assigns: note the branch the default turns off. Whether any
        construction in the project passes the parameter is read only when a report falls in that
        branch (``_in_a_branch_no_construction_takes``)."""
        function = self.facts.function
        info = function.class_info if function is not None else None
        if info is None or self.facts.project is None or not self.facts.module_name:
            return
        attributes = _flag_attributes(node.test)
        if not attributes:
            return
        constants, flags = {}, []
        for attribute in attributes:
            flag = self._constructor_flag(info, attribute[5:])
            if flag is None:
                return
            constants[attribute] = flag[1]
            flags.append((info.name, flag[0], flag[2], attribute[5:]))
        taken = F.constant_test(node.test, constants) if constants else None
        off = node.body if taken is False else node.orelse if taken is True else None
        if off is not None:
            self._flag_branches.append((off, tuple(flags)))

    def _note_init_parameter_branch(self, node: cst.If) -> None:
        """``if parallel:`` in ``__init__`` of a class, testing only one of its parameters, which has a
        literal default and is never rebound there: which branch runs is each construction's choice.
        Read only when a report falls in one (``_in_an_init_branch_no_construction_takes``)."""
        function = self.facts.function
        info = function.class_info if function is not None else None
        if info is None or function.name != "__init__" or not isinstance(function.node, cst.FunctionDef) \
                or self.facts.project is None or not self.facts.module_name:
            return
        names = F.names_in(node.test)
        if len(names) != 1:
            return
        parameter = next(iter(names))
        flag = _literal_parameter(function.node, parameter)
        if flag is not None:
            self._init_branches.append((node, info, parameter, flag[1], flag[0]))

    def _in_an_init_branch_no_construction_takes(self, node: cst.CSTNode) -> bool:
        """Is ``node`` in a branch of such an ``if`` (see ``_note_init_parameter_branch``) that every
        construction of the class in the repository turns off, each passing the parameter a literal
        or leaving it at its default (``Wrapper(model, parallel=False)``, the only one), when
        nothing subclasses the class (``Project.literals_passed``)? It never runs."""
        project = self.facts.project
        for branch, info, parameter, index, default in self._init_branches:
            if id(node) in self._node_ids(branch.body):
                wanted = False  # the body runs only if the test is true: never, when every value makes it false
            elif branch.orelse is not None and id(node) in self._node_ids(branch.orelse):
                wanted = True
            else:
                continue
            values = project.literals_passed(info.name, parameter, index, project.file_of_path(self.path))
            if values is None or not values:
                continue
            if all(F.constant_test(branch.test, {parameter: default if value is PARAMETER_DEFAULT else value}) is wanted
                   for value in values):
                return True
        return False

    def _constructor_flag(self, info: F.ClassInfo, attribute: str) -> tuple[str, object, int | None] | None:
        """(parameter, its literal default, its position after ``self``) when ``__init__`` stores
        ``self.<attribute>`` from that parameter and the module assigns the attribute nowhere else."""
        key = (info.name, attribute)
        if key not in self._constructor_flags:
            self._constructor_flags[key] = self._find_constructor_flag(info, attribute)
        return self._constructor_flags[key]

    def _attribute_stores(self, attribute: str) -> int:
        """How many times the module's text assigns ``<anything>.<attribute>`` (``=`` or an
        augmented assignment); one scan of the text per file, whatever the attribute."""
        if self._attribute_store_counts is None:
            self._attribute_store_counts = Counter(_ATTRIBUTE_STORE.findall(self.source))
        return self._attribute_store_counts[attribute]

    def _find_constructor_flag(self, info: F.ClassInfo, attribute: str) -> tuple[str, object, int | None] | None:
        if "setattr(" in self.source or "__dict__" in self.source or self._attribute_stores(attribute) != 1:
            return None
        init = next((statement for statement in F.block_statements(info.node.body)
                     if isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__"), None)
        if init is None:
            return None
        stored = next((small for statement in F.block_statements(init.body)
                       if isinstance(statement, cst.SimpleStatementLine) for small in statement.body
                       if isinstance(small, cst.Assign) and len(small.targets) == 1
                       and F.dotted_name(small.targets[0].target) == f"self.{attribute}"), None)
        if stored is None or not isinstance(stored.value, cst.Name):
            return None
        parameter = stored.value.value
        flag = _literal_parameter(init, parameter)
        return (parameter, *flag) if flag is not None else None

    def _in_a_branch_no_construction_takes(self, node: cst.CSTNode) -> bool:
        """Is ``node`` in a branch that a constructor flag's default turns off (see
        ``_note_constructor_flag_branch``), when no construction of the class in the repository
        passes the flag, nothing else assigns it and nothing subclasses the class
        (``Project.never_passed``)? It never runs."""
        project = self.facts.project
        for branch, flags in self._flag_branches:
            if id(node) not in self._node_ids(branch):
                continue
            here = project.file_of_path(self.path)
            if all(project.never_passed(cls, parameter, index, attribute, here)
                   for cls, parameter, index, attribute in flags):
                return True
        return False

    def _note_parameter_branch(self, node: cst.If) -> None:
        """``if marginal:`` in a top-level function whose test reads only its parameters (never
        rebound): which branch runs is the caller's choice. Read only when a report that needs
        grad falls in one (``_in_a_branch_no_call_with_grad_takes``)."""
        function = self.facts.function
        if function is None or function is self.facts.module_scope or function.parent is not self.facts.module_scope:
            return
        names = F.names_in(node.test)
        if names and all(name in function.parameters and isinstance(getattr(function.bindings.get(name), "node", None),
                                                                     cst.Param) for name in names):
            self._parameter_branches.append((node, function))

    def _in_a_branch_no_call_with_grad_takes(self, report) -> bool:
        """Is the report in a branch of a shared function that every call made with grad on turns
        off (``test_classifier(model, loader)`` in training, ``marginal=False`` by default, and
        ``test_classifier(..., marginal=True)`` only under ``no_grad``)? Every call must be in
        view: this module's and the project's, the function never handed on uncalled."""
        function = report.function
        wanted: list[tuple[cst.BaseExpression, bool]] = []
        for branch, scope in self._parameter_branches:
            if scope is not function:
                continue
            if id(report.node) in self._node_ids(branch.body):
                wanted.append((branch.test, True))
            elif branch.orelse is not None and id(report.node) in self._node_ids(branch.orelse):
                wanted.append((branch.test, False))
        if not wanted:
            return False
        calls = self._values_of_calls_with_grad(function)
        if calls is None:
            return False
        return all(any(F.value_with_defaults(test, values) is not F.NOT_A_LITERAL
                       and bool(F.value_with_defaults(test, values)) is not expected for test, expected in wanted)
                   for values in calls)

    def _values_of_calls_with_grad(self, function: F.FunctionScope) -> list[dict[str, object]] | None:
        """For each call of the top-level ``function`` made with grad on, in this module and in the
        other modules of the project, the literal value each parameter gets (passed or default;
        left out when unknown). None when some call may not be in view: the function is named
        other than in calls, a call passes ``*args``, a call by its name does not resolve to it,
        or nothing in the project calls it."""
        facts = self.facts
        name = function.name
        definition = function.node
        if not isinstance(definition, cst.FunctionDef) or not only_called_by_name(self.source, name, own=True):
            return None
        positional = [param.name.value for param in (*definition.params.posonly_params, *definition.params.params)]
        defaults = {param.name.value: F.literal_value(param.default)
                    for param in F.all_parameters(definition.params) if param.default is not None}

        def values_of(passed: dict[str, object]) -> dict[str, object]:
            values = {key: value for key, value in defaults.items() if key not in passed}
            values.update(passed)
            return {key: value for key, value in values.items() if value is not F.NOT_A_LITERAL}

        sites = facts.calls_into.get(id(definition), [])
        by_name = [site for site in facts.call_sites.get(name, ()) if not site.by_attribute]  # not optimizer.step()
        if len(sites) != len(by_name):
            return None  # a call by this name that is not this function's (a method of that name)
        calls, total = [], len(sites)
        for site in sites:
            if site.starred or site.call is None:
                return None
            if site.no_grad or not facts.may_run_with_grad(site.caller):
                continue
            passed = {parameter: F.literal_value(argument)
                      for parameter, argument in facts.argument_nodes(site.call, definition, False).items()}
            calls.append(values_of(passed))
        project = facts.project
        if project is not None and facts.module_name:
            here = project.file_of_path(self.path)
            found = project.calls_with_grad_from_elsewhere(facts.module_name, name, here)
            if found is None:
                return None
            elsewhere, made = found
            total += made
            for call in elsewhere:
                if "*" in call:
                    return None
                passed = {}
                for key, value in call.items():
                    parameter = positional[key] if isinstance(key, int) and key < len(positional) else key
                    if not isinstance(parameter, str):
                        return None  # more positional arguments than the function takes
                    passed[parameter] = F.NOT_A_LITERAL if value is Ellipsis else value
                calls.append(values_of(passed))
        return calls if total else None

    def _device_compared_to_string(self, test: cst.BaseExpression) -> bool | None:
        """``if self.device == "cuda":`` where ``self.device`` only ever holds a ``torch.device``:
        a ``torch.device`` never equals a string (``==`` is always false, ``!=`` always true), so
        the branch never runs (or always does). Also inside ``and`` / ``or`` / ``not``."""
        if isinstance(test, cst.BooleanOperation):
            left = self._device_compared_to_string(test.left)
            right = self._device_compared_to_string(test.right)
            if isinstance(test.operator, cst.And):
                return False if False in (left, right) else None
            return True if True in (left, right) else None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._device_compared_to_string(test.expression)
            return None if inner is None else not inner
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
            return None
        operator = test.comparisons[0].operator
        if not isinstance(operator, (cst.Equal, cst.NotEqual)):
            return None
        left, right = test.left, test.comparisons[0].comparator
        strings = (cst.SimpleString, cst.ConcatenatedString)
        if isinstance(left, strings) == isinstance(right, strings):
            return None
        other = right if isinstance(left, strings) else left
        if not self._holds_only_a_device(other):
            return None
        return isinstance(operator, cst.NotEqual)

    def _holds_only_a_device(self, node: cst.BaseExpression) -> bool:
        """Is ``node`` a local (or a module-level name, at the top level) bound once to
        ``torch.device(...)``, or ``self.x`` that every method of the class sets to one?"""
        facts = self.facts
        function = facts.function

        def is_device(value: cst.BaseExpression) -> bool:
            return isinstance(value, cst.Call) and facts.qualified_name(value.func) == "torch.device"

        if isinstance(node, cst.Name):
            scope = function.node if isinstance(function.node, cst.FunctionDef) else self.module
            key = ("names", id(scope))
            if key not in self._device_holders:
                self._device_holders[key] = F.bound_once_to(
                    scope, is_device, "global" in self.source or "nonlocal" in self.source, ":=" in self.source)
            return node.value in self._device_holders[key]
        info = facts.class_info
        if info is None or not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                                and node.value.value == "self"):
            return False
        binding = info.attributes.get(f"self.{node.attr.value}")
        if binding is None or not isinstance(binding.node, cst.BaseExpression) or not is_device(binding.node):
            return False  # (cheap first: the binding seen so far is no torch.device)
        key = ("attribute", id(info.node), node.attr.value)
        if key not in self._device_holders:
            values = F.attribute_values(info.node, node.attr.value)
            self._device_holders[key] = bool(values) and all(is_device(value) for value in values)
        return bool(self._device_holders[key])

    def _constant_names(self) -> dict[str, object]:
        """The current function's names bound once to a literal (see F.constant_names); at the
        module's top level, the module's."""
        function = self.facts.function
        scope = function.node if isinstance(function.node, cst.FunctionDef) else self.module
        key = id(scope)
        if key not in self._constants:
            self._constants[key] = F.constant_names(scope, "global" in self.source or "nonlocal" in self.source,
                                                    ":=" in self.source)
        return self._constants[key]

    def _compound(self, node: cst.CSTNode, body: Callable[[], None]) -> None:
        self._statement.append(node)
        self._enter(node)
        body()
        self._exit(node)
        self._statement.pop()

    def _find_plain_functions(self, module: cst.Module) -> None:
        """Before the walk: the module's functions that return only values computed under
        no-grad (``def accuracy(...): with torch.no_grad(): ... return res``), so that a call
        above the definition (the ImageNet example defines accuracy() last) is known to
        carry no graph. The module's top-level imports are read first to resolve ``torch``."""
        for statement in module.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Import):
                        self._record_import(small)
                    elif isinstance(small, cst.ImportFrom):
                        self._record_import_from(small)
        defined = Counter(s.name.value for s in module.body if isinstance(s, cst.FunctionDef))
        for statement in module.body:
            if isinstance(statement, cst.FunctionDef) and _returns_only_without_grad(statement, self.facts):
                self.facts.plain_functions.add(id(statement))
                if defined[statement.name.value] == 1:
                    self.facts.plain_names.add(statement.name.value)

    def _index_definitions(self, module: cst.Module) -> None:
        """Before the walk: the module's top-level functions and classes (methods, bases), so
        that a call above a definition (``self.training_step(inputs)`` with training_step
        defined below) knows which function it runs."""
        facts = self.facts
        functions: dict[str, list[cst.FunctionDef]] = defaultdict(list)
        for statement in module.body:
            if isinstance(statement, cst.FunctionDef):
                functions[statement.name.value].append(statement)
                facts.definition_keys[id(statement)] = statement.name.value
            elif isinstance(statement, cst.ClassDef):
                name = statement.name.value
                facts.class_nodes[name] = statement
                facts.class_bases[name] = tuple(
                    (dotted_name(arg.value) or "").rsplit(".", 1)[-1] for arg in statement.bases if arg.keyword is None)
                facts.class_methods[name] = F.methods_of_class(statement)
                for method in facts.class_methods[name].values():
                    facts.definition_keys[id(method)] = f"{name}.{method.name.value}"
        facts.module_functions = {name: nodes[0] for name, nodes in functions.items() if len(nodes) == 1}
        facts.registries = _registries(module, facts.module_functions)

    def _import(self, node: cst.Import) -> None:
        self._record_import(node)
        self._enter(node)
        self._exit(node)

    def _import_from(self, node: cst.ImportFrom) -> None:
        self._record_import_from(node)
        self._enter(node)
        self._exit(node)

    def _record_import(self, node: cst.Import) -> None:
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                full = _attribute_text(alias.name)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.facts.imports.add(alias.asname.name.value, full)
                else:
                    head = full.split(".", 1)[0]
                    self.facts.imports.add(head, head)
                    if "." in full:
                        self.facts.imports.add(full, full)  # so "torch.nn" resolves as itself

    def _record_import_from(self, node: cst.ImportFrom) -> None:
        # A relative import keeps its dots (``.ch05.evaluate_model``): an imported function, not
        # a module variable, whatever its name says.
        module = "." * len(node.relative) + (_attribute_text(node.module) if node.module is not None else "")
        if node.relative and self.facts.module_name:
            absolute = resolve_relative(self.facts.module_name, self.facts.is_package, len(node.relative),
                                        _attribute_text(node.module) if node.module is not None else None)
            module = absolute or module
        if not module:
            return
        if isinstance(node.names, cst.ImportStar):
            self.facts.imports.add(f"*{module}", module)
            self._record_star_reexports(module)
            return
        separator = "" if module.endswith(".") else "."
        for alias in node.names:
            name = _attribute_text(alias.name)
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
            self.facts.imports.add(local, f"{module}{separator}{name}")

    def _record_star_reexports(self, module: str, depth: int = 0) -> None:
        """``from utils.utils import *`` hands on the modules utils.utils imports (``torch``,
        ``F``): a name this module uses without importing it is the module it names there."""
        project = self.facts.project
        found = project.module_file(module) if project is not None and depth < 3 else None
        outline = project.outline(found) if found is not None else None
        if outline is None:
            return
        aliases = self.facts.imports.aliases
        for local, qualified in outline.imports.items():
            if not local.startswith("_") and local not in aliases:
                self.facts.imports.add(local, qualified)
        for star in outline.star_imports:
            self._record_star_reexports(star, depth + 1)

    def _class(self, node: cst.ClassDef) -> None:
        facts = self.facts
        self._walk_all(d.decorator for d in node.decorators)
        bases = tuple(facts.qualified_name(arg.value) or "" for arg in node.bases if arg.keyword is None)
        kinds = _class_kinds(bases, facts)
        # A base memlint cannot follow (a third-party class it has no model of) leaves the
        # class's kind to its bases' names, as a tie-breaker.
        unknown = kinds.unknown_base
        is_module = kinds.module or (unknown and any(_is_module_base(base, facts) for base in bases))
        info = ClassInfo(
            name=node.name.value,
            node=node,
            base_names=bases,
            is_module=is_module,
            is_lightning=kinds.lightning,
            is_dataset=kinds.dataset or (unknown and any(
                base.rsplit(".", 1)[-1] in ("Dataset", "IterableDataset") or base.endswith("Dataset") for base in bases)),
            kinds=kinds,
        )
        facts.classes[info.name] = info
        facts.scope.bindings[info.name] = Binding(Kind.VALUE, NO_GRAPH, node)

        def body() -> None:
            facts.scope = ClassScope(node, facts.scope, info)
            self._alive.append(facts.scope)
            self._walk_block(node.body)
            facts.scope = facts.scope.parent

        self._compound(node, body)

    def _function(self, node: cst.FunctionDef) -> None:
        facts = self.facts
        self._walk_all(d.decorator for d in node.decorators)
        for param in F.all_parameters(node.params):
            if param.default is not None:
                self._walk(param.default)
        parent = facts.scope
        class_info = parent.info if isinstance(parent, ClassScope) else facts.class_info
        name = node.name.value
        # A nested function does not inherit the region it is defined in: it runs when called
        # (a hook registered under no_grad runs in training). Its callers are applied at the end.
        mode, explicit = GradMode.ON, False
        for decorator in node.decorators:
            decorated = grad_mode_of(decorator.decorator, facts)
            if decorated is None:  # a decorator of the module or the project (@smart_inference_mode())
                decorated = facts.decorated_grad_mode(decorator.decorator)
            if decorated is not None:
                mode, explicit = decorated, True
        if isinstance(parent, ClassScope) and class_info is not None and name in F.LIGHTNING_NO_GRAD_METHODS \
                and mode is GradMode.ON:
            if class_info.is_lightning:
                mode, explicit = GradMode.OFF, True  # Lightning runs these under no_grad itself
            elif class_info.kinds.unknown_base:
                # a base memlint cannot follow may be a LightningModule: grad may be off here
                mode, explicit = GradMode.MAYBE_OFF, True
        if isinstance(parent, ClassScope) and class_info is not None and class_info.kinds.autograd_function \
                and name == "backward" and mode is GradMode.ON:
            # autograd runs a Function's backward with grad off, on unless the outer pass asked for
            # create_graph=True (double backward): either, as far as the code says
            mode, explicit = GradMode.MAYBE_OFF, True
        parent.bindings[name] = Binding(Kind.VALUE, NO_GRAPH, node)
        scope = FunctionScope(node, parent, name, class_info, mode)
        scope.branch_depth = len(facts.branch_path)
        scope.entry_grad_mode_explicit = explicit
        facts.function_scopes[id(node)] = scope
        if isinstance(parent, ClassScope):
            parent.info.methods[name] = scope

        def body() -> None:
            self._enter_function(scope, node.params)
            self._walk_block(node.body)
            self._leave_function(scope)

        self._compound(node, body)

    def _lambda(self, node: cst.Lambda) -> None:
        facts = self.facts
        scope = FunctionScope(node, facts.scope, "<lambda>", facts.class_info)
        self._enter(node)
        self._enter_function(scope, node.params)
        self._walk(node.body)
        scope.returned_names |= names_in(node.body)
        self._leave_function(scope)
        self._exit(node)

    def _enter_function(self, scope: FunctionScope, params: cst.Parameters) -> None:
        facts = self.facts
        for param in F.all_parameters(params):
            pname = param.name.value
            kind = _annotated_kind(param.annotation.annotation, facts) if param.annotation is not None else None
            if kind is None:  # no annotation that says: the name breaks the tie
                kind = Kind.MODULE if F.names_a_module_object(pname) else Kind.VALUE
            scope.bindings[pname] = Binding(kind, GraphValue(Graph.UNKNOWN, frozenset({pname})), param)
            scope.inputs.add(pname)
        scope.parameters = tuple(p.name.value for p in F.all_parameters(params) if p.name.value not in ("self", "cls"))
        facts.scope = scope
        facts.walking.add(id(scope.node))
        self._alive.append(scope)
        self._saved_grad_modes.append((facts.grad_modes, facts.grad_mode_explicit))
        facts.grad_modes = [scope.entry_grad_mode]
        facts.grad_mode_explicit = [scope.entry_grad_mode_explicit]

    def _leave_function(self, scope: FunctionScope) -> None:
        facts = self.facts
        if scope.returned_nodes:
            scope.decorator_grad_mode = _decorator_grad_mode(scope, facts)
            scope.factory_grad_mode = _factory_grad_mode(scope, facts)
        self._run_deferred(scope)
        if isinstance(scope.node, cst.FunctionDef) and not scope.is_generator and scope.return_graph is Graph.NONE:
            facts.plain_functions.add(id(scope.node))
        if isinstance(scope.node, cst.FunctionDef):
            _note_backpropagated_parameters(scope)
            facts.summaries[id(scope.node)] = _summary(scope)
            in_eval = _eval_summary(scope)
            if in_eval is not None:
                facts.eval_summaries[id(scope.node)] = in_eval
        facts.walking.discard(id(scope.node))
        facts.grad_modes, facts.grad_mode_explicit = self._saved_grad_modes.pop()
        facts.scope = scope.parent

    def _for(self, node: cst.For) -> None:
        facts = self.facts

        def body() -> None:
            self._walk(node.iter)
            # what a parameter holds, unless the loop draws data from it (``for x, y in loader``)
            given = () if F.iterates_data(node.iter) else facts.function.parameters
            iter_graph = _carried_only(facts.in_grad_mode(facts.iteration_value(node.iter), node.iter), given)
            loop = Loop(node, "for", facts.scope, branch_depth=len(facts.branch_path),
                        iterates_data=F.iterates_data(node.iter) and not self._over_local_lists(node.iter),
                        target_names=frozenset(names_in(node.target)),
                        parameters_of=_parameters_owner(node.iter),
                        walks_steps=F.walks_steps((node.iter, node.target)),
                        mentions_epoch=F.mentions_epoch((node.iter, node.target)),
                        over_parts=F.is_parts_of_a_value(node.iter) or self._rows_of_a_local_tensor(node.iter),
                        bounded=_is_literal_iterable(node.iter) or _leaves_after_one(node.body),
                        counts_in_module_method=(_is_range(node.iter, facts) or _over_own_submodules(node.iter, facts))
                        and _in_module_method(facts))
            if not loop.iterates_data and (self._over_local_lists(node.iter)
                                           or names_in(node.iter) & facts.function.element_targets):
                facts.function.element_targets |= loop.target_names
            self._run_loop(loop, lambda: self._bind(node.target, node.iter, iter_graph), node.body)
            self._note_converted_in_place(node)
            if node.orelse is not None:
                self._walk_block(node.orelse.body)

        self._compound(node, body)

    def _note_converted_in_place(self, node: cst.For) -> None:
        """``for key, value in d.items(): d[key] = value.mean().item()``: every slot of ``d`` is
        rebound, unconditionally, to a value without a graph; after the loop ``d`` holds none."""
        facts = self.facts
        container, key = _walked_container(node)
        function = facts.function
        if container is None or key is None or function is None or container in function.inputs:
            return
        for statement in node.body.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for part in statement.body:
                if isinstance(part, cst.Assign) and len(part.targets) == 1 \
                        and isinstance(target := part.targets[0].target, cst.Subscript) \
                        and dotted_name(target.value) == container and len(target.slice) == 1 \
                        and isinstance(target.slice[0].slice, cst.Index) \
                        and dotted_name(target.slice[0].slice.value) == key \
                        and not facts.graph_value(part.value).carries_something:
                    facts.scope.bindings[container] = Binding(Kind.VALUE, F.NO_GRAPH, node)
                    function.derived_from[container] = set()
                    return

    def _over_local_lists(self, iterable: cst.BaseExpression) -> bool:
        """``for a, b in zip(res_samples, residuals)`` where a list walked (for ``zip``, one of them:
        it pairs element by element) was built by this function (``res_samples = [h]``, then
        filled): the parts of values it computed, not data, whatever the names say."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in (
                "zip", "enumerate", "reversed"):
            parts = [arg.value for arg in iterable.args if arg.keyword is None and not arg.star]
        else:
            parts = [iterable]
        scope = self.facts.scope
        if not parts or not isinstance(scope, F.FunctionScope):
            return False
        return any(self._is_local_list(part, scope) for part in parts)

    @staticmethod
    def _is_local_list(part: cst.BaseExpression, scope: F.FunctionScope) -> bool:
        if not isinstance(part, cst.Name) or part.value in scope.inputs:
            return False
        binding = scope.bindings.get(part.value)
        return binding is not None and isinstance(binding.node, (cst.List, cst.ListComp, cst.Tuple))

    def _while(self, node: cst.While) -> None:
        def body() -> None:
            loop = Loop(node, "while", self.facts.scope, iterates_data=True,
                        walks_steps=F.walks_steps((node.test,)), mentions_epoch=F.mentions_epoch((node.test,)))
            self._run_loop(loop, lambda: self._walk(node.test), node.body)
            if node.orelse is not None:
                self._walk_block(node.orelse.body)

        self._compound(node, body)

    def _run_loop(self, loop: Loop, start: Callable[[], None], block: cst.BaseSuite) -> None:
        facts = self.facts
        function = facts.function
        callees: list[object] = []  # this module's defs and the project's keys the body calls
        self._loop_callees[id(loop)] = callees
        loop.callees_work = lambda: facts.callees_work(callees)
        loop.callees_train = lambda: facts.callees_train(callees)
        loop.callees_update = lambda: facts.callees_update(callees)
        loop.callees_repeat = lambda: facts.callees_repeat(callees)
        loop.callees_steps = lambda: facts.callees_steps(callees)
        loop.exits_on_success = _exits_on_success(block)
        loop.within_a_step = lambda: facts.within_a_step(function)
        if loop.walks_steps:
            for outer in facts.loops_in_function():
                outer.contains_step_loop_by_name = True
        facts.loops.append(loop)
        facts.loop_of_node[id(loop.node)] = loop
        self._alive.append(loop)
        start()
        loop.bound_this_iteration |= loop.target_names
        facts.function.inputs |= loop.target_names
        self._walk_block(block)
        facts.loops.pop()
        outer = facts.loop
        if outer is not None:
            outer.has_backward |= loop.has_backward
            outer.has_backward_pass |= loop.has_backward_pass
            outer.has_optimizer_step |= loop.has_optimizer_step

    def _with(self, node: cst.With) -> None:
        facts = self.facts

        def body() -> None:
            mode, explicit = facts.grad_mode, False
            for item in node.items:
                self._walk(item.item)
                if isinstance(item.item, cst.Call) and facts.qualified_name(item.item.func) in F.DEVICE_CONTEXTS:
                    facts.function.effects.add(SETS_DEVICE)
                item_mode = grad_mode_of(item.item, facts)
                if item_mode is None and isinstance(item.item, cst.Call):
                    item_mode = facts.context_grad_mode(item.item)  # a @contextmanager of the module or project
                if item_mode is not None:
                    mode, explicit = item_mode, True
                if item.asname is not None:
                    self._bind(item.asname.name, item.item, facts.graph_value(item.item))
            facts.grad_modes.append(mode)
            facts.grad_mode_explicit.append(explicit)
            self._walk_block(node.body)
            facts.grad_modes.pop()
            facts.grad_mode_explicit.pop()

        self._compound(node, body)

    # ----- expressions and simple statements -------------------------------------------------
    def _assign(self, node: cst.Assign | cst.AnnAssign) -> None:
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        self._enter(node)
        if node.value is not None:
            self._assign_targets.append(frozenset(n for t in targets for n in names_in(t)))
            self._walk(node.value)
            self._assign_targets.pop()
        for target in targets:
            if not isinstance(target, cst.Name):
                self._walk(target)
                if isinstance(target, cst.Subscript):  # buffer[step] = value: filled in place
                    _note_filled(self.facts.function, target.value)
                    if F.is_visible_devices_slot(target, self.facts):
                        self.facts.function.effects.add(SETS_DEVICE)
                        if node.value is not None and F.one_visible_device(node.value):
                            self.facts.function.effects.add(PINS_ONE_GPU)
                        if node.value is not None and F.names_one_device(node.value, self.facts.function):
                            self.facts.function.effects.add(SEES_ONE_GPU)
        self._exit(node)
        if node.value is not None:
            if len(targets) == 1 and not isinstance(targets[0], cst.Name):
                self._running_update_in_object(targets[0], node.value)
            if len(targets) == 1 and isinstance(targets[0], (cst.Name, cst.Attribute)):
                self._mode_set_as_made(dotted_name(targets[0]), node.value)
            graph = self.facts.graph_value(node.value)
            if _draws_from_an_iterator(node.value, self.facts):
                # batch = next(loader_iter): data coming in, as a loop target is; a loss computed
                # from it says nothing of the batch itself
                self.facts.function.inputs |= {n for t in targets for n in names_in(t)}
            for target in targets:
                pairs = _element_pairs(target, node.value)
                if pairs is None:
                    self._bind(target, node.value, graph)
                else:  # a, b = Meter(), model(x): each name gets its own value
                    for element_target, element_value in pairs:
                        self._bind(element_target, element_value, self.facts.graph_value(element_value))

    def _aug_assign(self, node: cst.AugAssign) -> None:
        facts = self.facts
        self._enter(node)
        self._walk(node.value)
        if not isinstance(node.target, cst.Name):
            self._walk(node.target)
        self._exit(node)
        name = dotted_name(node.target)
        if name:
            for loop in facts.loops_in_function():
                loop.incremented.add(name)
            if name.startswith("self.") and facts.class_info is not None:
                facts.class_info.incremented.add(name)
            elif facts.function is not facts.module_scope:
                facts.function.incremented.add(name)
        function = facts.function
        self._keep_in_object(node.target, node.value, appends=False)  # self.sum += val * n
        if isinstance(node.target, cst.Name):
            old = facts.lookup(node.target.value)
            graph = GraphValue.combine([facts.graph_value(node.value)] + ([old.graph.element] if old else []))
            facts.scope.bindings[node.target.value] = Binding(Kind.VALUE, graph, node)
            function.derived_from.setdefault(node.target.value, set()).update(facts.graph_names_in(node.value))
            function.stored_values.setdefault(node.target.value, []).append(node.value)
            _note_graph_binding(function, node.target.value, graph)
        elif isinstance(node.target, cst.Subscript):  # stats[k] += loss
            self._store(node.target.value, node.value, facts.graph_value(node.value))
        elif name is not None and name.startswith("self."):  # self.total += loss
            binding = facts.lookup(name)
            if binding is not None and binding.kind is Kind.VALUE:
                binding.graph = GraphValue.combine((binding.graph.element, facts.graph_value(node.value)))
            # what it held, and now also what is added (self.loss_G_A += loss_G_A / n)
            function.derived_from.setdefault(name, set()).update(facts.graph_names_in(node.value))
            function.stored_values.setdefault(name, []).append(node.value)

    def _return(self, node: cst.Return) -> None:
        facts = self.facts
        self._enter(node)
        function = facts.function
        if node.value is not None:
            self._walk(node.value)
            value = facts.graph_value(node.value)
            function.returned_names |= names_in(node.value)
            function.returned_nodes.append(node.value)
            function.return_graph = max(function.return_graph, value.state)
            function.returns.append((value, facts.summary_form(value, function)))
            function.return_modes.append(_training_branch(facts))
            function.return_shapes.append(_return_shape(node.value, facts))
            if F.graphless_value(node.value, value):
                function.graphless_return = True
            loss = _framework_backpropagated(function, node.value, facts)
            if loss is not None:  # the framework runs backward() on what this returns
                function.backward_names |= names_in(loss) - {"self", "cls"}
                function.note_backpropagated(names_in(loss) - {"self", "cls"})
                function.backward_places |= F.places_in(loss)
        else:
            function.returns.append((NO_GRAPH, NO_GRAPH))
            function.return_modes.append(_training_branch(facts))
            function.return_shapes.append(ONE_VALUE)
        self._exit(node)

    def _yield(self, node: cst.Yield) -> None:
        facts = self.facts
        facts.function.is_generator = True
        facts.function.yield_grad_modes.add(None if facts.grad_mode_inherited else facts.grad_mode)
        self._enter(node)
        if node.value is not None:
            self._walk(node.value)
        self._exit(node)

    def _call(self, node: cst.Call) -> None:
        facts = self.facts
        self._enter(node)
        self._walk(node.func)
        for arg in node.args:
            self._walk(arg.value)
        self._exit(node)
        function = facts.function
        func = node.func
        qualified = facts.qualified_name(func)
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        # Call sites, to know which functions are only called under no-grad.
        callee = method if method is not None else (func.value if isinstance(func, cst.Name) else None)
        if callee is not None:
            self_class = None
            if method is not None and isinstance(func.value, cst.Name) and func.value.value in ("self", "cls") \
                    and function.class_info is not None:
                self_class = function.class_info.name
            module_receiver = method in F.MODULE_METHODS and self_class is None and facts.is_module_expr(func.value)
            by_attribute = method is not None and _receiver_root(func.value) not in facts.imports.aliases
            facts.call_sites.setdefault(callee, []).append(
                F.CallSite(facts.grad_mode, function, facts.grad_mode_inherited, self_class, module_receiver,
                           by_attribute))
            function.callees.add(qualified or f"?.{callee}")
        self._value_facts_of_call(node, func, method)
        self._effects_of_call(node, qualified, method)
        if any(arg.keyword is None and facts.is_module_expr(arg.value) for arg in node.args):
            facts.modules_handed.append((node, function))  # freeze(self.backbone)? see Facts.frozen_by_helpers
        elif method is not None and not node.args and method not in F.MODULE_METHODS \
                and not (type(func.value) is cst.Name and func.value.value == "self") \
                and facts.is_module_expr(func.value):
            facts.module_methods_called.append((node, function))  # self.ref_model.freeze_all()
        callees = facts.callees(node)
        if function is not None and type(func) is cst.Name and func.value == "range" and facts.lookup("range") is None:
            function.counts |= {arg.value.value for arg in node.args if type(arg.value) is cst.Name}
        if node.args and function is not None and (callees is not None or (
                facts.project is not None and qualified is not None
                and (dotted_name(func) or ".").split(".", 1)[0] in facts.imports.aliases)):
            _note_backpropagated_arguments(node, function, facts)
            if self._saves_anything:
                handed = facts.arguments_with_effect(node, F.SAVES_ARGUMENT)
                for saved in handed:
                    self._note_save(saved, None)  # self.save_states(epoch, weights, ...): written by the callee
                if not handed and callees is not None and any(id(d) not in facts.function_scopes for d in callees[0]):
                    self._pending_saves.append((node, function))  # a callee defined below: read at the module's end
        if callees is None and facts.on_a_parameter(node):  # model.predict(x): known at the end of the module
            for loop in facts.loops_in_function():
                self._loop_callees[id(loop)].append(F.ParameterCallee(node, function))
        if callees is not None:  # a function of this module: remember who calls it, from where, with what
            loops = tuple(reversed(facts.loops_in_function()))
            starred = any(arg.star for arg in node.args)
            for definition in callees[0]:
                facts.calls_into.setdefault(id(definition), []).append(
                    F.FunctionCall(function, loops, facts.call_arguments(node, definition, callees[1]), starred,
                                   facts.grad_off, facts.argument_classes(node, definition, callees[1]),
                                   len(function.training_sites), self._result_names(node),
                                   node if not callees[1] else None))
                for loop in loops:
                    self._loop_callees[id(loop)].append(id(definition))
                key = facts.definition_keys.get(id(definition))
                if key is not None:
                    function.call_keys.add(f"{facts.module_name}:{key}")
        elif qualified is not None and qualified.split(".", 1)[0] not in F.TORCH_PACKAGES \
                and (dotted_name(func) or ".").split(".", 1)[0] in facts.imports.aliases:
            function.call_keys.add(qualified)  # maybe another module of the project: resolved when asked
            if not facts.in_no_grad:
                facts.literal_calls.setdefault(qualified, []).append(F.literal_arguments(node))
            for loop in facts.loops_in_function():
                self._loop_callees[id(loop)].append(qualified)
        if method == "numpy" and not node.args and function is not None:
            converted = _numpy_converted(func.value)
            if converted is not None:
                function.numpy_converted.add(converted)
        elif qualified in _NUMPY_FROM_TENSORS and node.args and node.args[0].keyword is None and function is not None:
            # np.array(embs): numpy converts each tensor of the list, and raises on one with a graph
            converted = _numpy_converted(node.args[0].value)
            if converted is not None:
                function.numpy_converted.add(converted)
        if method in F.BACKWARD_METHODS or qualified in F.AUTOGRAD_FUNCTIONS:
            tensor = F.backpropagated_expr(node, facts)
            if tensor is not None and function is not None:
                function.backward_names |= names_in(tensor) - {"self", "cls"} - _non_tensor_receivers(tensor)
                function.note_backpropagated(names_in(tensor) - {"self", "cls"} - _non_tensor_receivers(tensor))
                function.backward_places |= F.places_in(tensor)
                function.backward_nodes |= _call_ids(tensor)
                function.has_backward = True
                function.effects.add(BACKWARD)
                function.training_sites.append(("backward", tuple(id(loop.node) for loop in facts.loops_in_function())))
            if qualified == "torch.autograd.grad" and function is not None:
                function.requires_grad_inputs = True
            loops = facts.loops_in_function()
            for loop in loops:
                loop.has_backward = True
                loop.has_backward_pass |= qualified != "torch.autograd.grad"
            if loops:
                loops[-1].note_training_inside(loops[:-1])
            return
        if method == "step" and is_optimizer_step(node, facts):
            if function is not None:
                function.has_optimizer_step = True
                function.effects.add(OPTIMIZER_STEP)
                function.training_sites.append(("step", tuple(id(loop.node) for loop in facts.loops_in_function())))
            loops = facts.loops_in_function()
            for loop in loops:
                loop.has_optimizer_step = True
            if loops:
                loops[-1].note_training_inside(loops[:-1])
                receiver = func.value.value if type(func.value) is cst.Subscript else func.value
                index = F.subscript_key_name(func.value) if type(func.value) is cst.Subscript else None
                targets = loops[-1].target_names
                if (type(func.value) is cst.Subscript and index in targets) or (
                        type(receiver) is cst.Name and receiver.value in targets):
                    loops[-1].steps_each_model = True  # optimizers[i].step(): one model of several per iteration
            return
        if method is not None and (method in _FILLING_METHODS or (method.endswith("_") and not method.startswith("_"))):
            _note_filled(function, func.value)  # losses.append(loss), buf.copy_(x): may now hold a graph
        if method is not None:
            target = _mode_target(func.value)
            mode = _mode_change(method, node)
            if mode is not None and target is not None:
                change = ModeChange(target, mode, node, tuple(facts.branch_path),
                                    tuple(id(loop.node) for loop in facts.loops_in_function()))
                function.mode_changes.append(change)
                if mode == "frozen":
                    facts.frozen_modules.add(target)
                    _note_frozen_parameter(function, target)
            if mode == "frozen" or (method == "detach_" and not node.args):
                self._freeze(func.value)  # (p.detach_() on a parameter: it no longer requires grad)
            if method == "requires_grad_" and function is not None and mode is None \
                    and not facts.is_module_expr(func.value):
                function.requires_grad_inputs = True  # an input, not a module unfrozen
        if function is not None and any(
            arg.keyword is not None and arg.keyword.value == "requires_grad" and _is_true(arg.value) for arg in node.args
        ):
            function.requires_grad_inputs = True
        if function is not None and F.is_volatile_variable(node, qualified):
            function.volatile_names |= self.assign_targets
        if method in ("cuda", "to") and facts.loop is not None and not facts.is_module_expr(func.value):
            facts.loop.moves_to_device = True  # x[i * bs:(i + 1) * bs].cuda(): a batch of data per iteration

    def _effects_of_call(self, node: cst.Call, qualified: str | None, method: str | None) -> None:
        """What a call does that other modules may ask about: sets the CUDA device, starts a
        process group, runs a module's forward."""
        effects = self.facts.function.effects
        if F.runs_on_current_device(node, self.facts):
            effects.add(USES_CURRENT_DEVICE)
        if method in ("set_device", "set_device_index") or qualified in F.DEVICE_CONTEXTS \
                or qualified in F.ACCELERATE_STATES:
            effects.add(SETS_DEVICE)
        elif qualified in F.INIT_PROCESS_GROUP:
            effects.add(PROCESS_GROUP_ON_REQUEST if self._off_by_default() else PROCESS_GROUP)
            if any(arg.keyword is not None and arg.keyword.value == "device_id" for arg in node.args):
                effects.add(SETS_DEVICE)
        elif qualified in F.TENSOR_COLLECTIVES:
            effects.add(COLLECTIVE)
        elif F.pins_visible_devices(node, self.facts):
            effects.add(SETS_DEVICE)
            values = [arg.value for arg in node.args if arg.keyword is not None] or [
                arg.value for arg in node.args[1:2]]
            if values and F.one_visible_device(values[0]):
                effects.add(PINS_ONE_GPU)
            if values and F.names_one_device(values[0], self.facts.function):
                effects.add(SEES_ONE_GPU)
        elif self.facts.is_module_expr(node.func) and not self.facts.is_module_constructor(node):
            effects.add(MODULE_CALL)
            if self.facts.is_loss_module_call(node):
                effects.add(COMPUTES_LOSS)
            loops = self.facts.loops_in_function() if not self.facts.is_parameterless_torch_module(node.func) else []
            for loop in loops:
                loop.runs_model = True  # (not a loss or an activation: a loop over its terms runs no model)
            inner = self.facts.loop
            if loops and inner is not None and not (inner.bounded or inner.over_parts or inner.counts_in_module_method) \
                    and not names_in(node.func) & inner.target_names:  # not ``for blk in blocks: x = blk(x)``
                for loop in loops:
                    if loop is not inner:
                        loop.repeats_model_inside = True  # each iteration runs a loop of forward passes
            info = self.facts.function.class_info
            if loops and not (info is not None and info.is_module):
                effects.add(REPEATS_MODULE)  # a helper looping over forward passes (not a module's layers)
        elif qualified is not None and qualified.startswith("torch.nn.functional.") \
                and any(word in qualified.rsplit(".", 1)[-1] for word in F.FUNCTIONAL_LOSS_WORDS):
            effects.add(COMPUTES_LOSS)
        elif qualified == "next":
            for loop in self.facts.loops_in_function():
                loop.draws = True
        elif qualified in F.CHECKPOINT_FILE_FUNCTIONS and self.facts.loop is not None:
            self.facts.loop.moves_files = True  # torch.load / torch.save in its body: a loop over files
        elif qualified is not None and F.stops_memory_history(node, qualified):
            effects.add(STOPS_MEMORY_HISTORY)
        if qualified in F.TORCH_SAVE:
            saved = node.args[0].value if node.args and node.args[0].keyword is None and not node.args[0].star \
                else next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "obj"), None)
            if saved is not None:
                function = self.facts.function
                if type(saved) is cst.Name and saved.value in function.parameters \
                        and isinstance(getattr(function.bindings.get(saved.value), "node", None), cst.Param) \
                        and not self.facts.is_module_expr(saved):
                    # torch.save(states, path) of a parameter: what the file holds, each caller says
                    function.effects.add(f"{F.SAVES_ARGUMENT}{function.parameters.index(saved.value)}")
                    return
                on_cpu = self._note_save(saved, effects)
                file_name = F.file_name_written(F.argument_at(node, 1, "f"),
                                                self.facts.function.stored_values.get)
                if file_name is not None:
                    self.facts.saved_files[file_name] = self.facts.saved_files.get(file_name, True) and (
                        on_cpu or self._holds_no_tensor(saved))

    def _note_pending_saves(self) -> None:
        """Calls of a function defined below its caller that turned out to save what it is
        handed (``save_checkpoint({'state_dict': model.state_dict(), ...}, is_best)`` in ``main``,
        ``def save_checkpoint(state, is_best): torch.save(state, ...)`` at the end of the file): what
        the caller handed it is read now, in the caller's scope."""
        facts = self.facts
        current = facts.scope
        try:
            for call, function in self._pending_saves:
                facts.scope = function
                for saved in facts.arguments_with_effect(call, F.SAVES_ARGUMENT):
                    self._note_save(saved, function.effects)
        finally:
            facts.scope = current

    def _note_save(self, saved: cst.BaseExpression, effects: "set[str] | None") -> bool:
        """What a save of ``saved`` by this function (or by a function it hands it to) writes:
        CPU or device state, a model's state, its weights. Returns whether it is all on the CPU."""
        if effects is None:
            effects = self.facts.function.effects
        on_cpu = self._moved_to_cpu(saved)
        effects.add(SAVES_CPU_STATE if on_cpu else SAVES_DEVICE_STATE)
        if not on_cpu and self._holds_module_state(saved):
            effects.add(SAVES_MODULE_STATE)
        if self._holds_module_state(saved) and self._holds_weights(saved):
            effects.add(SAVES_CPU_WEIGHTS if on_cpu else SAVES_DEVICE_WEIGHTS)
        return on_cpu

    def _attributes_holding_a_module(self, name: str, function: FunctionScope) -> None:
        """``self.netG = netG.to(device)`` earlier, then ``Adam(netG.parameters())``: the attribute
        holds the module the name holds (only an nn.Module has ``parameters()``)."""
        for place, values in function.stored_values.items():
            if not place.startswith("self.") or "[" in place:
                continue
            if any(dotted_name(F.without_self_returning_calls(value)) == name for value in values):
                binding = self.facts.lookup(place)
                if binding is not None and binding.kind is Kind.VALUE:
                    binding.kind = Kind.MODULE

    def _holds_module_state(self, saved: cst.BaseExpression, depth: int = 0) -> bool:
        """Does what ``torch.save`` writes hold a model's or an optimizer's state: a
        ``.state_dict()``, a module (``torch.save(model, path)``), a dict or a comprehension over
        one of those, or a name this function bound to one?"""
        function = self.facts.function
        if depth > 8 or function is None:
            return False
        if isinstance(saved, cst.Call):
            if isinstance(saved.func, cst.Attribute) and saved.func.attr.value == "state_dict":
                return True
            if dotted_name(saved.func) == "dict" or self.facts.qualified_name(saved.func) == "collections.OrderedDict":
                return any(self._holds_module_state(arg.value, depth + 1) for arg in saved.args)
            if isinstance(saved.func, cst.Attribute) and saved.func.attr.value in ("items", "values") and not saved.args:
                return self._holds_module_state(saved.func.value, depth + 1)  # state.items() in a comprehension
            return False
        if isinstance(saved, cst.Dict):
            return any(isinstance(element, cst.DictElement) and self._holds_module_state(element.value, depth + 1)
                       for element in saved.elements)
        if isinstance(saved, (cst.DictComp, cst.ListComp, cst.GeneratorExp)):
            # {k: v.cpu() for k, v in model.state_dict().items()}, or over a name bound to one
            return any(isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                       and node.func.attr.value == "state_dict" for node in F.descendants(saved)) \
                or self._holds_module_state(saved.for_in.iter, depth + 1)
        if isinstance(saved, (cst.Name, cst.Attribute)):
            if self.facts.is_module_expr(saved):
                return True
            if isinstance(saved, cst.Name):
                return any(self._holds_module_state(value, depth + 1)
                           for value in function.stored_values.get(saved.value, ()))
        return False

    def _holds_weights(self, saved: cst.BaseExpression) -> bool:
        """Of module state ``torch.save`` writes (see _holds_module_state): may it hold a model's
        weights? A module saved whole does; otherwise unless every ``.state_dict()`` of the
        function is an optimizer's, a schedule's or a scaler's (``state['optimizers'].append(
        o.state_dict())`` for ``o`` in ``self.optimizers``: a resume's training state)."""
        if isinstance(saved, (cst.Name, cst.Attribute)) and self.facts.is_module_expr(saved):
            return True
        function = self.facts.function
        body = function.node if isinstance(function.node, cst.FunctionDef) else None
        if body is None:
            return True
        receivers = [node.func.value for node in F.descendants(body) if isinstance(node, cst.Call)
                     and isinstance(node.func, cst.Attribute) and node.func.attr.value == "state_dict"]
        return not receivers or not all(self._training_state_object(receiver, body) for receiver in receivers)

    def _training_state_object(self, receiver: cst.BaseExpression, body: cst.FunctionDef) -> bool:
        """Is ``receiver`` an optimizer, a learning-rate schedule or a gradient scaler: built by
        such a torch class, or so named (as ML203 reads ``optimizer.load_state_dict``), directly or
        as the target of a loop over a collection so named (``for o in self.optimizers``)?"""
        name = dotted_name(receiver)
        if name is None:
            return False
        binding = self.facts.lookup(name)
        built = binding.node if binding is not None else None
        if isinstance(built, cst.Call):
            made = self.facts.qualified_name(built.func) or ""
            if made.startswith("torch.optim.") or made.rsplit(".", 1)[-1] == "GradScaler":
                return True
        words = [name]
        if isinstance(receiver, cst.Name):
            words += [dotted_name(loop.iter) or "" for loop in F.descendants(body)
                      if isinstance(loop, cst.For) and isinstance(loop.target, cst.Name)
                      and loop.target.value == receiver.value]
        return any(part in word.rsplit(".", 1)[-1].lower() for word in words for part in ("optim", "sched", "scaler"))

    def _holds_no_tensor(self, saved: cst.BaseExpression) -> bool:
        """Is what ``torch.save`` writes a run's arguments, holding no tensor: the namespace
        ``parser.parse_args()`` returns, or an instance of a plain-field ``@dataclass`` of the
        project (a parameter annotated with it, or ``self.x`` that ``__init__`` sets from one)?"""
        facts = self.facts
        function = facts.function
        name = dotted_name(saved)
        if name is None or function is None:
            return False
        if name.startswith("self.") and name.count(".") == 1 and function.class_info is not None:
            init = function.class_info.methods.get("__init__")
            stored = init.stored_values.get(name) if init is not None else None
            if not stored or len(stored) != 1 or type(stored[0]) is not cst.Name:
                return False
            return self._annotated_plain_record(init.node, stored[0].value)
        binding = facts.lookup(name)
        if binding is not None and isinstance(binding.node, cst.Call) and isinstance(binding.node.func, cst.Attribute) \
                and binding.node.func.attr.value == "parse_args":
            return True
        return "." not in name and self._annotated_plain_record(function.node, name)

    def _annotated_plain_record(self, definition: cst.CSTNode, parameter: str) -> bool:
        project = self.facts.project
        if project is None or not isinstance(definition, cst.FunctionDef):
            return False
        for param in F.all_parameters(definition.params):
            if param.name.value == parameter and param.annotation is not None:
                qualified = self.facts.qualified_name(param.annotation.annotation)
                if qualified and "." not in qualified and self.facts.module_name:
                    qualified = f"{self.facts.module_name}.{qualified}"  # a class of this module
                found = project.definition(qualified) if qualified else None
                return found is not None and found.kind == "class" and found.outline.classes[found.name].plain_record
        return False

    def _moved_to_cpu(self, saved: cst.BaseExpression, depth: int = 0) -> bool:
        """Is every tensor ``torch.save`` writes on the CPU? Moved there in the expression
        (``{k: v.cpu() for ...}``, ``model.cpu().state_dict()``, ``x.to("cpu")``), a dict whose every
        value is (a literal counts; any other value is taken for device state), a name bound in
        this function to such a value, or the state of an object moved to the CPU earlier in the
        function (``model.cpu(); torch.save(model.state_dict(), p)``)."""
        function = self.facts.function
        if depth > 4 or function is None:
            return False
        if F.literal_value(saved) is not F.NOT_A_LITERAL:
            return True
        if isinstance(saved, cst.DictComp):
            return self._moved_to_cpu(saved.value, depth + 1)
        if isinstance(saved, cst.IfExp):
            return self._moved_to_cpu(saved.body, depth + 1) and self._moved_to_cpu(saved.orelse, depth + 1)
        if isinstance(saved, cst.Dict):
            return all(isinstance(element, cst.DictElement) and self._moved_to_cpu(element.value, depth + 1)
                       for element in saved.elements)
        if isinstance(saved, cst.Call) and dotted_name(saved.func) == "dict" and all(arg.keyword is not None
                                                                              for arg in saved.args):
            return all(self._moved_to_cpu(arg.value, depth + 1) for arg in saved.args)
        if isinstance(saved, cst.Call) and self.facts.qualified_name(saved.func) in ("dict", "collections.OrderedDict") \
                and len(saved.args) == 1 and saved.args[0].keyword is None and not saved.args[0].star:
            pairs = saved.args[0].value  # OrderedDict([[k, v.cpu()] for k, v in state.items()])
            if isinstance(pairs, (cst.ListComp, cst.GeneratorExp)) and isinstance(pairs.elt, (cst.List, cst.Tuple)) \
                    and len(pairs.elt.elements) == 2:
                return self._moved_to_cpu(pairs.elt.elements[1].value, depth + 1)
            return False
        if isinstance(saved, cst.Call) and isinstance(saved.func, cst.Attribute):
            if saved.func.attr.value == "cpu" or (saved.func.attr.value == "to" and _mentions_cpu(saved)):
                return True
            chain = saved.func.value
            while isinstance(chain, cst.Call) and isinstance(chain.func, cst.Attribute):
                if chain.func.attr.value == "cpu" or (chain.func.attr.value == "to" and _mentions_cpu(chain)):
                    return True  # model.cpu().state_dict(), model.cpu().eval().state_dict()
                chain = chain.func.value
            receiver = F.without_self_returning_calls(saved.func.value)
            moved = dotted_name(receiver)
            if moved is not None and any(moved == name or moved.startswith(name + ".")
                                         for name in function.moved_to_cpu):
                return True  # model.cpu(); ...model.state_dict() (or model.module.state_dict())
            return saved.func.attr.value == "state_dict" and self._built_here_on_the_cpu(receiver)
        if isinstance(saved, cst.Name):
            if self._slots_moved_to_cpu(saved.value, function):
                return True  # for key in state.keys(): state[key] = state[key].cpu()
            values = function.stored_values.get(saved.value, ())
            return bool(values) and all(self._moved_to_cpu(value, depth + 1) for value in values)
        return False

    @staticmethod
    def _slots_moved_to_cpu(name: str, function: F.FunctionScope) -> bool:
        """Does a loop of ``function`` over ``name``'s keys rewrite every slot as its own copy on
        the CPU (``for key in state.keys(): state[key] = state[key].cpu()``, ``for key, param in
        state.items(): state[key] = param.cpu()``)?"""
        if not isinstance(function.node, cst.FunctionDef):
            return False
        for node in F.descendants(function.node):
            if not isinstance(node, cst.For):
                continue
            iterable, method = node.iter, None
            if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
                    and iterable.func.attr.value in ("keys", "items") and not iterable.args:
                iterable, method = iterable.func.value, iterable.func.attr.value
            if dotted_name(iterable) != name:
                continue
            if isinstance(node.target, cst.Name) and method != "items":
                key = node.target.value
            elif method == "items" and isinstance(node.target, (cst.Tuple, cst.List)) \
                    and len(node.target.elements) == 2 and isinstance(node.target.elements[0].value, cst.Name):
                key = node.target.elements[0].value.value
            else:
                continue
            for statement in F.descendants(node.body):
                if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
                    continue
                target = statement.targets[0].target
                if isinstance(target, cst.Subscript) and dotted_name(target.value) == name \
                        and F.names_in(target.slice[0].slice.value if isinstance(target.slice[0].slice, cst.Index)
                                       else target) == {key} \
                        and isinstance(statement.value, cst.Call) and isinstance(statement.value.func, cst.Attribute) \
                        and (statement.value.func.attr.value == "cpu"
                             or (statement.value.func.attr.value == "to" and _mentions_cpu(statement.value))):
                    return True
        return False

    def _built_here_on_the_cpu(self, receiver: cst.BaseExpression) -> bool:
        """``vgg = Vgg16()`` in this function, never moved (``vgg.cuda()``), rebound to anything
        else or handed to a call (which may move it): its ``state_dict()`` holds CPU tensors."""
        facts = self.facts
        function = facts.function
        if not isinstance(receiver, cst.Name) or receiver.value in function.moved_off_cpu:
            return False
        name = receiver.value
        values = function.stored_values.get(name, ())
        if not values or not all(isinstance(value, cst.Call) and facts.is_module_constructor(value)
                                 # not a module's own method (model.cuda(), Net().to(device))
                                 and not (isinstance(value.func, cst.Attribute) and facts.is_module_expr(value.func.value))
                                 and not _MOVING_ARGUMENTS.intersection(
                                     arg.keyword.value for arg in value.args if arg.keyword is not None)
                                 for value in values):
            return False
        stack: list[cst.CSTNode] = [function.node]
        while stack:
            current = stack.pop()
            if isinstance(current, cst.Call) and any(
                    isinstance(arg.value, cst.Name) and arg.value.value == name for arg in current.args):
                return False  # prepare(vgg), DataParallel(vgg): what the callee does to it is not seen
            stack.extend(current.children)
        return True

    def _value_facts_of_call(self, node: cst.Call, func: cst.BaseExpression, method: str | None) -> None:
        """What a call says about the values it touches: ``losses.append(loss)`` puts ``loss``
        into ``losses``; ``clf(x)`` makes ``clf`` a callable, not a tensor; ``net.parameters()``
        makes ``net`` a module."""
        facts = self.facts
        if method is None:
            if type(func) is cst.Name:
                binding = facts.lookup(func.value)
                if binding is not None and binding.kind is Kind.VALUE:
                    binding.called = True
            return
        receiver = func.value
        if method in ("cpu", "cuda", "to") and facts.function is not None and self._statement \
                and _alone_on_its_line(self._statement[-1], node):
            moved = dotted_name(receiver)  # model.cpu(): a module moves in place (its state with it)
            if moved is not None:
                if method == "cpu" or _mentions_cpu(node):
                    facts.function.moved_to_cpu.add(moved)
                else:
                    facts.function.moved_to_cpu.discard(moved)
                    facts.function.moved_off_cpu.add(moved)
        if _stores_for_callers(facts.function):
            self._object_call(node, receiver, method)
        if method in _STORING_METHODS:
            positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
            index = _STORING_METHODS[method]
            if len(positional) > index and (method != "update" or _holds_a_dict(receiver, facts)):
                value = positional[index]
                graph = facts.graph_value(value)
                self._store(receiver, value, graph.element if method in ("extend", "update") else graph)
            elif method == "update" and positional == [] and node.args and _holds_a_dict(receiver, facts):
                for arg in node.args:  # d.update(loss=loss)
                    self._store(receiver, arg.value, facts.graph_value(arg.value))
        elif method in _MODULE_ONLY_METHODS:
            dotted = dotted_name(receiver)
            binding = facts.lookup(dotted) if dotted is not None else None
            if binding is not None and binding.kind is Kind.VALUE:
                binding.kind = Kind.MODULE
            if dotted is not None and facts.function is not None:
                self._attributes_holding_a_module(dotted, facts.function)
        dotted = dotted_name(func)
        if dotted is not None and dotted.startswith("self.") and dotted.count(".") == 1:
            binding = facts.lookup(dotted)
            if binding is not None and binding.kind is Kind.VALUE:
                binding.called = True

    def _store(self, container: cst.BaseExpression, value: cst.BaseExpression, graph: GraphValue,
               key: object = None, derive: bool = True, slot: cst.Subscript | None = None) -> None:
        """``container`` now also holds ``value`` (``losses.append(loss)``, ``stats["loss"] = loss``,
        ``h.setdefault("loss", []).append(loss)``): what is pulled out of it later carries what
        was put in; a constant ``key`` of a dict whose keys are all known updates that part."""
        facts = self.facts
        root = F.storage_name(container)
        if root is None:
            return
        function = facts.function
        place = F.place_of(container)
        function.stored_values.setdefault(root, []).append(value)
        if place is not None and place != root:
            function.stored_values.setdefault(place, []).append(value)
        # losses.append(loss) then sum(losses).backward(): the loss flows into the backward pass.
        # Not for a slot of a buffer (obs[step] = next_obs): read back as a model's input, it
        # says nothing of what was stored.
        if derive and "." not in root:
            function.derived_from.setdefault(root, set()).update(facts.graph_names_in(value))
        binding = facts.lookup(root)
        if binding is None or binding.kind is Kind.MODULE:
            return
        old = binding.graph
        if isinstance(key, str) and old.parts is not None and dotted_name(container) == root:
            parts = [(k, part) for k, part in old.parts if k != key] + [(key, graph)]
            binding.graph = GraphValue.container(parts)
        elif slot is not None and self._every_slot_in_turn(slot, root):
            # for key, value in losses.items(): losses[key] = value.item(): every slot rebound
            binding.graph = GraphValue.container((k, graph) for k, _ in old.parts) if old.parts is not None \
                else graph.element
        else:
            binding.graph = GraphValue.combine((old.element, graph.element))

    def _every_slot_in_turn(self, container: cst.BaseExpression, root: str) -> bool:
        """Is ``container`` (a slot) ``root[key]``, stored unconditionally in a loop whose target ``key``
        walks ``root``'s keys (``for key in d``, ``d.keys()``, ``d.items()``, through ``enumerate`` /
        ``list``)? After the loop every slot holds what the body put there."""
        loop = self.facts.loop
        if loop is None or type(container) is not cst.Subscript or dotted_name(container.value) != root \
                or len(self.facts.branch_path) != loop.branch_depth or not isinstance(loop.node, cst.For):
            return False
        key = F.subscript_key_name(container)
        if key is None or key not in loop.target_names:
            return False
        for statement in F.block_statements(loop.node.body):
            if any(part is container for part in F.descendants(statement)):
                break
            if any(isinstance(part, (cst.Continue, cst.Break, cst.Return, cst.Raise))
                   for part in F.descendants(statement)):
                return False  # some keys may skip the store (if key == "loss": continue)
        walked = loop.node.iter
        while isinstance(walked, cst.Call) and dotted_name(walked.func) in ("enumerate", "list", "sorted") \
                and walked.args:
            walked = walked.args[0].value
        if isinstance(walked, cst.Call) and isinstance(walked.func, cst.Attribute) \
                and walked.func.attr.value in ("items", "keys") and not walked.args:
            walked = walked.func.value
        return dotted_name(walked) == root

    # ----- what a method keeps of its parameters in its object (Facts.stores_of) --------------
    def _keep_in_object(self, container: cst.BaseExpression, value: cst.BaseExpression, appends: bool) -> None:
        """``container`` (``self.sum``, ``self.history``, ``self.sums[i]``) keeps ``value`` from
        call to call: note which parameters of the method reach it."""
        facts = self.facts
        function = facts.function
        if not _stores_for_callers(function):
            return
        name = F.storage_name(container)
        if name is None or not name.startswith("self.") or F.bounded_container(name, function):
            return
        carried, partial, via = facts.parameters_carried(value)
        for parameter in sorted(carried):
            function.self_stores.append(F.Store(parameter, name, appends, partial=partial, partial_via=via))

    def _running_update_in_object(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """``self.total = self.total + val``, ``self.feats = torch.cat([self.feats, val])``."""
        name = dotted_name(target)
        if name is None or not name.startswith("self.") or not _stores_for_callers(self.facts.function):
            return
        if isinstance(value, cst.BinaryOperation) and name in {dotted_name(op) for op in F.operands(value)}:
            self._keep_in_object(target, value, appends=False)
        elif F.concatenated_onto(value, name, self.facts):
            self._keep_in_object(target, value, appends=True)

    def _object_call(self, node: cst.Call, receiver: cst.BaseExpression, method: str) -> None:
        """A call, in a method, on ``self`` or on something ``self`` holds: an append into a
        list it keeps (``self.history.append(v)``), or a method that may keep what it is given
        (``self.meters[k].update(v)``, ``self._log(v)``), resolved at the end (Facts.stores_of)."""
        facts = self.facts
        holder = F.storage_name(receiver)
        if holder is None or not (holder == "self" or holder.startswith("self.")):
            return
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        if method in _KEEPING_METHODS:
            index = _KEEPING_METHODS[method]
            if holder != "self" and len(positional) > index:
                self._keep_in_object(receiver, positional[index], appends=method != "add_")
            return
        info = facts.class_info
        if holder == "self":
            if info is None or not facts.methods_of(info.name, method):
                return  # self.encoder(x): a module it holds, not a method
        else:
            binding = info.attributes.get(holder.split("[", 1)[0]) if info is not None else None
            if binding is not None and binding.kind is Kind.MODULE:
                return
        if any(arg.star for arg in node.args):
            return
        arguments = []
        partial: set[str] = set()
        for index, arg in enumerate(node.args):
            carried, some_paths, _ = facts.parameters_carried(arg.value)
            if carried:
                arguments.append((index if arg.keyword is None else arg.keyword.value, carried))
                if some_paths:
                    partial |= carried
        if arguments:
            facts.function.forwards.append(F.Forward(receiver, method, tuple(arguments), holder, frozenset(partial)))

    def _freeze(self, parameter: cst.BaseExpression) -> None:
        """``p.requires_grad = False`` / ``p.requires_grad_(False)`` / ``p.detach_()`` inside
        ``for p in m.parameters()``: ``m`` is frozen."""
        name = dotted_name(parameter)
        for loop in self.facts.loops_in_function():
            if name in loop.target_names and loop.parameters_of is not None:
                self.facts.frozen_modules.add(loop.parameters_of)
                _note_frozen_parameter(self.facts.function, loop.parameters_of)
                if self.facts.function is not None:
                    self.facts.function.frozen_here.add(loop.parameters_of)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression, graph: GraphValue) -> None:
        facts = self.facts
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            by_position = (graph.parts is None or len(graph.parts) == len(elements)) and not any(
                isinstance(element, cst.StarredElement) for element in elements)
            # loss, sample_size, log = criterion(model, sample), loss, kl, acc = model(batch): the
            # outputs of a module whose forward memlint cannot read: only the first is known to
            # carry a graph (the others may be numbers); not for torch.nn's own (lstm's (out, (h, c)))
            unread_outputs = graph.parts is None and not graph.pending and graph.state is not Graph.NONE \
                and isinstance(value, cst.Call) and facts.outputs_unknown_after_first(value)
            fed_back = names_in(value) if unread_outputs else set()
            for index, element in enumerate(elements):  # out, (h, c) = lstm(x, state): each its own part
                part = graph.part(index) if by_position else None
                if unread_outputs and index > 0 and not names_in(element.value) & fed_back:
                    # (a state passed in and handed back, as ``logits, (h, c) = policy(obs, (h, c))``,
                    # is the module's recurrent state: a tensor it computed)
                    part = F.UNKNOWN_VALUE
                self._bind(element.value, value, part if part is not None else graph.element)
            return
        if isinstance(target, cst.StarredElement):
            self._bind(target.value, value, graph.element)
            return
        if isinstance(target, cst.Name):
            mode = grad_mode_of(value, facts)
            if mode is not None:
                facts.grad_mode_names[target.value] = mode  # ctx = torch.no_grad; with ctx(): ...
            else:
                facts.grad_mode_names.pop(target.value, None)
        if isinstance(target, cst.Subscript):  # stats["loss"] = loss: the container holds it
            slot = F.place_of(target)
            if slot is not None and graph.state is Graph.NONE and facts.function is not None:
                facts.function.graph_free_slots.add(slot)
            self._store(target.value, value, graph, F.subscript_key(target), derive=False, slot=target)
            return
        kind = Kind.MODULE if _binds_module(target, value, graph, facts) else Kind.VALUE
        loop = facts.loop
        binding = Binding(kind, graph, value, loop)
        if isinstance(target, cst.Name):
            facts.scope.bindings[target.value] = binding
            for enclosing in facts.loops_in_function():
                enclosing.bound_this_iteration.add(target.value)
                enclosing.bound_in_arms.setdefault(target.value, []).append(tuple(facts.branch_path))
            function = facts.function
            derived = facts.graph_names_in(value)
            if target.value in derived or facts.branch_path:
                # x = x[:, :n]: still computed from what x was; and an assignment in one branch of
                # an ``if`` leaves what the other branch bound on the paths through it
                derived |= function.derived_from.get(target.value, set())
            function.derived_from[target.value] = derived
            function.stored_values.setdefault(target.value, []).append(value)
            _note_graph_binding(function, target.value, graph)
        elif isinstance(target, cst.Attribute):
            dotted = dotted_name(target)
            if target.attr.value == "requires_grad" and _is_false(value):
                self._freeze(target.value)
            elif target.attr.value == "requires_grad" and _is_true(value) and facts.function is not None \
                    and not facts.is_module_expr(target.value) and not _unfreezes_parameters(target.value, facts):
                facts.function.requires_grad_inputs = True  # img.requires_grad = True: input gradients wanted
            if dotted is not None and dotted.startswith("self."):  # self.penalty = ...; loss + self.penalty
                facts.function.derived_from[dotted] = facts.graph_names_in(value)
                facts.function.stored_values.setdefault(dotted, []).append(value)
            info = facts.class_info
            if dotted and info is not None and dotted.startswith("self.") and dotted.count(".") == 1:
                previous = info.attributes.get(dotted)
                if previous is not None and previous.kind is Kind.MODULE and kind is not Kind.MODULE:
                    return  # keep what __init__ said
                info.attributes[dotted] = binding
            if dotted:
                for enclosing in facts.loops_in_function():
                    enclosing.bound_this_iteration.add(dotted)


# method -> which positional argument goes into the receiver
_STORING_METHODS = {"append": 0, "appendleft": 0, "extend": 0, "insert": 1, "add": 0, "add_": 0, "update": 0}
# Methods only an nn.Module has: their receiver is a module, not a tensor.
_MODULE_ONLY_METHODS = frozenset({
    "parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules", "children",
    "named_children", "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_backward_hook", "register_full_backward_pre_hook",
})


def _exported_stores(scope: FunctionScope, facts: Facts) -> tuple[tuple[str, str, bool, bool, tuple[str, ...]], ...]:
    """What a method keeps of its parameters, for other modules (``**kwargs`` / ``*args`` named
    with their stars, which their outlines do not record)."""
    if scope.class_info is None or type(scope.node) is not cst.FunctionDef:
        return ()
    params = scope.node.params
    stars = {params.star_kwarg.name.value: "**"} if params.star_kwarg is not None else {}
    if isinstance(params.star_arg, cst.Param):
        stars[params.star_arg.name.value] = "*"
    return tuple(sorted((stars.get(parameter, "") + parameter, store.attribute, store.appends, store.partial,
                         tuple(sorted(store.partial_via)))
                        for parameter, store in facts.stores_of(scope).items()))


# Methods that keep their argument in the container they are called on (set.add and dict.update
# left out: on an object of a class, ``add``/``update`` are its methods, followed as calls).
_KEEPING_METHODS = {"append": 0, "appendleft": 0, "extend": 0, "insert": 1, "add_": 0}


def _stores_for_callers(function: FunctionScope) -> bool:
    """Is ``function`` a method whose callers may leave something in its object (not
    ``__init__`` or another dunder, not a per-step method, which is a finding of its own)?"""
    return (function.class_info is not None and function.parameters != () and type(function.node) is cst.FunctionDef
            and not function.name.startswith("__") and not function.is_per_step_method
            and bool(function.node.params.params) and function.node.params.params[0].name.value == "self")


def _holds_a_dict(node: cst.BaseExpression, facts: Facts) -> bool:
    """Is ``node`` bound to a dict (``d.update(...)`` stores into it; ``meter.update(v)`` does not)?"""
    dotted = dotted_name(node)
    binding = facts.lookup(dotted) if dotted is not None else None
    if binding is None:
        return False
    value = binding.node
    if isinstance(value, (cst.Dict, cst.DictComp)):
        return True
    return isinstance(value, cst.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] in (
        "dict", "defaultdict", "OrderedDict", "Counter")


def _without_comments(code: str) -> str:
    """A statement's code less its comments (``# eval_auc = evaluation(...)`` calls nothing); as it
    is when Python cannot tokenize it."""
    if "#" not in code:
        return code
    try:
        tokens = [token for token in tokenize.generate_tokens(io.StringIO(code).readline)
                  if token.type != tokenize.COMMENT]
        return tokenize.untokenize(tokens)
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError):
        return code


def _is_main_guard(statement: cst.CSTNode) -> bool:
    """``if __name__ == "__main__":``"""
    if not isinstance(statement, cst.If) or not isinstance(statement.test, cst.Comparison):
        return False
    test = statement.test
    parts = [test.left, *(target.comparator for target in test.comparisons)]
    return any(isinstance(p, cst.Name) and p.value == "__name__" for p in parts) and any(
        isinstance(p, cst.SimpleString) and p.evaluated_value == "__main__" for p in parts)


def _parses_the_command_line(statement: cst.CSTNode) -> bool:
    """A top-level ``args = parser.parse_args()`` (or ``parse_known_args``)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        value = getattr(small, "value", None)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                value.func.attr.value in ("parse_args", "parse_known_args"):
            return True
    return False


# ----- function summaries ---------------------------------------------------------------------
def _summary(scope: FunctionScope) -> GraphValue:
    """What calls of a function get back, in terms of its parameters (see Facts.summary_form);
    a value it backpropagates itself (``loss.backward(); return loss``) carries a graph."""
    if scope.is_generator:
        return GraphValue(Graph.UNKNOWN, frozenset({F.OPAQUE}), None, frozenset(), Graph.UNKNOWN)
    result = _joined_returns(scope, zip(scope.returns, scope.return_shapes))
    if result is not None and scope.graphless_return and len(scope.returns) > 1:
        return result.on_some_paths()  # return loss on one path, loss.item() on another
    return result if result is not None else NO_GRAPH


def _joined_returns(scope: FunctionScope, returns: Iterable[tuple[tuple[GraphValue, GraphValue], int | str | None]]
                    ) -> GraphValue | None:
    """What the ``return`` statements hand back, joined. When some return a tuple of n values and
    every other one returns a single tensor or number (``return F.mse_loss(a, b)`` on one path,
    ``return loss, mask, labels`` on another), a caller unpacking n names gets the tuple's parts: a
    single tensor does not unpack into them; the whole still carries what every return does."""
    result: GraphValue | None = None
    tuples: GraphValue | None = None
    singles: list[GraphValue] = []
    arities: set[int | str | None] = set()
    for (raw, form), shape in returns:
        settled = _settle(raw, form, scope)
        result = settled if result is None else result.join(settled)
        arities.add(shape)
        if shape == ONE_VALUE:
            singles.append(settled)
        elif isinstance(shape, int) and settled.parts is not None:
            tuples = settled if tuples is None else tuples.join(settled)
    numbers = {shape for shape in arities if isinstance(shape, int)}
    if tuples is None or not singles or len(numbers) != 1 or not arities <= numbers | {ONE_VALUE} \
            or tuples.parts is None:
        return result
    whole = GraphValue.combine([tuples.element, *singles])
    return GraphValue(whole.state, whole.names, tuples.parts, whole.pending, whole.settled, whole.partial)


def _return_shape(value: cst.BaseExpression, facts: Facts) -> int | str | None:
    """See FunctionScope.return_shapes."""
    if isinstance(value, cst.Tuple):
        return None if any(isinstance(element, cst.StarredElement) for element in value.elements) \
            else len(value.elements)
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Integer, cst.Float)):
        return ONE_VALUE
    if isinstance(value, cst.Name) and value.value in ("None", "True", "False"):
        return ONE_VALUE
    if isinstance(value, cst.Call):
        qualified = facts.qualified_name(value.func) or ""
        if qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] not in _SEQUENCE_FUNCTIONS:
            return ONE_VALUE  # F.mse_loss(...), torch.cat(outputs, 1): one tensor
    return None


# torch functions that return a tuple or a list of tensors, or a module: not one tensor.
_SEQUENCE_FUNCTIONS = frozenset({
    "max", "min", "sort", "topk", "split", "chunk", "unbind", "meshgrid", "broadcast_tensors", "kthvalue", "mode",
    "median", "std_mean", "var_mean", "aminmax", "unique", "lstsq", "qr", "svd", "eig", "eigh", "slogdet",
    "histogram", "frexp", "tensor_split", "hsplit", "vsplit", "dsplit", "where", "nonzero", "load",
})
ONE_VALUE = "one"


def _eval_summary(scope: FunctionScope) -> GraphValue | None:
    """What a method returns when ``self.training`` is False, if some return of it depends on
    that flag (``if self.training: return self.loss(...)`` / ``with torch.no_grad(): return
    self.predict(...)``); None otherwise."""
    if scope.is_generator or "train" not in scope.return_modes:
        return None
    result = _joined_returns(scope, ((pair, shape) for pair, mode, shape in zip(scope.returns, scope.return_modes,
                                                                               scope.return_shapes)
                                     if mode != "train"))
    return result if result is not None else NO_GRAPH


def _training_branch(facts: Facts) -> str | None:
    """"train" / "eval" when the walk is inside a branch on ``self.training`` (``if
    self.training:``, ``if not self.training:``, and their ``else``), None otherwise."""
    for key, branch in facts.branch_path:
        node = facts.if_nodes.get(key)
        if node is None:
            continue
        test, negated = node.test, False
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, negated = test.expression, True
        if dotted_name(test) == "self.training":
            in_body = branch != "else"
            return "train" if in_body != negated else "eval"
    return None


def _settle(raw: GraphValue, form: GraphValue, scope: FunctionScope) -> GraphValue:
    if raw.parts is not None and form.parts is not None:
        return GraphValue.container((key, _settle(raw.part(key) or NO_GRAPH, part, scope)) for key, part in form.parts)
    if raw.state is Graph.UNKNOWN and raw.names and scope.is_backpropagated(raw.names):
        return F.CARRIES_VALUE
    return form


def _carried_only(value: GraphValue, parameters: tuple[str, ...]) -> GraphValue:
    """A loop target keeps only what certainly carries a graph (``for x, y in loader``: an
    unknown batch is data, not a graph), part by part (``for name, loss in losses.items()``),
    and what the function's parameters hand it (``for v in values``: what the caller passes
    decides, in the function's summary and the stores of its object)."""
    if value.parts is not None:
        return GraphValue.container((key, _carried_only(part, parameters)) for key, part in value.parts)
    if value.state is Graph.CARRIES:
        return value
    if value.pending:  # what a function below returns: decided with its summary
        return GraphValue(Graph.UNKNOWN, frozenset(), None, value.pending, Graph.NONE)
    given = value.names & set(parameters) if value.names and value.state is Graph.UNKNOWN else frozenset()
    return GraphValue(Graph.UNKNOWN, frozenset(given)) if given else NO_GRAPH


def _framework_backpropagated(function: FunctionScope, value: cst.BaseExpression, facts: Facts) -> cst.BaseExpression | None:
    """What a framework backpropagates from a ``return``: a Lightning ``training_step``'s loss
    (the value, or its ``"loss"`` key), a Hugging Face Trainer's ``compute_loss`` result
    (the loss, or the first of ``(loss, outputs)``)."""
    info = function.class_info
    if info is None or not isinstance(function.parent, ClassScope):
        return None
    if function.name == "training_step" and info.is_lightning:
        if isinstance(value, cst.Dict):
            return next((el.value for el in value.elements if isinstance(el, cst.DictElement)
                         and F.constant_key(el.key) == "loss"), None)
        return value
    if function.name == "compute_loss" and any(base.startswith("transformers") for base in info.base_names):
        if isinstance(value, cst.IfExp):  # (loss, outputs) if return_outputs else loss
            value = value.orelse
        if isinstance(value, cst.Tuple) and value.elements:
            return value.elements[0].value
        return value
    return None


# ----- helpers over nodes -----------------------------------------------------------------------
def _note_graph_binding(function: FunctionScope, name: str, graph: GraphValue) -> None:
    (function.bound_without_graph if graph.state is Graph.NONE else function.bound_with_graph).add(name)


_FILLING_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "appendleft"})


def _note_filled(function: FunctionScope, container: cst.BaseExpression) -> None:
    """A container (or buffer) filled in place may hold graphs whatever it was bound to."""
    while isinstance(container, (cst.Subscript, cst.Attribute)) and dotted_name(container) is None:
        container = container.value
    name = dotted_name(container)
    if name is not None:
        function.bound_with_graph.add(name.split(".", 1)[0] if "." not in name else name)


def _element_pairs(target: cst.BaseExpression, value: cst.BaseExpression
                   ) -> list[tuple[cst.BaseExpression, cst.BaseExpression]] | None:
    """``a, b = x, y`` -> [(a, x), (b, y)]; None unless both sides are plain tuples/lists of
    the same length."""
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))):
        return None
    if len(target.elements) != len(value.elements):
        return None
    if any(isinstance(el, cst.StarredElement) for el in (*target.elements, *value.elements)):
        return None
    return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
def _attribute_text(node: cst.BaseExpression) -> str:
    return dotted_name(node) or ""


def _binds_module(target: cst.BaseExpression, value: cst.BaseExpression, graph: GraphValue, facts: Facts) -> bool:
    """Does ``target = value`` bind an nn.Module? A constructor (``nn.Linear(...)``, a module
    class of this file, ``from_pretrained``), an alias of a module, or a conventional module
    name (``model = build_model()``, ``model = accelerator.prepare(model)``)."""
    if isinstance(target, cst.Subscript):
        return False
    if isinstance(value, cst.Call) and facts.is_module_constructor(value):
        return True
    if isinstance(value, (cst.Name, cst.Attribute)) and dotted_name(value) is not None and facts.is_module_expr(value):
        return True
    name = dotted_name(target)
    if name is None or graph.state is Graph.CARRIES:
        return False
    if isinstance(value, cst.Name):
        binding = facts.lookup(value.value)
        param = binding.node if binding is not None else None
        if isinstance(param, cst.Param) and param.annotation is not None \
                and _annotated_kind(param.annotation.annotation, facts) is Kind.VALUE:
            return False  # self._model = model, with model: EnvModel (a class known not to be a module)
    if isinstance(value, cst.Call):
        qualified = facts.qualified_name(value.func) or ""
        if qualified.startswith("torch.") and facts._is_imported(qualified):
            return False  # torch.Generator(), torch.zeros(...): not a module, whatever the name
        if facts.is_module_expr(value.func):
            return False  # model_out = lw_model(x): what a module's call returns, whatever the name
    return F.is_module_name(name.rsplit(".", 1)[-1]) and isinstance(value, (cst.Call, cst.Name, cst.Attribute))


def _annotated_kind(annotation: cst.BaseExpression, facts: Facts) -> Kind | None:
    """What a parameter's annotation says it is: a module (``nn.Module``, a class whose bases make
    it one), a value (a builtin type, a class known not to be a module), or None (unknown)."""
    if isinstance(annotation, cst.Subscript) and dotted_name(annotation.value) in ("Optional", "typing.Optional") \
            and len(annotation.slice) == 1 and isinstance(annotation.slice[0].slice, cst.Index):
        annotation = annotation.slice[0].slice.value  # Optional[nn.Module]
    name = dotted_name(annotation)
    if name is None:
        return None
    if "." not in name and name in facts.class_nodes and name not in facts.classes:
        return None  # a class of this file not read yet
    if "." not in name and hasattr(builtins, name):
        return Kind.VALUE  # int, str, float, dict...
    qualified = facts.qualified_name(annotation) or name
    kinds = _class_kinds((qualified if "." in qualified else name,), facts)
    if kinds.module:
        return Kind.MODULE
    return None if kinds.unknown_base else Kind.VALUE


def _class_kinds(bases: tuple[str, ...], facts: Facts) -> ClassKinds:
    """What a class with these (qualified) bases is: through the classes of this module, the
    project's other modules, and the framework classes memlint knows."""
    kinds = PLAIN
    project = facts.project
    for base in bases:
        local = facts.classes.get(base) or facts.classes.get(base.rsplit(".", 1)[-1]) if "." not in base else None
        if local is not None:
            kinds = kinds.join(local.kinds)
            continue
        if not base:
            kinds = kinds.join(ClassKinds(unknown_base=True))  # a base computed by an expression
            continue
        definition = project.definition(base) if project is not None and "." in base else None
        if definition is not None:
            kinds = kinds.join(project.class_kinds(definition.qualified) if definition.kind == "class"
                               else ClassKinds(unknown_base=True))
        else:
            kinds = kinds.join(external_kinds(base))
    return kinds


def _is_module_base(base: str, facts: Facts) -> bool:
    if not base:
        return False
    last = base.rsplit(".", 1)[-1]
    if base in facts.classes:
        return facts.classes[base].is_module
    if base.startswith("torch.nn.") or base.startswith(("lightning", "pytorch_lightning", "transformers")):
        return last.endswith(F.MODULE_BASE_SUFFIXES) or last in ("Module", "LightningModule")
    return last in ("Module", "LightningModule", "PreTrainedModel")


def grad_mode_of(node: cst.BaseExpression, facts: Facts) -> GradMode | None:
    """The grad mode a context manager or decorator sets, or None when it sets none (the
    region keeps the mode around it): ``torch.no_grad()`` / ``torch.no_grad`` /
    ``torch.inference_mode()`` -> OFF; ``torch.enable_grad()`` -> ON;
    ``torch.set_grad_enabled(True / False / flag)`` -> ON / OFF / MAYBE_OFF; a conditional
    expression whose branches differs (``nullcontext() if sync else torch.no_grad()``) ->
    MAYBE_OFF; a name bound to one of these -> its mode."""
    if isinstance(node, cst.IfExp):
        modes = {grad_mode_of(node.body, facts), grad_mode_of(node.orelse, facts)}
        if len(modes) == 1:
            return modes.pop()
        return GradMode.MAYBE_OFF if any(mode is not None and mode.may_be_off for mode in modes) else None
    call_args: Sequence[cst.Arg] = ()
    if isinstance(node, cst.Call):
        call_args = node.args
        node = node.func
    name = dotted_name(node)
    if name is not None and name in facts.grad_mode_names:
        return facts.grad_mode_names[name]
    qualified = facts.qualified_name(node)
    if qualified is None:
        return None
    if qualified in F.NO_GRAD_CONTEXTS:
        if qualified.endswith("inference_mode") and call_args and _is_false(call_args[0].value):
            return None  # inference_mode(False) leaves grad mode alone
        return GradMode.OFF
    if qualified in F.ENABLE_GRAD:
        return GradMode.ON
    if qualified in F.SET_GRAD_ENABLED and call_args:
        flag = call_args[0].value
        return GradMode.ON if _is_true(flag) else GradMode.OFF if _is_false(flag) else GradMode.MAYBE_OFF
    return None


def _draws_from_an_iterator(value: cst.BaseExpression, facts: Facts) -> bool:
    """``next(loader_iter)``, ``next(iter(loader))``: the builtin ``next`` (not shadowed)."""
    return (type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == "next"
            and facts.lookup("next") is None)


# Tensor methods whose result is the same tensor (or its pieces) seen another way: a loop over it
# walks the rows of one value.
_ROW_VIEWS = frozenset({"unsqueeze", "view", "reshape", "split", "chunk", "unbind", "tensor_split", "flatten",
                        "transpose", "permute", "squeeze"})


def _short_circuit(test: cst.BaseExpression) -> bool | None:
    """The value of ``True or x`` (``(True or a) or b``), ``False and x``: decided by literals
    as Python evaluates it left to right; None when a non-literal part decides."""
    if isinstance(test, cst.BooleanOperation):
        left = _short_circuit(test.left)
        if left is None:
            return None
        if left == isinstance(test.operator, cst.Or):
            return left
        return _short_circuit(test.right)
    value = F.literal_value(test)
    return None if value is F.NOT_A_LITERAL else bool(value)


def _leaves_after_one(block: cst.BaseSuite) -> bool:
    """Does a loop body end with an unconditional ``break`` and hold no ``continue`` of its own
    (``for batch in loader: model(batch); break``: a dry run on the first batch)? The loop runs at
    most once."""
    statements = block.body if isinstance(block, cst.IndentedBlock) else ()
    if not statements or not isinstance(statements[-1], cst.SimpleStatementLine) or not any(
            isinstance(small, cst.Break) for small in statements[-1].body):
        return False
    stack: list[cst.CSTNode] = list(statements)
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Continue):
            return False
        if isinstance(current, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue  # an inner loop's continue is its own
        stack.extend(current.children)
    return True


def _flag_attributes(test: cst.BaseExpression) -> set[str] | None:
    """The ``self.<name>`` a test reads when it is only such reads, negated, compared with a
    literal, or joined by ``and`` / ``or`` (the tests F.value_with_defaults decides); else None."""
    if type(test) is cst.Attribute:
        value = test.value
        return {f"self.{test.attr.value}"} if type(value) is cst.Name and value.value == "self" else None
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return _flag_attributes(test.expression)
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        return _flag_attributes(test.left)
    if type(test) is cst.BooleanOperation:
        left, right = _flag_attributes(test.left), _flag_attributes(test.right)
        return left | right if left is not None and right is not None else None
    return None


_PROGRAM_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})


def _exits_when_many_gpus(node: cst.If, facts: Facts, module: cst.Module) -> bool:
    """``if torch.cuda.device_count() > 1: sys.exit()`` (also ``>= 2``, ``!= 1``, through a name or
    attribute the function bound to the count, ``opt.num_gpu = torch.cuda.device_count()``): a
    branch taken with more than one GPU visible that ends the program."""
    test = node.test
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    operator, bound = test.comparisons[0].operator, test.comparisons[0].comparator
    limit = bound.evaluated_value if type(bound) is cst.Integer else None
    if not (type(operator) is cst.GreaterThan and limit == 1 or type(operator) is cst.GreaterThanEqual and limit == 2
            or type(operator) is cst.NotEqual and limit == 1):
        return False
    counted = test.left
    if type(counted) in (cst.Name, cst.Attribute):
        scope = module if facts.function is facts.module_scope else facts.function.node
        values = _values_bound_to(dotted_name(counted) or "", scope)
        if len(values) != 1:
            return False
        counted = values[0]
    if type(counted) is not cst.Call or facts.qualified_name(counted.func) != "torch.cuda.device_count":
        return False
    statements = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    last = statements[-1] if statements else None
    if not isinstance(last, cst.SimpleStatementLine):
        return False
    return any(type(small) is cst.Raise or type(small) is cst.Expr and type(small.value) is cst.Call
               and facts.qualified_name(small.value.func) in _PROGRAM_EXITS for small in last.body)


def _values_bound_to(name: str, scope_node: cst.CSTNode) -> list[cst.BaseExpression]:
    """The values plain assignments in ``scope_node`` (not in the functions or classes it defines)
    bind to the name or attribute ``name`` (``opt.num_gpu = ...``)."""
    values: list[cst.BaseExpression] = []
    stack: list[cst.CSTNode] = list(scope_node.body.body if isinstance(scope_node, cst.FunctionDef)
                                    and isinstance(scope_node.body, cst.IndentedBlock) else scope_node.children)
    while stack:
        current = stack.pop()
        if type(current) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(current) is cst.Assign:
            values.extend(current.value for target in current.targets if dotted_name(target.target) == name)
            continue
        if isinstance(current, (cst.BaseSuite, cst.BaseCompoundStatement, cst.SimpleStatementLine, cst.Else)):
            stack.extend(current.children)
    return values


def _always_leaves(block: cst.BaseSuite) -> bool:
    """Does the block end with ``return`` / ``break`` / ``continue`` / ``raise``?"""
    statements = block.body if isinstance(block, cst.IndentedBlock) else ()
    if isinstance(block, cst.SimpleStatementSuite):
        smalls = block.body
    elif statements and isinstance(statements[-1], cst.SimpleStatementLine):
        smalls = statements[-1].body
    else:
        return False
    return any(isinstance(small, (cst.Return, cst.Break, cst.Continue, cst.Raise)) for small in smalls)


def _exits_on_success(block: cst.BaseSuite) -> bool:
    """Does the loop body hold a ``try`` whose block ends by leaving the loop (``return`` /
    ``break``)? It goes round again only when the ``except`` caught something: a retry."""
    body = block.body if isinstance(block, cst.IndentedBlock) else ()
    for statement in body:
        if isinstance(statement, cst.Try) and statement.body.body:
            last = statement.body.body[-1]
            if isinstance(last, cst.SimpleStatementLine) and any(
                    isinstance(small, (cst.Return, cst.Break)) for small in last.body):
                return True
    return False


def _decorator_grad_mode(scope: FunctionScope, facts: Facts) -> GradMode | None:
    """The grad mode ``@f`` gives what it decorates when ``f`` returns its argument wrapped by a
    grad-mode context: ``return torch.no_grad()(fn)``, ``return (torch.inference_mode if new else
    torch.no_grad)()(fn)``. None when it returns anything else."""
    modes = set()
    for value in scope.returned_nodes:
        wrapper = _nested_def(value, scope)
        if wrapper is not None:  # def wrapper(*a, **k): with torch.no_grad(): return fn(*a, **k)
            modes.add(_mode_around_calls(wrapper, set(scope.parameters), facts))
            continue
        if type(value) is not cst.Call or type(value.func) is not cst.Call or not any(
                type(arg.value) is cst.Name and arg.value.value in scope.parameters for arg in value.args):
            return None
        applied = value.func
        modes.add(grad_mode_of(applied.func if type(applied.func) is cst.IfExp and not applied.args else applied,
                               facts))
    return modes.pop() if len(modes) == 1 else None


def _nested_def(value: cst.BaseExpression, scope: FunctionScope) -> cst.FunctionDef | None:
    """The function defined in ``scope`` that ``value`` names (``return wrapper``)."""
    if type(value) is not cst.Name:
        return None
    binding = scope.bindings.get(value.value)
    node = binding.node if binding is not None else None
    return node if isinstance(node, cst.FunctionDef) else None


def _mode_around_calls(wrapper: cst.FunctionDef, callables: set[str], facts: Facts) -> GradMode | None:
    """The grad mode every call of one of ``callables`` in ``wrapper`` runs in, when a ``with``
    block inside it sets one for all of them (None if any runs outside such a block, or none
    is called)."""
    modes: list[GradMode | None] = []

    class _Calls(cst.CSTVisitor):
        def __init__(self) -> None:
            self.stack: list[GradMode | None] = []

        def visit_With(self, node: cst.With) -> None:
            found = [grad_mode_of(item.item, facts) for item in node.items]
            self.stack.append(next((mode for mode in found if mode is not None), None))

        def leave_With(self, node: cst.With) -> None:
            self.stack.pop()

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is wrapper

        def visit_Call(self, node: cst.Call) -> None:
            if type(node.func) is cst.Name and node.func.value in callables:
                modes.append(next((mode for mode in reversed(self.stack) if mode is not None), None))

    wrapper.visit(_Calls())
    return modes[0] if modes and all(mode is modes[0] for mode in modes) else None


def _factory_grad_mode(scope: FunctionScope, facts: Facts) -> GradMode | None:
    """The grad mode ``@f(...)`` gives what it decorates when ``f`` returns a decorator of its own
    (a nested function) that gives one."""
    modes = set()
    for value in scope.returned_nodes:
        binding = scope.bindings.get(value.value) if type(value) is cst.Name else None
        inner = facts.function_scopes.get(id(binding.node)) if binding is not None else None
        if inner is None:
            return None
        modes.add(inner.decorator_grad_mode)
    return modes.pop() if len(modes) == 1 else None


def _turns_grad_off(node: cst.BaseExpression, facts: Facts) -> bool:
    return grad_mode_of(node, facts) is GradMode.OFF


# numpy functions that convert a tensor (or a list of tensors) through ``Tensor.__array__``, which
# raises on a tensor that requires grad.
_NUMPY_FROM_TENSORS = frozenset({"numpy.array", "numpy.asarray", "numpy.stack", "numpy.concatenate", "numpy.vstack",
                                 "numpy.hstack"})
# Tensor methods that keep requires_grad (``x.cpu().numpy()`` still raises on a graph-carrying x).
_KEEPING_GRAD = frozenset({"cpu", "to", "float", "double", "half", "bfloat16", "contiguous", "clone", "squeeze",
                           "unsqueeze", "view", "reshape", "flatten", "t", "permute"})


def _numpy_converted(receiver: cst.BaseExpression) -> str | None:
    """The name ``receiver`` of ``.numpy()`` reads through methods that keep requires_grad
    (``mu.cpu()``), or None (``x.detach().cpu()``, ``x.data``, anything else)."""
    while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
            and receiver.func.attr.value in _KEEPING_GRAD:
        receiver = receiver.func.value
    return dotted_name(receiver) if isinstance(receiver, (cst.Name, cst.Attribute)) and not (
        isinstance(receiver, cst.Attribute) and receiver.attr.value == "data") else None


def _non_tensor_receivers(expression: cst.BaseExpression) -> set[str]:
    """Objects an expression only calls a method of that no tensor has, given the values:
    ``scaler`` in ``scaler.scale(loss)`` (the graph is the argument's, not the scaler's)."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [expression]
    while stack:
        node = stack.pop()
        stack.extend(F.expression_children(node))
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.args \
                and node.func.attr.value not in F.TENSOR_API:
            receiver = dotted_name(node.func.value)
            if receiver is not None:
                found |= {receiver, f"{receiver}.{node.func.attr.value}"}
    return found


def _registries(module: cst.Module, functions: dict[str, cst.FunctionDef]) -> dict[str, list[cst.FunctionDef]]:
    """The module-level dicts of this module's functions that code calls through a key: a literal
    (``METRICS = {"fid": fid50k, "kid": kid50k}``), or one a registering decorator of the module
    fills (``def register_metric(fn): _metric_dict[fn.__name__] = fn; return fn``, then
    ``@register_metric`` on each)."""
    dicts: dict[str, list[cst.FunctionDef]] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)):
                continue
            value, name = small.value, small.targets[0].target.value
            if isinstance(value, cst.Dict):  # every value a function of the module, or not a registry
                members = [functions.get(element.value.value) if isinstance(element, cst.DictElement)
                           and isinstance(element.value, cst.Name) else None for element in value.elements]
                dicts[name] = members if all(member is not None for member in members) else []
            elif isinstance(value, cst.Call) and dotted_name(value.func) in ("dict", "collections.OrderedDict",
                                                                               "OrderedDict") and not value.args:
                dicts[name] = []
    if not dicts:
        return {}
    registering = {}  # decorator name -> the dict it fills with its argument
    for name, function in functions.items():
        params = function.params.params
        if len(params) != 1:
            continue
        parameter = params[0].name.value
        for node in _walk_statements(function.body):
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Subscript) \
                    and isinstance(node.targets[0].target.value, cst.Name) and node.targets[0].target.value.value in dicts \
                    and isinstance(node.value, cst.Name) and node.value.value == parameter:
                registering[name] = node.targets[0].target.value.value
    for function in functions.values():
        for decorator in function.decorators:
            if isinstance(decorator.decorator, cst.Name) and decorator.decorator.value in registering:
                dicts[registering[decorator.decorator.value]].append(function)
    return {name: members for name, members in dicts.items() if members}


def _walk_statements(block: cst.BaseSuite):
    """The small statements of a function body, nested blocks included (not nested functions)."""
    stack = [F.block_statements(block)]
    while stack:
        for statement in stack.pop():
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                yield from statement.body
            elif not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                stack.extend(F.nested_blocks(statement))


def _is_range(iterable: cst.BaseExpression | None, facts: Facts | None = None) -> bool:
    """``range(...)``, ``reversed(range(...))``, or a local bound to one (``steps = range(n)``)."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "reversed" \
            and iterable.args:
        iterable = iterable.args[0].value
    if isinstance(iterable, cst.Name) and facts is not None:
        binding = facts.lookup(iterable.value)
        iterable = binding.node if binding is not None and isinstance(binding.node, cst.Call) else None
    return isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range"


def _over_own_submodules(iterable: cst.BaseExpression, facts: Facts) -> bool:
    """``self.blocks`` (also in ``enumerate(...)`` / ``zip(...)``), a container of the module's own
    submodules (an ``nn.ModuleList``): the layers of one forward computation."""
    if isinstance(iterable, cst.Call) and dotted_name(iterable.func) in ("enumerate", "zip", "reversed") \
            and iterable.args:
        iterable = iterable.args[0].value
    name = dotted_name(iterable)
    return name is not None and name.startswith("self.") and facts.is_module_expr(iterable)


def _in_module_method(facts: Facts) -> bool:
    """Is the walk in a method of an nn.Module subclass (known through its bases, across the
    project)?"""
    function = facts.function
    return function is not None and function.class_info is not None and function.class_info.is_module


def _receiver_root(receiver: cst.BaseExpression) -> str | None:
    """The name an attribute chain starts from (``a`` of ``a.b.c``), None for anything else."""
    while isinstance(receiver, cst.Attribute):
        receiver = receiver.value
    return receiver.value if isinstance(receiver, cst.Name) else None


def _callee_grad_modes(facts: Facts) -> tuple[set[tuple[str, str | None]], set[tuple[str, str | None]]]:
    """This module's functions (``(name, class)``, class None for a plain function) only ever
    called with grad off, and those only called where grad may be off (some
    ``set_grad_enabled(flag)``). A call that inherits its caller's mode counts as the caller's
    calls do: ``fid_score`` under ``inference_mode`` calls ``load_stats``, which calls
    ``features``: all three run without grad. Calls are matched by name, except that
    ``self.predict()`` in one class cannot run ``predict`` of a class unrelated to it."""
    call_sites = facts.call_sites
    functions = {(scope.name, F.method_owner(scope)) for scope in facts.function_scopes.values()
                 if scope.name in call_sites}
    only_off: set[tuple[str, str | None]] = set()
    maybe_off: set[tuple[str, str | None]] = set()
    changed = True
    while changed:
        changed = False
        for key in functions:
            if key in only_off:
                continue
            name, owner = key
            modes = set()
            for site in call_sites[name]:
                if site.self_class is not None and (owner is None or not F.related_classes(
                        owner, site.self_class, facts.local_ancestors)):
                    continue  # self.name() of another class: not this function
                if site.module_receiver and owner is not None and owner in facts.classes \
                        and not facts.classes[owner].is_module:
                    continue  # model.eval(): nn.Module's method, not this class's
                mode = site.mode
                if mode is GradMode.ON and site.inherited and site.caller.name != "<module>":
                    caller = (site.caller.name, F.method_owner(site.caller))
                    if caller == key:
                        continue  # a call from the function itself adds no call with grad on
                    if caller in only_off:
                        mode = GradMode.OFF
                    elif caller in maybe_off:
                        mode = GradMode.MAYBE_OFF
                modes.add(mode)
            if not modes:
                continue
            if modes == {GradMode.OFF}:
                only_off.add(key)
                maybe_off.discard(key)
                changed = True
            elif GradMode.ON not in modes and key not in maybe_off:
                maybe_off.add(key)
                changed = True
    return only_off, maybe_off


def _returns_only_without_grad(function: cst.FunctionDef, facts: Facts) -> bool:
    """Does every ``return`` of ``function`` (not a generator) hand back a value computed with
    grad off: under a no-grad decorator, inside ``with torch.no_grad():``, or made only of names
    assigned nowhere but in such a block (``with torch.no_grad(): loss = ...`` then
    ``model.train(); return loss``)? (Read from the statements alone, before the walk; a
    function with no return value does not count.)"""
    if any(_turns_grad_off(d.decorator, facts) for d in function.decorators):
        return True
    returns: list[tuple[bool, set[str]]] = []
    assigned_off: set[str] = set()
    assigned_on: set[str] = set()

    def scan(statements, no_grad: bool) -> bool:
        for statement in statements:
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                continue
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for small in statement.body:
                    if isinstance(small, cst.Return) and small.value is not None:
                        returns.append((no_grad, names_in(small.value)))
                    elif isinstance(small, (cst.Expr, cst.Assign)) and isinstance(small.value, (cst.Yield, cst.Await)):
                        return False  # a generator (or a coroutine): its values are not returns
                    if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                        targets = small.targets if isinstance(small, cst.Assign) else (small,)
                        for target in targets:
                            (assigned_off if no_grad else assigned_on).update(names_in(target.target))
                continue
            if isinstance(statement, (cst.For, cst.With)):
                for target in ([statement.target] if isinstance(statement, cst.For)
                               else [item.asname.name for item in statement.items if item.asname is not None]):
                    (assigned_off if no_grad else assigned_on).update(names_in(target))
            inner = no_grad or (isinstance(statement, cst.With)
                                and any(_turns_grad_off(item.item, facts) for item in statement.items))
            for block in F.nested_blocks(statement):
                if not scan(block, inner):
                    return False
        return True

    if not scan(F.block_statements(function.body), False) or not returns:
        return False
    only_off = assigned_off - assigned_on
    return all(no_grad or (names and names <= only_off) for no_grad, names in returns)


def _is_literal_iterable(iterable: cst.BaseExpression) -> bool:
    """``[2]``, ``("a", "b")``, ``range(3)``, ``enumerate([x, y])``: a fixed few iterations
    written in the code."""
    if isinstance(iterable, (cst.List, cst.Tuple, cst.Set)):
        return not any(isinstance(element, cst.StarredElement) for element in iterable.elements)
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.args:
        if iterable.func.value == "range":
            return all(isinstance(arg.value, cst.Integer) for arg in iterable.args)
        if iterable.func.value in ("enumerate", "reversed", "sorted"):
            return _is_literal_iterable(iterable.args[0].value)
    return False


def _parameters_owner(iterable: cst.BaseExpression) -> str | None:
    """``model`` for ``model.parameters()`` / ``model.named_parameters()``."""
    if (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute)
            and iterable.func.attr.value in ("parameters", "named_parameters")):
        return dotted_name(iterable.func.value)
    return None


def _is_false(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def _note_frozen_parameter(function: "F.FunctionScope | None", name: str) -> None:
    """A function that freezes what it was handed (``model`` a parameter, not rebound): its
    summary says so by position, so that a call ``deactivate_requires_grad(self.backbone)``, here
    or in another module, freezes ``self.backbone``."""
    if name == "self" and function is not None and function.class_info is not None:
        binding = function.bindings.get("self")
        if binding is None or binding.node is None or isinstance(binding.node, cst.Param):
            function.effects.add(F.FREEZES_SELF)  # def freeze_all(self): for p in self.parameters(): ...
        return
    if function is None or name not in function.parameters:
        return
    binding = function.bindings.get(name)
    if binding is not None and binding.node is not None and not isinstance(binding.node, cst.Param):
        return  # rebound in the body: no longer the caller's object
    function.effects.add(f"{F.FREEZES_ARGUMENT}{function.parameters.index(name)}")


_BY_POSITION = (F.FREEZES_ARGUMENT, F.BACKPROPAGATES_ARGUMENT, F.SAVES_ARGUMENT)  # effects on the argument at a position


def _note_backpropagated_parameters(function: "F.FunctionScope") -> None:
    """A function that differentiates what a parameter holds (or what it computed from it): its
    summary says so by position, so that its callers, here or in another module, know the value
    they hand it is backpropagated."""
    if not function.backward_names:
        return
    for index, name in enumerate(function.parameters):
        if function.derives_from(function.backward_names, {name}):
            function.effects.add(f"{F.BACKPROPAGATES_ARGUMENT}{index}")


def _note_backpropagated_arguments(call: cst.Call, function: "F.FunctionScope", facts: Facts) -> None:
    """``hv = hvp(loss, w, v)`` where ``hvp`` runs autograd.grad on its first argument: ``loss``
    is backpropagated here, as by ``loss.backward()``."""
    for argument in facts.arguments_with_effect(call, F.BACKPROPAGATES_ARGUMENT):
        if not facts.graph_value(argument).carries_something:
            continue  # hvp(loss, w, v.detach()): nothing of the caller's reaches that backward
        names = names_in(argument) - {"self", "cls"}
        if names:
            function.backward_names |= names
            function.note_backpropagated(names)
            function.backward_places |= F.places_in(argument)


def _sites_that_may_call(facts: Facts) -> dict[str, list]:
    """The module's call sites by name, less the calls of nn.Module's own methods on a module
    (``model.train()``, ``model.eval()``) under a name no module class of this file defines a
    method of: they call nn.Module's method, not a function or a plain class's method of that
    name (``Trainer.train`` and a script's ``def train():`` are not ``model.train()``)."""
    module_methods = {name for info in facts.classes.values() if info.is_module for name in info.methods}
    return {name: [site for site in sites if not site.module_receiver or name in module_methods]
            for name, sites in facts.call_sites.items()}


def _unfreezes_parameters(tensor: cst.BaseExpression, facts: F.Facts) -> bool:
    """Is ``tensor`` (of ``tensor.requires_grad = True``) a model's parameter: the target of a loop
    over ``m.parameters()`` around it (as :meth:`FileChecker._freeze` reads ``= False``), or a
    module's ``.weight``/``.bias``?"""
    if isinstance(tensor, cst.Attribute):
        return tensor.attr.value in ("weight", "bias") or facts.is_module_expr(tensor.value)
    name = dotted_name(tensor)
    return any(name in loop.target_names and loop.parameters_of is not None for loop in facts.loops_in_function())


def _walked_container(node: cst.For) -> tuple[str | None, str | None]:
    """(``d``, ``k``) for ``for k, v in d.items()``, ``for k in d.keys()`` and ``for k in d``
    (``d`` a plain name); (None, None) otherwise."""
    iterable, target = node.iter, node.target
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args:
        method = iterable.func.attr.value
        container = dotted_name(iterable.func.value)
        if method == "items" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            return container, dotted_name(target.elements[0].value)
        if method == "keys":
            return container, dotted_name(target)
        return None, None
    if isinstance(iterable, cst.Name):
        return iterable.value, dotted_name(target)
    return None, None


_MOVING_ARGUMENTS = frozenset({"device", "device_map"})  # Net(device=...) builds its weights there


def _alone_on_its_line(statement: cst.CSTNode, call: cst.Call) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Expr) and small.value is call for small in statement.body)


def _mentions_cpu(node: cst.CSTNode) -> bool:
    """Does ``node`` move something to the CPU (``.cpu()``, ``.to("cpu")``, ``torch.device("cpu")``)?"""
    for call in (part for part in F.descendants(node) if isinstance(part, cst.Call)):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "cpu":
            return True
        if any(isinstance(arg.value, cst.SimpleString) and "cpu" in arg.value.value for arg in call.args):
            return True
    return False


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _mode_target(receiver: cst.BaseExpression) -> str | None:
    """The module a mode change applies to: ``sampler`` for ``sampler.eval().requires_grad_(False)``."""
    return dotted_name(F.without_self_returning_calls(receiver))


def _mode_change(method: str, call: cst.Call) -> str | None:
    if method == "eval" and not call.args:
        return "eval"
    if method == "train":
        if not call.args:
            return "train"
        first = call.args[0].value
        if _is_false(first):
            return "eval"
        if _is_true(first):
            return "train"
        return None
    if method == "requires_grad_" and call.args and _is_false(call.args[0].value):
        return "frozen"
    return None


def _call_ids(node: cst.CSTNode) -> set[int]:
    ids: set[int] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            ids.add(id(current))
        stack.extend(F.expression_children(current))
    return ids


_OPTIMIZER_WORDS = ("optim", "opt")


def is_optimizer_step(call: cst.Call, facts: Facts | None = None) -> bool:
    """``optimizer.step()``, ``self.opt.step()``, ``scaler.step(optimizer)``, ``opt_g.step()``;
    with ``facts``, also ``optD.step()`` where ``optD`` was bound to a ``torch.optim`` optimizer."""
    assert isinstance(call.func, cst.Attribute)
    if facts is not None and _bound_to_an_optimizer(call.func.value, facts):
        return True
    if any(arg.keyword is not None and arg.keyword.value == "params" for arg in call.args) or (
            call.args and call.args[0].keyword is None
            and isinstance(call.args[0].value, (cst.Call, cst.BinaryOperation))):
        # inner_opt.step(E.sum(), params=[y]): a differentiable optimizer (higher, torchopt) handed
        # a loss returns new parameters, part of the graph; torch.optim's step takes a closure
        return False
    owner = dotted_name(call.func.value)
    if owner is None:
        # self.optimizers().step(), trainer.optimizers[0].step()
        return "optim" in cst.Module(body=()).code_for_node(call.func.value).lower()
    last = owner.rsplit(".", 1)[-1].lower()
    if "sched" in last:
        return False
    if last == "scaler" or last.endswith("_scaler"):
        return True
    return "optim" in last or last == "opt" or last.startswith("opt_") or last.endswith("_opt")


def _bound_to_an_optimizer(receiver: cst.BaseExpression, facts: Facts) -> bool:
    """Was ``receiver`` (a local, or ``self.x`` of the class) bound to ``torch.optim.<Class>(...)``?"""
    value = facts.bound_value(receiver)
    if type(value) is not cst.Call:
        return False
    qualified = facts.qualified_name(value.func) or ""
    last = qualified.rsplit(".", 1)[-1]
    return qualified.startswith("torch.optim.") and "lr_scheduler" not in qualified \
        and "swa_utils" not in qualified and last[:1].isupper() and last != "Optimizer"


def _inside(inner: FunctionScope, outer: FunctionScope) -> bool:
    scope = inner.parent
    while scope is not None:
        if scope is outer:
            return True
        scope = scope.parent
    return False


def _enclosing_functions(function: object) -> Iterable[FunctionScope]:
    """``function`` and the functions it is nested in, innermost first."""
    while isinstance(function, FunctionScope):
        yield function
        parent = function.parent
        while parent is not None and not isinstance(parent, FunctionScope):
            parent = parent.parent
        function = parent


def _inside_function_of(function: object, keys: set[tuple[str, str | None]]) -> bool:
    return any((scope.name, F.method_owner(scope)) in keys for scope in _enclosing_functions(function))


def _literal_parameter(init: cst.FunctionDef, parameter: str) -> tuple[object, int | None] | None:
    """(its literal default, its position after ``self``) for a parameter of ``__init__`` that
    has a literal default and is never rebound in it; None otherwise."""
    defaults = F.literal_defaults(init)
    if parameter not in defaults or any(isinstance(n, (cst.AssignTarget, cst.AugAssign))
                                        and parameter in F.names_in(n.target) for n in F.descendants(init)):
        return None
    positional = [p.name.value for p in (*init.params.posonly_params, *init.params.params)][1:]
    return defaults[parameter], positional.index(parameter) if parameter in positional else None
