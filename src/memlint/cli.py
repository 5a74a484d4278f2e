"""The ``memlint`` command: check, verify, rules, rule, server.

Nothing imported here imports libcst or torch: libcst is imported only when a file has to be
parsed, torch only in the process that runs a script under ``memlint verify``. ``memlint
check`` runs on every commit, so the verify half is imported only by the verify command.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import click

from memlint import server_client
from memlint.catalogue import CATALOGUE, all_codes, rule_page
from memlint.config import ConfigError, Configs, validate_codes
from memlint.report import FORMATS, render
from memlint.report.style import colour_wanted
from memlint.static.runner import check_paths
from memlint.version import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _split_codes(values: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for value in values:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return out


class _Group(click.Group):
    """Turn configuration errors into one line and exit code 2, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except ConfigError as exc:
            click.echo(f"memlint: error: {exc}", err=True)
            ctx.exit(EXIT_ERROR)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memlint")
def main() -> None:
    """Find PyTorch memory anti-patterns before they cost a training run."""


@main.command(epilog="A warm server (memlint server start, or MEMLINT_SERVER=1) keeps libcst imported "
                      "for faster runs on large repositories (README: Speed).")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--select", multiple=True, metavar="CODES", help="Only these rule codes or prefixes (e.g. ML1,ML203).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rule codes or prefixes.")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Add these codes to the selection.")
@click.option(
    "--format", "--output-format", "output_format", type=click.Choice(FORMATS), default="full", show_default=True,
    help="full: each finding with its source and help (text is the same); concise: one line each; "
         "json, sarif, github: for tools.",
)
@click.option("--statistics", is_flag=True, help="Show a count per rule code instead of each finding.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--no-cache", is_flag=True, help="Do not read or write .memlint_cache/.")
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, also apply unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a diff instead of writing them.")
@click.option("--add-noqa", "add_noqa_comments", is_flag=True,
              help="Add a '# noqa: CODE' comment for every finding (adopting memlint on existing code).")
@click.option("--force-exclude", is_flag=True, help="Apply exclude patterns to paths named on the command line too.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0, help="Worker processes (0: one per core).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help="Use this pyproject.toml for every file (default: the nearest one above each file).")
def check(paths, select, ignore, extend_select, output_format, statistics, exit_zero, no_cache,
          fix, unsafe_fixes, diff, add_noqa_comments, force_exclude, jobs, config_path) -> None:
    """Check Python files and notebooks for memory anti-patterns (default: the current folder).

    Rule codes are accepted in any case (ml101 is ML101).

    \b
    Exit codes:
      0  no findings (or findings, with --exit-zero)
      1  findings
      2  a usage or configuration error, a file that could not be checked (ML901, ML902),
         or paths named that hold no Python file or notebook (nothing was checked)
    """
    if add_noqa_comments and (fix or diff):
        raise click.UsageError("--add-noqa cannot be combined with --fix or --diff")
    codes = all_codes()
    select, ignore, extend_select = (
        validate_codes(_split_codes(values), codes, option)
        for option, values in (("--select", select), ("--ignore", ignore), ("--extend-select", extend_select)))

    def command_line_over(config) -> None:
        if select:
            config.select = select
            config.extend_select = []
        if ignore:
            config.ignore = config.ignore + ignore
        if extend_select:
            config.extend_select = config.extend_select + extend_select

    # Each file gets the nearest [tool.memlint] above it (or --config), the options on top.
    configs = Configs(config_path, command_line_over)
    configs.here()  # a broken configuration where we stand is an error even with no file to check

    result = check_paths(
        list(paths) or ["."],
        use_cache=not no_cache,
        jobs=jobs,
        force_exclude=force_exclude,
        configs=configs,
    )
    _say_what_held_nothing(result, bool(paths))

    would_fix = False
    if fix or diff:
        # the fixing machinery only with --fix / --diff: a warm run imports no checking machinery
        from memlint.static.fixing import apply_fixes

        would_fix = any(f.fix is not None and (f.fix.safe or unsafe_fixes) for f in result.findings)
        result = apply_fixes(result, configs=configs, unsafe=unsafe_fixes, write=not diff, echo=click.echo)
    if add_noqa_comments:
        # the comment-writing machinery only with --add-noqa: a warm run imports no checking machinery
        from memlint.static.add_noqa import add_noqa

        added = add_noqa(result, configs)
        for problem in added.problems:
            click.echo(f"memlint: no noqa comments added to {problem}", err=True)
        click.echo(f"Added {added.added} noqa directive{'s' if added.added != 1 else ''} to "
                   f"{added.files} file{'s' if added.files != 1 else ''}.", err=True)
        result = added.result

    colour = colour_wanted(sys.stdout, os.environ)
    click.echo(render(result, output_format, statistics=statistics, colour=colour), nl=False, color=colour)

    if diff and would_fix and not exit_zero:
        sys.exit(EXIT_FINDINGS)  # like ruff: --diff fails when it would change something

    if result.has_unchecked_files:
        sys.exit(EXIT_ERROR)
    if result.findings and not exit_zero:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_CLEAN)


