"""Keep numba's on-disk cache consistent with the sources of every compiled function.

numba invalidates a cached function only when *its own* file changes, so a kernel that calls a
helper from another module keeps running the old helper after that module is edited. At import,
blocksvm hashes the sources of all its modules that define compiled functions and, if the hash
changed since the caches were written, deletes them (they are rebuilt on first use).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
STAMP = PACKAGE / "__pycache__" / "numba-sources.sha1"


def sources_digest() -> str:
    digest = hashlib.sha1()
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_bytes()
        if b"@njit" in text:
            digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + text)
    return digest.hexdigest()


def ensure_fresh_cache() -> None:
    """Delete stale numba cache files if any compiled module changed (best effort)."""
    try:
        current = sources_digest()
        if STAMP.exists() and STAMP.read_text() == current:
            return
        for pattern in ("*.nbi", "*.nbc"):
            for cached in PACKAGE.rglob(pattern):
                cached.unlink(missing_ok=True)
        STAMP.parent.mkdir(exist_ok=True)
        STAMP.write_text(current)
    except OSError:
        pass  # a read-only installation: numba then caches elsewhere or not at all
