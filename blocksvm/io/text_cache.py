"""A LIBSVM text file as a training input: converted once into a cached block store, reused while unchanged.

``blocksvm train data.txt model.h5`` trains from ``data.txt.<digest>.bsvm-cache/`` in the user's cache folder
(:func:`default_cache_dir`: ``~/.cache/blocksvm``, ``$BLOCKSVM_CACHE_DIR``) or under ``--cache-dir``. The cache is a
plain store (docs/FORMAT.md) plus ``source.json``, the fingerprint it was made from: the text file's size,
modification time and change time (ns), its identity (device and inode), the conversion options and the blocksvm
version, and the store's id. The cache is reused only while all of them match; otherwise it is converted again,
atomically replacing the stale one, and the line that
says so names what changed.

Why the change time and the identity: a file edited in place and given its old modification time back (``cp
-p``, ``rsync -t``, ``touch -r`` do that) keeps its size and mtime, but every write sets its change time
(``st_ctime_ns``), which no copy tool can set back, and a copy over it is another inode. The price: a file
moved or restored from a backup is converted again, although its bytes may be the same.

Why a kill never leaves a cache that looks valid: the converter publishes the store by one
rename, and ``source.json`` is written (atomically) only after that; a store without a matching
``source.json`` is stale, whatever else it holds. The fingerprint is taken before converting,
so a file changed during the conversion does not match it afterwards either.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from blocksvm._version import __version__
from blocksvm.errors import BlocksvmError, ParameterError, StoreError
from blocksvm.io.conversion import convert
from blocksvm.io.text import open_input
from blocksvm.schema import Field, Schema
from blocksvm.store import BlockStore
from blocksvm.store import format as F
from blocksvm.store.writer import write_json_atomic

CACHE_SUFFIX = ".bsvm-cache"
SOURCE_FILE = "source.json"  # the fingerprint, beside the manifest
# convert()'s keywords that are not conversion options; "jobs" changes the speed, not the store, and "columns" adds
# the column layout beside the same rows (written on demand where a learner needs it)
NOT_OPTIONS = ("input", "output", "overwrite", "progress")
NOT_FINGERPRINTED = ("jobs", "columns")


def say_to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def store_for(
    path: str | os.PathLike,
    cache_dir: str | os.PathLike | None = None,
    convert_options: dict | None = None,
    say: Callable[[str], None] | None = say_to_stderr,
    progress: bool | None = False,
) -> Path:
    """The store to train from: ``path`` itself if it is a directory, else the cached store of the text file.

    Parameters
    ----------
    path : str or PathLike
        A block store directory, or a LIBSVM/svmlight file (plain, .gz, .bz2, .xz).
    cache_dir : str or PathLike, optional
        Folder of the cached store (created if missing); default: :func:`default_cache_dir`.
    convert_options : dict, optional
        Keywords of :func:`blocksvm.convert` (``block_mb``, ``dtype``, ``seed``, ...); default: its defaults.
    say : callable, optional
        Told one line when the file is converted or its cache reused; None is quiet.
    progress : bool, optional
        Progress bars while converting (None: when standard error is a terminal).

    Returns
    -------
    Path
        A directory that :class:`~blocksvm.store.BlockStore` opens.

    Raises
    ------
    StoreError
        ``path`` does not exist, or the cache cannot be written where it goes.
    InputFormatError
        The text file is malformed (file and line in the message).
    """
    path = Path(path)
    if path.is_dir():
        return path  # a store (BlockStore says what is wrong if it is not one)
    if not path.exists():
        raise StoreError(f"{path}: no such file or block store")
    options = conversion_options(convert_options)
    cache = cache_path(path, cache_dir)
    stat = path.stat()  # before converting: a file changed meanwhile must not match afterwards
    wanted = _fingerprint(path, stat, options)
    found, damaged = _cached_fingerprint(cache)
    changed = damaged or (_what_changed(found, wanted) if found is not None else None)
    if found is not None and not changed:
        _say(say, f"using the cached store {cache}{_skipped(cache)}")
        return cache
    _check_cache_location(cache, path)
    _check_is_text(path)
    why = f"again: {changed}" if found or damaged else "once; reused while the file is unchanged"
    _say(say, f"converting {path} into the cached store {cache} ({why})")
    jobs = options.pop("jobs", None)
    summary = convert(path, cache, overwrite=True, progress=progress, jobs=jobs, **options)
    wanted["store_id"] = BlockStore(cache).store_id
    write_json_atomic(cache / SOURCE_FILE, wanted)
    if summary.skipped_lines:
        first = summary.skipped_examples[0]
        _say(say, f"skipped {summary.skipped_lines:,} malformed lines of {path}; the first: {first}")
    for note in summary.notes():
        _say(say, note)
    return cache


def _skipped(cache: Path) -> str:
    """The malformed lines the cached store's conversion skipped, in words ("" for none)."""
    skipped = BlockStore(cache).manifest.get("skipped_lines", 0)
    return f" ({skipped:,} malformed lines skipped when it was converted)" if skipped else ""