SKIPPED_HINT = ("memlint looks for *.py, *.pyw and *.ipynb, and skips .gitignore'd files, exclude patterns and "
                "folders such as .venv/ and build/; name a file to check it anyway")


def _say_what_held_nothing(result, paths_given: bool) -> None:
    """Nothing to check is never a pass: a typo in a CI path must not go green. Paths named
    that hold no Python file or notebook are an error (exit 2) when nothing at all was
    checked, else a warning; with no path named (the current folder) it is a warning, as
    with ruff. Files named by pre-commit and left out by --force-exclude are no error."""
    if result.files_checked or result.findings:  # checked something, or a named path is missing (ML901)
        for path in result.empty_paths:
            click.echo(f"memlint: warning: no Python files or notebooks to check in {path} ({SKIPPED_HINT})",
                       err=True)
        return
    if result.empty_paths and paths_given:
        raise ConfigError(f"no Python files or notebooks to check in {', '.join(result.empty_paths)} "
                          f"({SKIPPED_HINT})")
    if result.excluded_paths and not result.empty_paths:
        click.echo("memlint: nothing to check: every path given is excluded (--force-exclude)", err=True)
    else:
        click.echo(f"memlint: warning: no Python files or notebooks to check here ({SKIPPED_HINT})", err=True)


@main.command("rules")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(output_format: str) -> None:
    """List every rule: code, name, severity, summary."""
    if output_format == "json":
        data = [
            {"code": r.code, "name": r.name, "severity": r.severity, "summary": r.summary,
             "default": r.enabled_by_default, "fixable": r.fixable}
            for r in CATALOGUE
        ]
        click.echo(json.dumps(data, indent=2))
        return
    width = max(len(r.name) for r in CATALOGUE)
    for r in CATALOGUE:
        default = "" if r.enabled_by_default else "  (off by default)"
        click.echo(f"{r.code}  {r.name:<{width}}  {r.severity:<7}  {r.summary}{default}")


@main.command("rule")
@click.argument("code")
def rule_command(code: str) -> None:
    """Print the documentation page of one rule (e.g. memlint rule ML101)."""
    page = rule_page(code.upper())
    if page is None:
        raise ConfigError(f"unknown rule code {code!r} (run 'memlint rules' for the list)")
    if page.startswith("---\n"):  # front matter is for tools; people read the page
        end = page.find("\n---\n", 4)
        if end != -1:
            page = page[end + 5:].lstrip("\n")
    click.echo(page, nl=not page.endswith("\n"))


@main.command("lsp")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Use this pyproject.toml for every file (default: the nearest one above each file).")
@click.option("--unsafe-fixes", is_flag=True, help="'Fix all' applies unsafe fixes too.")
@click.option("--debounce", "debounce_ms", type=click.IntRange(min=0), default=50, show_default=True,
              help="Milliseconds without an edit before a changed file is checked.")
# --stdio: added by some clients (vscode-languageclient); stdio is the only transport
@click.option("--stdio", is_flag=True, hidden=True)
def lsp_command(config_path, unsafe_fixes, debounce_ms, stdio) -> None:
    """Run the language server on stdin/stdout, for editors (README: Editors).

    Diagnostics as you type, quick fixes, '# noqa' actions and rule pages on hover, with each
    file's own [tool.memlint] configuration.
    """
    # Here, not at the top: pygls is for this command only; `memlint check` never imports it.
    from memlint.lsp import Options, serve

    serve(Options(config_path=config_path, unsafe_fixes=unsafe_fixes, debounce_ms=debounce_ms))


