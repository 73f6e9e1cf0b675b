"""What a bench prints and writes: markdown tables, the machine it ran on, JSON."""

from __future__ import annotations

import json
import os
import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGES = {"blocksvm": "blocksvm", "sklearn": "scikit-learn", "liblinear": "liblinear-official",
            "vowpalwabbit": "vowpalwabbit", "numba": "numba"}  # fmt: skip


def table(header: list[str], rows: list[list], align: str | None = None) -> str:
    """A markdown table; ``align`` has an ``l`` or ``r`` a column (default: the first left, the others right)."""
    align = align or "l" + "r" * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "|" + "".join("---|" if a == "l" else "---:|" for a in align)]
    return "\n".join(lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows])


def seconds(x: float | None) -> str:
    if x is None:
        return ""
    return f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 1000 else f"{x:,.0f}"


def machine() -> str:
    """This machine, the versions that are measured, and the load when a bench starts: one line."""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        cpu = platform.machine()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    versions = []
    for module, dist in PACKAGES.items():
        try:
            versions.append(f"{module} {version(dist)}")
        except PackageNotFoundError:
            pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{platform.node()}: {os.cpu_count()} cores ({cpu}), {memory:.0f} GiB RAM, Python "
            f"{platform.python_version()}, {'; '.join(versions)}; load average at start {load}")  # fmt: skip


def write_json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, default=str))
    return path
