"""The bench harness: what every script in tools/ shares, written once.

- :mod:`harness.data`: generated LIBSVM text and stores (written once, reused), the real sets of
  ``../shared/data``, held-out rows, warm caches;
- :mod:`harness.run`: a command or a job of the calling script in a fresh interpreter, with its seconds and peak
  RSS (``os.wait4``), runs taken in turns, ``--quick`` sizes;
- :mod:`harness.peers`: LIBLINEAR's (and liblinear-multicore's) weights, the objectives every model is judged
  by, a setting ladder run until a target, Vowpal Wabbit;
- :mod:`harness.report`: markdown tables, the machine line, JSON.

A bench is then its configuration: its sets, its runs, its table. Every bench measures the checkout it lies in:
this folder's parent comes first on ``sys.path`` and on its children's ``PYTHONPATH``.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"
OUT = REPO / "bench-out"

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
