"""The ``memlint`` command: check, verify, rule, rules.

Keep start-up light: heavy modules (libcst, torch) are imported inside commands.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memlint import __version__
from memlint.config import ConfigError

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


@main.command(epilog="Outside CI, runs are handed to a warm background server that keeps libcst "
                      "imported (README: Speed); MEMLINT_NO_SERVER=1 checks in this process.")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--select", multiple=True, metavar="CODES", help="Only these rule codes or prefixes (e.g. ML1,ML203).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rule codes or prefixes.")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Add these codes to the selection.")
@click.option(
    "--format", "output_format", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
    show_default=True, help="Output format.",
)
@click.option("--statistics", is_flag=True, help="Show a count per rule code instead of each finding.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--no-cache", is_flag=True, help="Do not read or write .memlint_cache/.")
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, also apply unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a diff instead of writing them.")
@click.option("--force-exclude", is_flag=True, help="Apply exclude patterns to paths named on the command line too.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=0, help="Worker processes (0: one per core).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help="Use this pyproject.toml for every file (default: the nearest one above each file).")
def check(paths, select, ignore, extend_select, output_format, statistics, exit_zero, no_cache,
          fix, unsafe_fixes, diff, force_exclude, jobs, config_path) -> None:
    """Check Python files and notebooks for memory anti-patterns (default: the current folder)."""
    from memlint.config import Configs, validate_codes
    from memlint.report import render
    from memlint.static.runner import check_paths  # imports libcst only if a file must be parsed
    from memlint.static.rules import all_codes

    codes = all_codes()
    for option, values in (("--select", select), ("--ignore", ignore), ("--extend-select", extend_select)):
        validate_codes(_split_codes(values), codes, option)

    def command_line_over(config) -> None:
        if select:
            config.select = _split_codes(select)
            config.extend_select = []
        if ignore:
            config.ignore = config.ignore + _split_codes(ignore)
        if extend_select:
            config.extend_select = config.extend_select + _split_codes(extend_select)

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

    would_fix = False
    if fix or diff:
        from memlint.static.fixes import apply_fixes

        would_fix = any(f.fix is not None and (f.fix.safe or unsafe_fixes) for f in result.findings)
        result = apply_fixes(result, configs=configs, unsafe=unsafe_fixes, write=not diff, echo=click.echo)

    click.echo(render(result, output_format, statistics=statistics), nl=False)

    if diff and would_fix and not exit_zero:
        sys.exit(EXIT_FINDINGS)  # like ruff: --diff fails when it would change something

    if result.has_unchecked_files:
        sys.exit(EXIT_ERROR)
    if result.findings and not exit_zero:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_CLEAN)


@main.command("rules")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(output_format: str) -> None:
    """List every rule: code, name, severity, summary."""
    import json

    from memlint.static.rules import all_rules

    rules = sorted(all_rules(), key=lambda r: r.code)
    if output_format == "json":
        data = [
            {"code": r.code, "name": r.name, "severity": r.severity, "summary": r.summary,
             "default": r.enabled_by_default, "fixable": r.fixable}
            for r in rules
        ]
        click.echo(json.dumps(data, indent=2))
        return
    width = max(len(r.name) for r in rules)
    for r in rules:
        default = "" if r.enabled_by_default else "  (off by default)"
        click.echo(f"{r.code}  {r.name:<{width}}  {r.severity:<7}  {r.summary}{default}")


@main.command("rule")
@click.argument("code")
def rule_command(code: str) -> None:
    """Print the documentation page of one rule (e.g. memlint rule ML101)."""
    from memlint.static.rules import rule_page

    page = rule_page(code.upper())
    if page is None:
        raise ConfigError(f"unknown rule code {code!r} (run 'memlint rules' for the list)")
    if page.startswith("---\n"):  # front matter is for tools; people read the page
        end = page.find("\n---\n", 4)
        if end != -1:
            page = page[end + 5:].lstrip("\n")
    click.echo(page, nl=not page.endswith("\n"))


@main.command("server")
@click.argument("action", type=click.Choice(["status", "stop"]), default="status")
def server_command(action: str) -> None:
    """Show or stop the warm server that serves 'memlint check' for this Python."""
    import os
    import signal

    from memlint import launcher

    path = launcher.socket_path()
    if path is None:
        raise ConfigError("no private server folder is usable here (see README: Speed)")
    lock, log = path + ".lock", path[: -len(".sock")] + ".log"
    try:
        with open(lock, encoding="utf-8") as fh:
            pid = int(fh.read().split()[0])
        os.kill(pid, 0)
        running = os.path.exists(path)
    except (OSError, ValueError, IndexError):
        pid, running = None, False
    if action == "stop":
        if running and pid is not None:
            os.kill(pid, signal.SIGTERM)
            click.echo(f"stopped the memlint server (pid {pid})")
        else:
            click.echo("no memlint server is running")
        return
    if not running:
        used = launcher.server_wanted(["check"])
        click.echo("no memlint server is running" + ("" if used else
                   " (and none is used here: CI or MEMLINT_NO_SERVER is set, or no Unix sockets)"))
        return
    click.echo(f"memlint server running: pid {pid}, socket {path}, log {log}")


def _add_verify() -> None:
    from memlint.dynamic.command import verify

    main.add_command(verify)


_add_verify()

if __name__ == "__main__":  # pragma: no cover
    main()