def store_or_cached(
    source,
    cache_dir: str | os.PathLike | None = None,
    *,
    say: Callable[[str], None] | None = say_to_stderr,
    progress: bool | None = False,
    skip_bad_lines: bool = False,
):
    """``source`` as a training input: None or an open :class:`BlockStore` as is, a path through :func:`store_for`
    (``skip_bad_lines``: a text file's malformed lines skipped and counted; refused for a store, converted already).
    """
    if skip_bad_lines and (isinstance(source, BlockStore) or (source is not None and Path(source).is_dir())):
        where = source.path if isinstance(source, BlockStore) else source
        raise ParameterError(
            f"--skip-bad-lines (skip_bad_lines=) reads text; {where} is a store, converted already (its skipped lines: "
            "blocksvm info)"
        )
    if source is None or isinstance(source, BlockStore):
        return source
    options = {"skip_bad_lines": True} if skip_bad_lines else None
    return store_for(source, cache_dir, options, say=say, progress=progress)


CACHE_VARIABLE = "BLOCKSVM_CACHE_DIR"


def default_cache_dir() -> Path:
    """The folder of text inputs' cached stores when no ``--cache-dir`` is given: ``$BLOCKSVM_CACHE_DIR``, else the
    user's cache folder, ``$XDG_CACHE_HOME/blocksvm`` or ``~/.cache/blocksvm`` (where pip and Hugging Face's datasets
    keep theirs): never beside the input, whose folder may be read-only or shared."""
    chosen = os.environ.get(CACHE_VARIABLE)
    if chosen:
        return Path(chosen).expanduser()
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(home) / "blocksvm"


def cache_path(path: str | os.PathLike, cache_dir: str | os.PathLike | None = None) -> Path:
    """Where the cached store of the text file ``path`` goes: ``data.txt.<digest>.bsvm-cache`` in ``cache_dir`` (by
    default :func:`default_cache_dir`), the digest that of the file's folder, so that two ``data.txt`` of different
    folders do not evict each other."""
    path = Path(path)
    folder = hashlib.sha256(str(path.resolve().parent).encode()).hexdigest()[:8]
    return Path(cache_dir or default_cache_dir()) / f"{path.name}.{folder}{CACHE_SUFFIX}"


def conversion_options(given: dict | None = None) -> dict:
    """:func:`blocksvm.convert`'s defaults, updated by ``given`` (unknown names refused)."""
    defaults = {
        name: p.default
        for name, p in inspect.signature(convert).parameters.items()
        if p.kind is p.KEYWORD_ONLY and name not in NOT_OPTIONS
    }
    unknown = set(given or {}) - set(defaults)
    if unknown:
        raise ParameterError(
            f"unknown conversion option(s) {', '.join(sorted(unknown))}; choose among {', '.join(sorted(defaults))}"
        )
    return {**defaults, **(given or {})}


