"""The ``memlint verify`` click command.

No torch (and no heavy memlint module) at import time: ``memlint check`` must
start fast and work where torch is not installed.
"""

from __future__ import annotations

import sys

import click


@click.command(context_settings={"ignore_unknown_options": False})
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
def verify(script, args, module, steps, warmup, device, timeout, output_format, trace_dir, plot, nproc_per_node):
    """Run SCRIPT for a few optimizer steps and report whether memory grows.

    Arguments for the script go after "--": memlint verify train.py -- --lr 0.1

    Exit codes: 0 stable, 1 growth, 2 error or inconclusive.
    """
    from memlint.dynamic.api import TORCH_MISSING, run_verify, verify_config
    from memlint.dynamic.options import build_options
    from memlint.dynamic.render import render_json, render_text

    if module:  # with -m every positional argument belongs to the module
        args = ((script,) if script else ()) + tuple(args)
        script = None
    options = build_options(
        verify_config(script), script=script, module=module, args=list(args), steps=steps, warmup=warmup,
        device=device, timeout=timeout, trace_dir=trace_dir, plot=plot, nproc_per_node=nproc_per_node,
    )
    bar = None
    if output_format == "text" and sys.stderr.isatty():
        from memlint.dynamic.progress import ProgressBar

        bar = ProgressBar(options.steps + options.warmup, options.warmup)
    try:
        report = run_verify(options, on_progress=bar.update if bar else None)
    finally:
        if bar is not None:
            bar.close()
    if report.reason == TORCH_MISSING:
        click.echo(f"memlint: error: {TORCH_MISSING}", err=True)
        sys.exit(2)
    click.echo(render_json(report) if output_format == "json" else render_text(report), nl=False)
    if options.plot:
        click.echo(f"memlint: wrote {options.plot}", err=True)
    sys.exit(report.exit_code)
