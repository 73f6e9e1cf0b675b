"""Running what a bench measures: commands and jobs in fresh interpreters, timings in this one, runs in turns."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from harness import REPO

# A light interpreter starts the command and reports its peak RSS: a child of a heavy parent (a bench that holds a
# data set) would start its peak from the parent's (Linux keeps the replaced memory's peak in ru_maxrss across exec).
PEAK_OF_CHILD = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[2:]); "
    "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "open(sys.argv[1], 'w').write(f'{u.ru_maxrss} {u.ru_utime + u.ru_stime}'); sys.exit(code)"
)


def command(
    argv: list[str], log: Path | None = None, timeout: float | None = None, checkout: Path | None = None
) -> dict:
    """Run ``argv`` from the repository root: its wall ``seconds``, ``cpu_seconds`` (user and system, every thread),
    ``peak_rss_mb`` (the command's own, whatever this process holds: it runs under :data:`PEAK_OF_CHILD`) and
    ``stdout``; its standard error goes to ``log``. ``checkout``: another checkout of blocksvm (a worktree of an older
    commit) to run from instead of this one: the child's working directory (``python -m`` puts it first on
    ``sys.path``) and first on its ``PYTHONPATH``. A failed or killed run (past ``timeout`` seconds) adds ``error``:
    why, and the log's last lines."""
    root = Path(checkout or REPO)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    with (
        open(log, "w+") if log else tempfile.TemporaryFile("w+") as err,
        tempfile.NamedTemporaryFile("r", suffix=".rss") as peak,
    ):
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-c", PEAK_OF_CHILD, peak.name, *argv], stdout=subprocess.PIPE,
                                 stderr=err, cwd=root, env=env, text=True, start_new_session=True)  # fmt: skip
        timer = threading.Timer(timeout, os.killpg, (child.pid, signal.SIGKILL)) if timeout else None
        if timer:
            timer.start()
        stdout, _ = child.communicate()
        if timer:
            timer.cancel()
        result = {"seconds": time.perf_counter() - start, "stdout": stdout}
        usage = peak.read().split()
        result["peak_rss_mb"] = int(usage[0]) / 1024 if usage else float("nan")
        result["cpu_seconds"] = float(usage[1]) if usage else float("nan")
        if child.returncode != 0:
            err.seek(0)
            tail = " / ".join(err.read().strip().splitlines()[-3:])
            why = "killed after the time limit" if child.returncode < 0 else f"exit status {child.returncode}"
            result["error"] = f"{why}: {tail}"
    return result


def cli(*args: str) -> list[str]:
    """The command line of ``blocksvm ARGS`` in this checkout."""
    return [sys.executable, "-m", "blocksvm.cli", *map(str, args)]


def job(kind: str, log: Path | None = None, timeout: float | None = None, **kwargs) -> dict:
    """Run the calling script's job ``kind`` (see :func:`serve`) with ``kwargs`` in a fresh interpreter: its
    result, with the child's ``seconds``, ``peak_rss_mb`` and ``output`` (its standard output), or ``error``."""
    script = str(Path(sys.modules["__main__"].__file__).resolve())
    with tempfile.TemporaryDirectory(prefix="bench-job-") as folder:
        result_file = Path(folder) / "result.json"
        run = command([sys.executable, script, "--job", kind, json.dumps(kwargs, default=str), str(result_file)],
                      log, timeout)  # fmt: skip
        if "error" not in run:
            run.update(json.loads(result_file.read_text()))
    run["output"] = run.pop("stdout")[-4000:]
    if "error" in run:
        print(f"  {kind} failed ({run['error']})", file=sys.stderr)
    return run


def serve(jobs: dict) -> None:
    """In a child started by :func:`job`: run the job its command line names, write its result, exit."""
    if len(sys.argv) == 5 and sys.argv[1] == "--job":
        result = jobs[sys.argv[2]](**json.loads(sys.argv[3]))
        Path(sys.argv[4]).write_text(json.dumps(result, default=str))
        sys.exit(0)


def timed(work) -> tuple[float, float]:
    """Wall seconds and CPU seconds (every thread of this process) of ``work()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def in_turns(configs: list, repeat: int, run) -> dict:
    """``run(config)`` ``repeat`` times for each config, in turns (A B A B ...), so that a load that comes and goes
    on a shared machine hits each alike: config -> its results."""
    results = {config: [] for config in configs}
    for _ in range(repeat):
        for config in configs:
            results[config].append(run(config))
    return results


def peak_rss_mb(field: str = "VmHWM") -> float:
    """This process's peak RSS (``VmHWM``) or RSS now (``VmRSS``), in MB."""
    with open("/proc/self/status") as f:
        return next((int(line.split()[1]) / 1024 for line in f if line.startswith(field + ":")), float("nan"))


def parser(doc: str, full: bool = False) -> argparse.ArgumentParser:
    """A bench's parser: its docstring's first paragraph (``full``: all of it) as the description."""
    return argparse.ArgumentParser(
        description=doc if full else doc.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )


def add_quick(p: argparse.ArgumentParser, what: str = "small sizes, to test the script") -> None:
    p.add_argument("--quick", action="store_true", help=what)


def quick(p: argparse.ArgumentParser, args: argparse.Namespace, **small) -> argparse.Namespace:
    """With ``--quick``: each option of ``small`` that was left at its default takes the small value."""
    for name, value in small.items():
        if args.quick and getattr(args, name) == p.get_default(name):
            setattr(args, name, value)
    return args


def train(store, options: dict, workers: int = 0):
    """One training run from ``store``, after a pass that loads numba's caches (and the workers'): on a dask
    ``LocalCluster`` of ``workers`` processes when ``workers``. Its ``TrainResult``."""
    from blocksvm.train import train as fit

    def one(**extra):
        return fit(str(store), verbose=0, progress=False, **{**options, **extra})

    one(max_outer=1)
    if not workers:
        return one()
    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        one(client=client, max_outer=1)
        return one(client=client)
