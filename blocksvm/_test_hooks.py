"""A test-only hook that stops a process half-way through writing a file, so that a test kills it at exactly that
point whatever the machine's speed or load.

``BLOCKSVM_TEST_PAUSE_WRITING="NAME:MARKER"``: the first write of a file named NAME (a model's ``m.h5.partial``, a
block file ``block-00001.h5``, an export's ``m.txt.partial``, a manifest's ``manifest.json.tmp``) stops once half its
bytes are on disk, creates the file MARKER and sleeps; a process left paused exits after 10 minutes as if killed. The
pause happens once: not if MARKER exists already. Unset, the hook costs one environment lookup per file written.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

PAUSE_WRITING = "BLOCKSVM_TEST_PAUSE_WRITING"


def pause_due(path: str | os.PathLike) -> bool:
    """Whether the write of ``path`` is to pause half-way (see the module docstring)."""
    spec = os.environ.get(PAUSE_WRITING)
    if spec is None:
        return False
    name, _, marker = spec.partition(":")
    return Path(path).name == name and not Path(marker).exists()


def pause() -> None:
    """Create the marker and wait for the test's kill (the caller has flushed half its bytes)."""
    Path(os.environ[PAUSE_WRITING].partition(":")[2]).touch()
    time.sleep(600)
    os._exit(137)
