"""The one progress channel: tqdm bars on a terminal, silence elsewhere."""

from __future__ import annotations

import sys


def progress_enabled(progress: bool | None) -> bool:
    """``None`` means: show progress only when standard error is a terminal."""
    if progress is None:
        return sys.stderr.isatty()
    return bool(progress)


class _Silent:
    """A bar that shows nothing: what the commands call on a tqdm bar (``update``, ``n``, ``set_postfix_str``,
    ``close``, a context), without importing tqdm, which costs a run 40-60 ms (asyncio and the rest)."""

    def __init__(self, total: float | None):
        self.total, self.n = total, 0

    def update(self, n: float = 1) -> None:
        self.n += n

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc) -> None:
        pass


def progress_bar(
    total: float | None,
    desc: str,
    *,
    unit: str = "it",
    enabled: bool | None = None,
    unit_scale: bool = False,
    leave: bool = True,
):
    """A tqdm bar, or (progress off) a silent one that costs nothing."""
    if not progress_enabled(enabled):
        return _Silent(total)
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=unit_scale,
        leave=leave,
        dynamic_ncols=True,
        file=sys.stderr,
    )