@main.command("server")
@click.argument("action", type=click.Choice(["status", "start", "stop"]), default="status")
def server_command(action: str) -> None:
    """Start, show or stop the warm server that serves 'memlint check' for this Python.

    The server is opt-in: it runs only when started here, with MEMLINT_SERVER=1, or with
    server = true in [tool.memlint]. It stops by itself after 15 minutes without a run.
    """
    path = server_client.socket_path()
    if path is None:
        raise ConfigError("no private server folder is usable here (see README: Speed)")
    pid, running = _running_server(path)
    log = path[: -len(".sock")] + ".log"
    if action == "stop":
        if running and pid is not None:
            os.kill(pid, signal.SIGTERM)
            click.echo(f"stopped the memlint server (pid {pid})")
        else:
            click.echo("no memlint server is running")
        return
    if action == "start":
        if running:
            click.echo(f"memlint server already running: pid {pid}, socket {path}")
            return
        if not server_client.server_allowed():
            raise ConfigError("the server is not used here: CI or MEMLINT_NO_SERVER is set, or no Unix sockets")
        server_client.start_server(path)
        click.echo(f"started the memlint server in the background (socket {path}, log {log}); "
                   "'memlint server stop' stops it")
        return
    if not running:
        used = server_client.server_allowed()
        click.echo("no memlint server is running" + ("" if used else
                   " (and none is used here: CI or MEMLINT_NO_SERVER is set, or no Unix sockets)"))
        return
    click.echo(f"memlint server running: pid {pid}, socket {path}, log {log}")


def _running_server(path: str) -> tuple[int | None, bool]:
    """The pid in the server's lock file, and whether that server is alive and listening."""
    try:
        with open(path + ".lock", encoding="utf-8") as fh:
            pid = int(fh.read().split()[0])
        os.kill(pid, 0)
        return pid, os.path.exists(path)
    except (OSError, ValueError, IndexError):
        return None, False


@main.command(context_settings={"ignore_unknown_options": False})
@click.argument("script", required=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option("-m", "module", metavar="MODULE", help="Run a module (like python -m) instead of SCRIPT.")
@click.option("--steps", type=int, help="Measured steps after warmup (default 20).")
@click.option("--warmup", type=int, help="Steps before measuring, e.g. while optimizer state appears (default 3).")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), help="Device to watch (default auto).")
@click.option("--timeout", type=float, help="Seconds before the script is killed (default 600).")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Report format.")
@click.option("--trace-dir", type=click.Path(file_okay=False), help="Write a TensorBoard profiler trace here.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Write a chart of memory per step (.svg or .html).")
@click.option("--nproc-per-node", type=int, help="Run P ranks through torch.distributed.run.")
@click.option("--gpu-memory", metavar="SIZE|CARD",
              help="Project the step's peak onto a GPU of this size (24GiB, 80GB) or card (RTX4090, A100-80GB, H100).")
@click.option("--step-on", type=click.Choice(["optimizer", "dataloader", "module", "marker"]),
              help="What ends a step (default: memlint.step() if called, else an optimizer step, else a "
                   "DataLoader batch, else a call of the outermost module).")
def verify(script, args, module, steps, warmup, device, timeout, output_format, trace_dir, plot, nproc_per_node,
           gpu_memory, step_on):
    """Run SCRIPT for a few steps and report whether memory grows.

    Arguments for the script go after "--": memlint verify train.py -- --lr 0.1

    Exit codes: 0 stable, 1 growth, 2 error or inconclusive.
    """
    # verify's half, only when verify runs: memlint check starts on every commit
    from memlint.dynamic.api import TORCH_MISSING, run_verify, verify_config
    from memlint.dynamic.options import build_options
    from memlint.dynamic.progress import ProgressBar
    from memlint.dynamic.render import render_json
    from memlint.report.verify_text import render_text

    if module:  # with -m every positional argument belongs to the module
        args = ((script,) if script else ()) + tuple(args)
        script = None
    options = build_options(
        verify_config(script), script=script, module=module, args=list(args), steps=steps, warmup=warmup,
        device=device, timeout=timeout, trace_dir=trace_dir, plot=plot, nproc_per_node=nproc_per_node,
        gpu_memory=gpu_memory, step_on=step_on,
    )
    bar = None
    if output_format == "text" and sys.stderr.isatty():
        bar = ProgressBar(options.steps + options.warmup, options.warmup)
    try:
        report = run_verify(options, on_progress=bar.update if bar else None)
    finally:
        if bar is not None:
            bar.close()
    if report.reason == TORCH_MISSING:
        click.echo(f"memlint: error: {TORCH_MISSING}", err=True)
        sys.exit(2)
    if output_format == "json":
        click.echo(render_json(report), nl=False)
    else:
        colour = colour_wanted(sys.stdout, os.environ)
        click.echo(render_text(report, colour=colour), nl=False, color=colour)
    if options.plot:
        click.echo(f"memlint: wrote {options.plot}", err=True)
    sys.exit(report.exit_code)


if __name__ == "__main__":  # pragma: no cover
    main()
