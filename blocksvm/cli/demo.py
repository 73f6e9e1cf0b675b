"""``demo``: the whole pipeline on generated data larger than its memory budget (:mod:`blocksvm.demo`); ``warmup``:
every command's kernels compiled once (:mod:`blocksvm.warmup`)."""

from __future__ import annotations

import io
import sys

from blocksvm.cli.options import EXIT_OK, command, option, print_json


def _demo_options() -> tuple:
    return (
        option("rows", "Training rows", int, default=600_000, metavar="N"),
        option("test_rows", "Held-out rows, predicted with the model", int, default=100_000, metavar="N"),
        option("features", "Width of the feature space", int, default=20_000, metavar="N"),
        option("nnz", "Mean nonzeros a row", int, default=40, metavar="N"),
        option("workdir", "Keep the files here (default: a temporary folder, removed at the end)", metavar="DIR"),
        option("keep", "Keep the temporary folder", bool),
    )


@command(
    "demo",
    "generate data larger than the memory budget, convert, train, predict: figures of each step",
    options=_demo_options,
    json="print the figures as JSON at the end",
)
def demo_command(out, **options) -> int:
    from blocksvm.demo import run_demo

    figures = run_demo(out=io.StringIO() if out.quiet else sys.stdout, **options)
    if out.json:
        print_json(figures)
    return EXIT_OK


@command(
    "warmup",
    "compile every command's kernels once, on every core (a fresh installation's first runs then wait for none)",
    options=lambda: (
        option("jobs", "Commands compiled at once, each in a process (default: one a core)", int, metavar="J"),
        option(
            "again",
            "Run every command again even where the last warm-up's caches stand as it left them (then it says so and "
            "compiles nothing)",
            bool,
        ),
    ),
    json="print the seconds taken as JSON",
)
def warmup_command(out, jobs: int | None = None, again: bool = False) -> int:
    from blocksvm.warmup import warmup

    figures = warmup(jobs, say=out.say, again=again)
    if out.json:
        print_json(figures)
    return EXIT_OK
