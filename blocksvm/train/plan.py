"""The run's memory: one budget, ``--memory-mb``, for the whole process, planned once when the run starts.

What the process holds besides its data comes off the budget first, and what is left keeps data in memory::

    runtime     the interpreter, numpy, scipy, numba and its kernels, h5py, the readers' threads: RUNTIME, a figure
                (190 MB measured at the peak of a run on a tiny store; 137 MB of it before the run's first pass), not
                a reading of this process: the plan is the same in every process, and so are the blocks kept
    learner     its arrays: the bytes a row it declares (``row_bytes``: dual CD's alpha and shrinking flag) times the
                rows and problems, and its weight vectors (``weight_copies``); what it keeps of each row kept
                (``kept_row_bytes``: dual CD's target and norm of the row) is counted with the blocks kept
    in flight   the blocks read ahead and the one in the learner's hands, decoded, and a stored chunk a decoding
                thread
    data        the rest: a block learner's cache (dual CD's --working-set cache, counted three times: built anew
                beside the old and gathered with a block) and the decoded blocks kept across passes; a pass learner's
                kept blocks; a column learner's columns

A budget given below what the process needs before any data (``minimum``) is refused in one line naming the smallest
that works. By default the budget is half of the memory available when the run starts. The plan's data bytes go into
the checkpoint, so that a resumed run keeps the same blocks (the default budget differs from process to process) and
ends where an uninterrupted one does.
"""

from __future__ import annotations

from dataclasses import dataclass

from blocksvm.errors import ParameterError
from blocksvm.store.kept import block_bytes

DEFAULT_SHARE = 0.5  # of the memory available when the run starts
FALLBACK_MB = 1024  # the budget where the memory available cannot be read (not Linux)
CACHE_DEFAULT_MB = 64.0  # the support-vector cache of --working-set cache, when --cache-mb is not given
CACHE_COPIES = 3  # the cache built anew beside the old one, and gathered with the block it is solved with
RUNTIME = 250e6  # bytes of the runtime (190 MB measured at a tiny run's peak, and room for a pass's temporaries)
CHUNK_BYTES = 8e6  # a stored chunk (the store's 1M elements of 8 bytes at most), one a decoding thread


@dataclass(frozen=True)
class Budget:
    """The bytes the run's data may take, in words what they are (``said``: the budget and how it is spent), and the
    bytes the process holds besides (``besides``: a budget that keeps more data is the two)."""

    bytes: float
    said: str
    besides: float = 0.0


@dataclass(frozen=True)
class MemoryPlan:
    """The process's budget (bytes, and where it came from) and what comes off it before the data (bytes)."""

    total: float
    source: str
    runtime: float
    learner: float
    in_flight: float
    recorded: float | None = None  # the data bytes of the plan a resumed run was made with

    @property
    def minimum(self) -> float:
        return self.runtime + self.learner + self.in_flight

    @property
    def data(self) -> float:
        return self.recorded if self.recorded is not None else max(self.total - self.minimum, 0.0)

    def budget(self) -> Budget:
        """The data's :class:`Budget`, said as the process's: where each part of it goes."""
        mb = lambda x: f"{x / 1e6:,.0f} MB"  # noqa: E731
        said = (
            f"{self.source} (the runtime {mb(self.runtime)}, the learner's arrays {mb(self.learner)}, the blocks in "
            f"flight {mb(self.in_flight)}, its data {mb(self.data)}"
            + (", as when the run started" if self.recorded is not None else "")
            + ")"
        )
        return Budget(self.data, said, self.minimum)

    def check(self, given: bool) -> None:
        """Refuse a budget given below what the process needs before its data: one line naming the smallest."""
        if given and self.recorded is None and self.total < self.minimum:
            raise ParameterError(
                f"{self.source} is below what this run needs before it keeps any data, {self.minimum / 1e6:,.0f} MB "
                f"(the runtime {self.runtime / 1e6:,.0f} MB, the learner's arrays {self.learner / 1e6:,.0f} MB, the "
                f"blocks in flight {self.in_flight / 1e6:,.0f} MB): give --memory-mb {round_up(self.minimum / 1e6)} "
                "or more"
            )


