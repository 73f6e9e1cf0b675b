"""The one progress channel: tqdm bars on a terminal, silence elsewhere."""

from __future__ import annotations

import sys

from tqdm.auto import tqdm


def progress_enabled(progress: bool | None) -> bool:
    """``None`` means: show progress only when standard error is a terminal."""
    if progress is None:
        return sys.stderr.isatty()
    return bool(progress)


def progress_bar(
    total: float | None,
    desc: str,
    *,
    unit: str = "it",
    enabled: bool | None = None,
    unit_scale: bool = False,
    leave: bool = True,
) -> tqdm:
    """A tqdm bar, disabled (and free) when progress is off."""
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=unit_scale,
        leave=leave,
        disable=not progress_enabled(enabled),
        dynamic_ncols=True,
        file=sys.stderr,
    )
