"""The peers' side of a bench: LIBLINEAR's weights, the objectives every model is judged by, Vowpal Wabbit."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

from harness import REPO

# liblinear-multicore: `pip install --target DIR liblinear-multicore`; it shadows liblinear-official, so it is
# imported only in a job's own process (liblinear(multicore=True))
MULTICORE = Path(os.environ.get("LIBLINEAR_MULTICORE", REPO.parent / "peers" / "liblinear-multicore"))


def liblinear(multicore: bool = False):
    """``liblinear.liblinearutil``: liblinear-official's, or (``multicore``) liblinear-multicore's."""
    if multicore:
        import numpy  # noqa: F401 - this environment's numpy and scipy, not the copies a --target install brings
        import scipy.sparse  # noqa: F401

        sys.path.insert(0, str(MULTICORE))
    from liblinear import liblinearutil

    if multicore and str(MULTICORE) not in liblinearutil.__file__:
        raise SystemExit(f"liblinear-multicore is not in {MULTICORE} (set LIBLINEAR_MULTICORE)")
    return liblinearutil


def weights(model):
    """A LIBLINEAR model's ``(w, b)`` for the label +1 (``b``: the bias weight times the bias)."""
    import numpy as np

    w, b = model.get_decfun()
    sign = 1.0 if model.get_labels()[0] == 1 else -1.0
    return sign * np.asarray(w), sign * b


def objective(w, b: float, X, y, C: float, loss: str, penalty: str = "l2", bias: float = 1.0) -> float:
    """LIBLINEAR's primal objective in float64: ``1/2 ||(w, b / bias)||^2`` (l2) or ``||(w, b / bias)||_1`` (l1),
    the bias weight regularized as with ``-B``, plus ``C sum loss(y (X w + b))``."""
    import numpy as np

    from blocksvm.losses import LOSSES

    tail = b / bias if bias > 0 else 0.0
    regularizer = np.abs(w).sum() + abs(tail) if penalty == "l1" else 0.5 * (w @ w + tail * tail)
    return float(regularizer + C * LOSSES[loss].value(y * (X @ w + b)).sum())


def ladder(settings, fit, fstar: float, target: float, key: str) -> list[dict]:
    """``fit(setting) -> (seconds, objective)`` for each setting in turn (``-e`` down, iterations up) until one is
    within ``target`` of ``fstar`` (relative): each try's setting, seconds and relative objective."""
    tried = []
    for setting in settings:
        seconds, value = fit(setting)
        tried.append({key: setting, "seconds": seconds, "rel": (value - fstar) / fstar})
        if tried[-1]["rel"] <= target:
            break
    return tried


def to_vw(source: Path, target: Path) -> dict:
    """LIBSVM text -> VW text, ``label | 0:1 index:value ...`` (feature 0: the bias); its seconds and rows."""
    start, rows = time.perf_counter(), 0
    partial = target.with_name(target.name + ".partial")
    with open(source, "rb") as src, open(partial, "wb") as dst:
        for line in src:
            parts = line.split(None, 1)
            if parts:  # (w8a ends with a blank line)
                dst.write(
                    (b"1" if float(parts[0]) > 0 else b"-1") + b" | 0:1 " + (parts[1] if len(parts) > 1 else b"\n")
                )
                rows += 1
    os.replace(partial, target)
    return {"seconds": time.perf_counter() - start, "rows": rows}


def vw(data: Path, n_features: int, passes: int = 1, loss: str = "hinge", l2: float | None = None, cache=True):
    """Vowpal Wabbit on VW text, ``--noconstant`` (the bias is feature 0); its weights ``(w, b)`` and the seconds
    of its passes. Numeric feature names hash to themselves: weight i is feature i. With ``--l2`` VW keeps the
    weights times a running factor (``l2_state`` in the readable model)."""
    import numpy as np
    from vowpalwabbit import Workspace

    readable, cache_file = f"{data}.readable.txt", f"{data}.cache"
    arguments = ["-d", str(data), "--loss_function", loss, "--noconstant", "--holdout_off", "--quiet",
                 "-b", str(max(18, (n_features + 1).bit_length())), "--readable_model", readable]  # fmt: skip
    arguments += ["--l2", repr(l2)] if l2 else []
    arguments += ["--cache_file", cache_file, "-k", "--passes", str(passes)] if cache or passes > 1 else []
    start = time.perf_counter()
    workspace = Workspace(arg_list=arguments)  # runs every pass
    seconds = time.perf_counter() - start
    workspace.finish()  # writes the readable model
    w, scale = np.zeros(n_features + 1), 1.0
    with open(readable) as f:
        for line in f:
            if m := re.match(r"^(\d+):(\S+)", line):
                if int(m.group(1)) <= n_features:
                    w[int(m.group(1))] = float(m.group(2))
            elif line.startswith("l2_state "):
                scale = float(line.split()[1])
    Path(readable).unlink()
    Path(cache_file).unlink(missing_ok=True)
    return scale * w[1:], scale * w[0], seconds
