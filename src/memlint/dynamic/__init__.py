"""memlint verify: run a training script for a few steps and watch its memory.

It may use the static half (to confirm findings), never the reverse; the ``memlint verify``
command itself is in :mod:`memlint.cli`.

Parent side (never imports torch):
  api.py       ``verify_script`` / ``run_verify``: options -> child run -> report
  options.py   VerifyOptions and ``[tool.memlint.verify]``
  launcher.py  start the child (or torchrun), timeout, Ctrl-C, kill the whole process tree
  assess.py    child results -> verdict and reason per rank (and every failure mode)
  verdict.py   Theil–Sen slope, rising share, thresholds
  confirm.py   ``memlint check`` on the script; mark findings confirmed by growth sites
  phases.py    what the run never reached: the code after the loop whose steps it measured
  report.py    the report dataclasses and their JSON
  memory.py, budget.py, levers.py, cards.py   the step's peak: its JSON, the fit on a GPU, the levers,
               --gpu-memory sizes and card names
  render.py, plot.py, progress.py   JSON output (the text report is memlint.report.verify_text),
               SVG/HTML chart, progress bar
  axes.py      the charts' ticks and units, chosen from the data

Child side (``python -m memlint.dynamic.child``):
  child.py     run the script with runpy; record how it ended
  runtime.py   sampling at step boundaries, stop with StopVerify, result file
  boundaries.py where a step ends: optimizer step, DataLoader batch, outermost module call, memlint.step()
  recorder.py  samples and final attribution (shared with the in-process pytest fixture)
  bounded.py   optimizer state bounded by construction (LBFGS's history), left out of the growth
  storages.py  TorchDispatchMode tracking live storages and the user line that made them
  peak.py      the peak inside each step, its phase, and its bytes by class (parameters, gradients, ...)
  graph.py     the tracker extended: tensors behind each storage, autograd nodes they keep alive
  heap.py      the holder of a survivor, found once at the end: user variables, then gc referrers
  bindings.py  the source line where a holder is appended to, stored in or rebound
  profiling.py the optional torch.profiler window for --trace-dir
  usercode.py, system.py   "is this the user's file?", RSS, free RAM, process tree

In-process: inprocess.py (``verify_function``) and measure.py (``measure_peak``), used by
memlint.pytest_plugin.
marker.py: ``memlint.step()``, which imports nothing.
"""