def make_plan(params, store, solver_class, n_problems: int, recorded: float | None = None) -> MemoryPlan:
    """The plan of a run of ``solver_class`` on ``store`` under ``params``' budget (``recorded``: the data bytes of a
    resumed run's plan, kept as they were)."""
    total, source = process_budget(params)
    sizes = [block_bytes(store, b["rows"], b["nnz"]) for b in store.blocks] or [0.0]
    # two blocks decoded at least, also without reads ahead (a run's blocks kept do not change with --prefetch 0 and
    # 1), and a stored chunk a decoding thread (a block is read and decoded chunk by chunk)
    in_flight = (max(params.prefetch, 1) + 1) * max(sizes) + (params.read_threads or 2) * CHUNK_BYTES
    weights = 8.0 * (store.n_features + 1) * n_problems * solver_class.weight_copies
    learner = solver_class.row_bytes * store.n_rows * n_problems + weights
    return MemoryPlan(total, source, RUNTIME, learner, in_flight, recorded)


def process_budget(params) -> tuple[float, str]:
    """The process's budget in bytes and where it came from: ``--memory-mb``, else half of the memory available."""
    if params.memory_mb is not None:
        return params.memory_mb * 1e6, f"--memory-mb {params.memory_mb:g}"
    available = available_mb()
    if available is None:
        return FALLBACK_MB * 1e6, f"{FALLBACK_MB:,} MB (the memory available is unknown here)"
    mb = DEFAULT_SHARE * available
    return mb * 1e6, f"{mb:,.0f} MB, half of the {available:,.0f} MB available"


def block_memory(params, store, budget: Budget, workers: int = 0) -> tuple[float, float]:
    """A block learner's data budget, split: ``(its cache, the kept blocks' bytes)``: the cache of ``--working-set
    cache`` (``params`` at the learner's own defaults: three copies while it is rebuilt and gathered; by default 64 MB,
    less where the budget has less room), the rest for the blocks kept. ``workers``: the shards sharing it (0: none,
    this process's passes)."""
    share = budget.bytes / max(workers, 1)
    cache = 0.0
    if params.working_set == "cache":
        cache = params.cache_mb * 1e6 if params.cache_mb else min(CACHE_DEFAULT_MB * 1e6, share / CACHE_COPIES)
    return cache, max(share - CACHE_COPIES * cache, 0.0)


def available_mb() -> float | None:
    """Megabytes of memory available to a new allocation without swapping (Linux's MemAvailable), or None."""
    try:
        with open("/proc/meminfo") as meminfo:
            kb = next(int(line.split()[1]) for line in meminfo if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError):
        return None
    return kb / 1024


def round_up(mb: float) -> int:
    """A budget a little above ``mb``, in round figures: 0.3 -> 1, 63 -> 67, 180.3 -> 190, 1234 -> 1300."""
    step = 10 ** max(0, len(str(int(mb))) - 2)
    return int((mb * 1.05 // step + 1) * step)


def memory_note(name: str, budget: Budget, kept, words: tuple[str, str, str]) -> str:
    """The run's memory budget, how it is spent and where learner ``name``'s data comes from: kept in memory, or partly
    or wholly read again at every pass (or round, :func:`memory_warning`). ``kept``: what keeps it (``bytes`` all of it
    takes, ``fits``; for blocks, its ``plan`` of ``sizes``); ``words``: what is kept ("the store"), what reads it
    ("pass") and its pronoun ("it")."""
    if not kept.fits:
        return memory_warning(name, budget, kept, words)
    what, each, _ = words
    return (
        f"memory budget {budget.said}: {name} keeps {what} in memory ({kept.bytes / 1e6:,.0f} MB): its later "
        f"{each}es read nothing"
    )


def memory_warning(name: str, budget: Budget, kept, words: tuple[str, str, str]) -> str | None:
    """When the data does not all fit the budget (else None): what every pass (or round) reads again, and the budget
    that would keep it all when this machine has twice that memory available."""
    if kept.fits:
        return None
    what, each, it = words
    needed = kept.bytes / 1e6
    head = f"memory budget {budget.said}: {name}"
    planned, total = len(getattr(kept, "plan", ())), len(getattr(kept, "sizes", ()))
    part = f" keeps {planned} of its {total} blocks in memory;" if planned else ""
    reads = f"every {each} of {name} reads {'the others' if planned else it} again"
    more = f"{what} {'needs' if it == 'it' else 'need'} {needed:,.3g} MB in memory"
    available = available_mb()
    whole = needed + budget.besides / 1e6
    if available is not None and whole < available / 2:  # it would fit, with room for the rest of the run
        return (
            f"{head}{part} {more}: {reads}; --memory-mb {round_up(whole)} keeps {it} in memory ({available:,.0f} MB "
            f"available), and its later {each}es read nothing"
        )
    return f"{head}{part} {more}: {reads} (a larger --memory-mb keeps {it})"