def _fingerprint(path: Path, stat: os.stat_result, options: dict) -> dict:
    kept = {name: value for name, value in options.items() if name not in NOT_FINGERPRINTED}
    return {
        "source": str(path.resolve()),  # for a reader
        "bytes": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "ctime_ns": stat.st_ctime_ns,  # set by every write, and by nothing a user can turn back
        "file": [stat.st_dev, stat.st_ino],  # a copy over the file is another inode
        "options": json.loads(json.dumps(kept)),  # as read back: tuples become lists, keys strings
        "blocksvm": __version__,
    }


# What differs between a cache's fingerprint and the file's, in the words of the line that says so; the first
# that differs is named. A cache made before change times were recorded is converted again once.
_CHANGES = (
    ("options", "the conversion options changed"),
    ("blocksvm", "another blocksvm version made the cache"),
    ("bytes", "the file's size changed"),
    ("mtime_ns", "the file's modification time changed"),
    ("file", "the file is another one now, a copy or a move over it"),
    ("ctime_ns", "the file was written since, its size and modification time kept"),
)


def _what_changed(found: dict, wanted: dict) -> str | None:
    """Why the cache of fingerprint ``found`` is not the file's of fingerprint ``wanted`` (None: it is)."""
    if "ctime_ns" not in found:
        return "an older blocksvm made the cache, without the file's change time and identity"
    return next((why for key, why in _CHANGES if found.get(key) != wanted[key]), None)


CACHE_KEY_SCHEMA = Schema(
    (
        Field("source", "str"),
        Field("bytes", "int", low=0),
        Field("mtime_ns", "int"),
        Field("ctime_ns", "int", optional=True),  # (a cache of an older blocksvm has neither: converted again once)
        Field("file", "list", optional=True, low=2, high=2, items=Field("", "int")),
        Field("options", "dict"),
        Field("blocksvm", "str"),
        Field("store_id", "str", null=True),
    )
)
"""What a cache's ``source.json`` (its key: the text file's identity and the conversion's options) may say."""


def _cached_fingerprint(cache: Path) -> tuple[dict | None, str | None]:
    """The fingerprint of a complete cached store at ``cache`` (None if there is none that opens), and why its
    record cannot be trusted when it is damaged (then the cache is converted again, saying so)."""
    try:
        text = (cache / SOURCE_FILE).read_text()
        store_id = BlockStore(cache).store_id
    except (OSError, ValueError, StoreError):
        return None, None
    try:
        found = CACHE_KEY_SCHEMA.check(json.loads(text), SOURCE_FILE)
    except (ValueError, BlocksvmError) as exc:  # not JSON, or not the record of a key
        return None, f"its record {SOURCE_FILE} is damaged ({str(exc).splitlines()[0]})"
    if found.get("store_id") != store_id:
        return None, None  # the store was replaced after its fingerprint was written
    return found, None


def _check_cache_location(cache: Path, source: Path) -> None:
    """Refuse, in one line, a cache that cannot be written, or a path the cache would wrongly replace."""
    remedy = "pass --cache-dir DIR (cache_dir= in Python) to put it elsewhere"
    folder = cache.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)  # a --cache-dir may not exist yet
    except OSError as exc:
        raise StoreError(
            f"cannot create the cached store {cache} for {source}: folder {folder} cannot be "
            f"created ({exc.strerror or exc}); {remedy}"
        ) from None
    if not os.access(folder, os.W_OK):
        raise StoreError(
            f"cannot create the cached store {cache} for {source}: folder {folder} is not writable "
            f"(permission denied or a read-only file system); {remedy}"
        )
    if cache.exists() and not (cache / F.MANIFEST).is_file():  # not one of ours: never delete it
        raise StoreError(
            f"cannot create the cached store {cache} for {source}: {cache} exists and is not a block "
            f"store; remove it, or {remedy}"
        )


def _check_is_text(path: Path) -> None:
    """Refuse a file that is not text (a model given for the data: ``train model.h5 m.h5``) before saying that it is
    being converted: the reader's own check, run ahead."""
    stream, counter = open_input(path)
    stream.close()
    counter.close()


def _say(say: Callable[[str], None] | None, text: str) -> None:
    if say is not None:
        say(text)
