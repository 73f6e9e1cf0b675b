"""LIBSVM text -> block store, in bounded memory.

Two passes, both streaming:

1. **Partition.** Parse the file chunk by chunk and append every row to a bucket on disk
   (:mod:`blocksvm.io.spill`): a uniformly random bucket when shuffling, else consecutive rows
   fill one bucket after another. The number of buckets comes from the size of the first chunk
   scaled to the file size; if that estimate proves far off, the buckets are repartitioned once.
2. **Blocks.** Each bucket becomes one block: read it, permute its rows (when shuffling), compress
   and write it, one HDF5 file each, by a few threads.

Together the two passes give every row a uniformly random block and a random place in it, so a
file sorted by label yields blocks that each hold both classes. Peak memory is one chunk of text
per parser thread, the spill buffer, about two blocks per writer thread, and the set of feature
indices met (:class:`~blocksvm.features.FeatureSet`: sized by the distinct features, never by the
largest index). Pass 1 learns that set, so when the space is sparse (:func:`~blocksvm.features.compact_space`)
pass 2 writes the blocks' columns compactly and the store keeps the feature map (docs/FORMAT.md).
"""

from __future__ import annotations

import inspect
import os
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from blocksvm._interrupt import sigint_held
from blocksvm._progress import progress_bar
from blocksvm.errors import InputFormatError, ParameterError, refuse_writing_over
from blocksvm.features import compact_space, rank_in
from blocksvm.io.arrays import NAME, given_rows, rows_as_chunk
from blocksvm.io.delimited import iter_csv
from blocksvm.io.facts import ConvertSummary, Pass1, WeightTally, check_row_norms, rare_labels, tally
from blocksvm.io.libsvm import resolve_index_base
from blocksvm.io.spill import Record, SpillWriter, permute_rows, read_bucket
from blocksvm.io.text import CHUNK_BYTES
from blocksvm.io.vw import iter_text, text_format_of
from blocksvm.io.weights import with_weights
from blocksvm.params import cores
from blocksvm.store import format as F
from blocksvm.store.writer import StoreBuilder, write_block, write_feature_map

if TYPE_CHECKING:  # the column layout is imported when written (convert --columns), not by every conversion
    from blocksvm.store.columns import FeatureCounts

DEFAULT_BLOCK_MB = 64.0


@dataclass(frozen=True)
class StoreLayout:
    """How a store is cut and written: the options :func:`convert` and :func:`write_store` share (documented with
    :func:`convert`), checked once when made."""

    block_rows: int | None = None
    block_mb: float | None = None
    shuffle: bool = True
    seed: int = 0
    dtype: str = "float32"
    compression: str = F.DEFAULT_COMPRESSION
    n_features: int | None = None
    overwrite: bool = False
    progress: bool | None = None
    jobs: int | None = None
    columns: bool = False

    def __post_init__(self) -> None:
        """Refuse bad options before any work."""
        _block_target(self.block_rows, self.block_mb, self.dtype)
        F.compression_filters(self.compression)
        if self.width is not None and self.width < 1:
            raise ParameterError(f"n_features must be a positive integer (--n-features), not {self.width}")
        if self.width is not None and self.width > np.iinfo(np.int32).max:
            raise ParameterError(f"a store holds at most {np.iinfo(np.int32).max:,} features, not {self.width:,}")
        if self.jobs is not None and self.jobs < 1:
            raise ParameterError(f"jobs must be a positive integer (--jobs), not {self.jobs}")

    @property
    def width(self) -> int | None:
        """The store's features, when given (else the rows' largest index says)."""
        return self.n_features

    @property
    def threads(self) -> int:
        """Parser threads, and block writers: ``jobs``, or one a core."""
        return self.jobs or cores()


@dataclass(frozen=True)
class ConvertOptions(StoreLayout):
    """Every option of :func:`convert` (documented there) as one value: the store's layout, and how the text is
    read. Checked once when made, in the order :func:`convert` documents them."""

    zero_based: bool | str = "auto"
    skip_bad_lines: bool = False
    chunk_bytes: int = CHUNK_BYTES
    csv_label: str | None = None
    text_format: str = "libsvm"
    hash_bits: int | None = None
    hash_all: bool = False
    weights: str | os.PathLike | None = None

    def __post_init__(self) -> None:
        """Refuse options that are wrong, or do not go together, before any work."""
        if self.zero_based not in ("auto", True, False):
            raise ParameterError(f"zero_based must be 'auto', True or False, not {self.zero_based!r}")
        text = self.text
        if text is not None and self.csv_label is not None:
            raise ParameterError("give --csv or --format vw, not both: the input is CSV or VW text")
        if self.weights is not None and text is not None:
            raise ParameterError("VW text carries its weights after each label: --weights is for LIBSVM and CSV text")
        if self.weights is not None and self.skip_bad_lines:
            raise ParameterError(
                "--weights pairs the k-th weight with the k-th row: it cannot be kept in step past skipped lines "
                "(--skip-bad-lines)"
            )
        super().__post_init__()

    @property
    def text(self) -> dict | None:
        """The manifest's ``text`` record (VW's hashing), or None for LIBSVM's indices (and CSV's columns)."""
        return text_format_of(self.text_format, self.hash_bits, self.hash_all)

    @property
    def width(self) -> int | None:
        """VW text: the space of the hash (or ``n_features``, when larger), whatever the rows use."""
        if self.text is None:
            return self.n_features
        return max(self.n_features or 0, 1 << self.text["bits"])

    @property
    def index_base(self) -> bool | str:
        """``zero_based`` as the store records it: hashed columns and a CSV's columns are numbered from 0."""
        return True if self.text is not None or self.csv_label is not None else self.zero_based

    @property
    def recorded(self) -> dict:
        """How the rows were read, as the manifest's ``params`` keep it (beside the layout's)."""
        return {
            "skip_bad_lines": self.skip_bad_lines,
            **({"csv_label": self.csv_label} if self.csv_label is not None else {}),
            **({"weights": str(Path(self.weights).resolve())} if self.weights is not None else {}),
        }


def _keywords(*leading: inspect.Parameter, options: type) -> inspect.Signature:
    """The signature of a function of ``leading`` parameters and ``**options`` that makes ``options`` of them: its
    fields as keywords (for ``help``, and for the readers of the signature)."""
    keywords = [
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=f.type)
        for f in fields(options)
    ]
    return inspect.Signature([*leading, *keywords])


def _positional(name: str, annotation: str = "str | os.PathLike") -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation)


def convert(input: str | os.PathLike, output: str | os.PathLike, **options) -> ConvertSummary:
    """Convert a LIBSVM/svmlight file (plain, .gz, .bz2 or .xz), or Vowpal Wabbit text, into a block store.

    Parameters
    ----------
    input : path
        The text file.
    output : path
        The store directory to create.
    block_rows : int, optional
        Rows per block (about; with shuffling, block sizes vary by a few standard deviations).
    block_mb : float, optional
        Megabytes of in-memory CSR per block, the default way to size blocks (default 64).
        Give at most one of ``block_rows`` and ``block_mb``.
    shuffle : bool, default=True
        Spread rows uniformly at random over blocks and within each block.
    seed : int, default=0
        Seed of the shuffle: the same seed and input give the same store.
    dtype : {"float32", "float64"}, default="float32"
        Type of stored values.
    compression : str, default="blosc-lz4"
        One of ``blosc-lz4``, ``lzf``, ``gzip[-N]``, ``zstd[-N]``, ``none`` (see docs/FORMAT.md).
    zero_based : {"auto", True, False}, default="auto"
        Whether feature indices start at 0. ``"auto"``: zero-based iff some index is 0.
    n_features : int, optional
        Width of the feature space, when the file's largest index is smaller (a test file).
    skip_bad_lines : bool, default=False
        Skip and count malformed lines instead of stopping at the first one.
    overwrite : bool, default=False
        Replace an existing store at ``output``.
    progress : bool, optional
        Show progress bars; default: when standard error is a terminal.
    jobs : int, optional
        Threads that parse the text, and threads that compress and write blocks (default: one a core). The store
        is the same, byte for byte, whatever their number.
    chunk_bytes : int, default=8 MiB
        Text parsed at a time by each parser thread.
    csv_label : str, optional
        Read CSV text instead (:mod:`blocksvm.io.delimited`): a header line, this column (its name or 0-based
        position) the label, every other column a feature in order, empty cells zero. The store has as many
        features as the last nonzero column (``n_features`` for more).
    text_format : {"libsvm", "vw"}, default="libsvm"
        ``"vw"``: Vowpal Wabbit's text (:mod:`blocksvm.io.vw`): labels as written, an importance weight after the
        label (kept as the row's instance weight), names hashed into ``2**hash_bits`` columns by MurmurHash3
        (x86, 32-bit) seeded with their namespace's hash, as VW hashes them; collisions are possible. The store
        records the hashing (manifest ``text``) for ``predict`` and ``stream``. ``zero_based`` does not apply.
    hash_bits : int, optional
        Columns of VW text: ``2**hash_bits`` (1 to 30; default 18, VW's ``-b``).
    hash_all : bool, default=False
        Hash VW names made of digits too (VW's ``--hash all``); by default such a name is its integer plus its
        namespace's hash.
    weights : path, optional
        A file of instance weights, one a line for the rows in order (the "weights" fork of LIBLINEAR's ``-W``):
        finite and >= 0. The store keeps them (docs/FORMAT.md) unless every one is 1.
    columns : bool, default=False
        Also write the store's column layout (:func:`blocksvm.write_columns`, read by the L1 learners), before the
        store is published: it appears complete with its columns at once.

    Returns
    -------
    ConvertSummary

    Raises
    ------
    InputFormatError
        A malformed line (file, line and reason in the message).
    StoreError
        The output cannot be written; nothing that looks like a store is left behind.
    """
    options = ConvertOptions(**options)
    input = Path(input)
    text = None if input.is_dir() else input  # (a folder is no text: the reader says so)
    refuse_writing_over({"the store": output}, {"the text": text, "the weights file": options.weights})
    source_size = _source_size(input)
    if options.csv_label is not None:
        chunks = _csv_chunks(input, options.csv_label, np.dtype(options.dtype))
    else:
        read = {"skip_bad_lines": options.skip_bad_lines, "dtype": options.dtype, "chunk_bytes": options.chunk_bytes}
        chunks = iter_text(input, options.text, one_based=options.zero_based is False, workers=options.threads, **read)
    if options.weights is not None:
        chunks = with_weights(chunks, options.weights, input)
    return _build_store(
        chunks,
        input,
        output,
        options,
        source={"path": str(input.resolve()), "bytes": source_size},
        source_size=source_size,
        zero_based=options.index_base,
        params=options.recorded,
        weighted=options.text is not None or options.weights is not None,
        text=options.text,
    )


convert.__signature__ = _keywords(_positional("input"), _positional("output"), options=ConvertOptions)


def write_store(
    data, output: str | os.PathLike, *, sample_weight=None, chunk_rows: int = 1 << 16, **layout
) -> ConvertSummary:
    """Write rows that are not LIBSVM text into a block store, with :func:`convert`'s shuffling and blocks.

    Parameters
    ----------
    data : (X, y) or iterable of (X, y) or of (X, y, sample_weight)
        ``X`` a numpy array, a scipy sparse matrix, a pandas data frame or a dask array or data frame (rows by
        features), ``y`` its labels (or real targets). One pair is read ``chunk_rows`` rows at a time (a dask
        array one slice at a time, a dask data frame one partition at a time, its ``y`` partitioned alike, as
        ``frame[label]`` is: never computed whole); an iterable (a generator of chunks, a list) is read one pair
        at a time, each with its rows' weights as a third item if they have some. Row ``i`` overall is line
        ``i + 1`` of the store, feature ``j`` column ``j`` (zero-based).
    output : path
        The store directory to create.
    sample_weight : array-like of shape (n_samples,), or str, optional
        Instance weights of the rows of one ``(X, y)`` pair (finite, >= 0; sliced and partitioned as ``y`` is),
        or the name of ``X``'s column that holds them (a pandas or dask data frame: that column is not a
        feature). The store keeps them (docs/FORMAT.md) unless every one is 1. For an iterable: the name of
        each chunk's weight column, or None.
    chunk_rows : int, default=65536
        Rows taken at a time from one ``(X, y)`` pair.
    block_rows, block_mb, shuffle, seed, dtype, compression, n_features, overwrite, progress, jobs, columns
        As for :func:`convert`. ``n_features`` defaults to the width of ``X`` for one pair, to the largest
        column used plus one for an iterable.

    Returns
    -------
    ConvertSummary
        As :func:`convert`'s, its ``output`` the store.

    Raises
    ------
    InputFormatError
        Labels and rows that do not pair up, or values or weights that are not finite, or a negative weight
        (the row named by its number).
    """
    layout = StoreLayout(**layout)
    chunks, weighted, n_features = given_rows(
        data, sample_weight, chunk_rows, layout.n_features, np.dtype(layout.dtype)
    )
    return _build_store(
        chunks,
        NAME,
        output,
        replace(layout, n_features=n_features),  # X's width, when not given
        source={"path": None, "bytes": 0},
        source_size=None,
        zero_based=True,
        params={},
        weighted=weighted,
    )


write_store.__signature__ = _keywords(
    _positional("data", "object"),
    _positional("output"),
    inspect.Parameter("sample_weight", inspect.Parameter.KEYWORD_ONLY, default=None),
    inspect.Parameter("chunk_rows", inspect.Parameter.KEYWORD_ONLY, default=1 << 16, annotation="int"),
    options=StoreLayout,
)


def _csv_chunks(path, label: str, dtype: np.dtype):
    """Parsed chunks of a CSV file, each row numbered by its line."""
    for X, y, first_line, consumed in iter_csv(path, label):
        yield replace(rows_as_chunk(X, y, first_line, dtype, path), source_pos=consumed)


def _build_store(
    chunks,
    name,
    output,
    layout: StoreLayout,
    *,
    source: dict,
    source_size: int | None,
    zero_based,
    params: dict,
    weighted: bool = False,
    text: dict | None = None,
) -> ConvertSummary:
    """The two passes over parsed ``chunks`` (rows with their lines; ``name`` in messages), for :func:`convert`
    and :func:`write_store`. ``source_size``: the source's bytes, for progress and the first estimate of the
    number of blocks (None: unknown, the first chunk's rows stand for all). ``weighted``: the chunks carry
    instance weights (the store keeps them unless every one is 1). ``text``: the manifest's ``text`` entry (how
    names became columns), if any."""
    start = time.perf_counter()
    target, weigh = _block_target(layout.block_rows, layout.block_mb, layout.dtype)
    with StoreBuilder(output, overwrite=layout.overwrite) as builder:
        facts, spill = _partition(
            chunks,
            name,
            builder.partial / "spill.bin",
            target,
            weigh,
            shuffle=layout.shuffle,
            seed=layout.seed,
            dtype=layout.dtype,
            source_size=source_size,
            progress=layout.progress,
            weighted=weighted,
        )
        if facts.rows == 0:
            raise InputFormatError(name, 0, "contains no data rows")
        base = resolve_index_base(zero_based, facts.min_index)
        width = max(facts.max_index - base + 1, 0)
        if layout.width is not None:
            if layout.width < width:
                raise ParameterError(
                    f"n_features={layout.width} is smaller than the file's {width} features (its largest "
                    f"index is {facts.max_index}, {base}-based; --n-features)"
                )
            width = layout.width
        used = facts.features.sorted()  # as written in the source
        compact = used if compact_space(len(used), width) else None
        del facts.features
        weights = facts.weights.manifest() if facts.weights is not None else None
        version = F.store_version(compact is not None, weights is not None)
        if layout.shuffle:
            spill = _rebalance(spill, target, weigh, layout.seed, layout.dtype, builder.partial / "spill2.bin")
        counts = None
        if layout.columns:
            from blocksvm.store.columns import FeatureCounts

            counts = FeatureCounts(width if compact is None else len(compact), facts.nnz)
        entries = _write_blocks(
            spill,
            builder,
            dtype=layout.dtype,
            compression=layout.compression,
            seed=layout.seed if layout.shuffle else None,
            jobs=layout.threads,
            progress=layout.progress,
            compact=compact,
            keep_weights=weights is not None,
            version=version,
            counts=None if counts is None else (counts, 0 if compact is not None else base),
        )
        feature_map = None
        if compact is not None:
            path = builder.partial / F.FEATURES_FILE
            feature_map = write_feature_map(
                path, compact - base, compression=layout.compression, store_id=builder.store_id, version=version
            )
        for path in builder.partial.glob("spill*.bin"):
            path.unlink()
        seconds = time.perf_counter() - start
        columns = []  # the column layout's summary, once written
        builder.commit(
            features=width,
            index_base=base,
            dtype=layout.dtype,
            label_counts=facts.label_counts,
            blocks=entries,
            source=source,
            params={
                "block_rows": layout.block_rows,
                "block_mb": None if layout.block_rows else (layout.block_mb or DEFAULT_BLOCK_MB),
                "shuffle": layout.shuffle,
                "seed": layout.seed,
                "compression": layout.compression,
                "zero_based": zero_based,
                **params,
            },
            skipped_lines=facts.skipped,
            skipped_examples=facts.skipped_examples,
            convert_seconds=round(seconds, 3),
            feature_map=feature_map,
            weights=weights,
            before_publish=_column_writer(layout, columns, counts, output) if layout.columns else None,
            **({"text": text} if text is not None else {}),
        )
    return ConvertSummary(
        str(output),
        facts.rows,
        width,
        facts.nnz,
        len(entries),
        facts.skipped,
        time.perf_counter() - start,
        facts.source_bytes,
        facts.text_bytes,
        facts.skipped_examples,
        None if compact is None else len(compact),
        weights,
        text,
        columns[0].to_dict() if columns else None,
        facts.zero_line if zero_based == "auto" and base == 0 and facts.zero_line is not None else None,
        rare_labels(facts.label_counts, facts.label_lines, facts.rows),
    )


def _column_writer(layout: StoreLayout, summaries: list, counts: FeatureCounts, output):
    """What writes the new store's column layout in its partial folder, before it is published (appending the
    summary to ``summaries``), from the features' ``counts`` taken as the blocks were written."""

    def write(partial: Path) -> None:
        from blocksvm.store.columns import write_columns_unlocked

        summary = write_columns_unlocked(
            partial, block_mb=None, jobs=layout.jobs, progress=layout.progress, counts=counts.counts
        )
        summary.store = str(output)  # where it will be, not the partial folder
        summaries.append(summary)

    return write


def _block_target(block_rows, block_mb, dtype):
    """The block size as ``(target, weigh)``: ``weigh(rows, nnz)`` measures rows against ``target``."""
    if dtype not in F.VALUE_DTYPES:
        raise ParameterError(f"dtype must be one of {', '.join(F.VALUE_DTYPES)}, not {dtype!r}")
    if block_rows is not None and block_mb is not None:
        raise ParameterError("give either block_rows or block_mb, not both")
    if block_rows is not None:
        if int(block_rows) != block_rows or block_rows < 1:
            raise ParameterError(f"block_rows must be a positive integer (--block-rows), not {block_rows}")
        return int(block_rows), lambda rows, nnz: rows
    block_mb = DEFAULT_BLOCK_MB if block_mb is None else block_mb
    if not block_mb > 0:
        raise ParameterError(f"block_mb must be positive (--block-mb), not {block_mb}")
    per_nnz = 4 + np.dtype(dtype).itemsize
    return block_mb * 1e6, lambda rows, nnz: rows * 24 + nnz * per_nnz


def _source_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        raise InputFormatError(path, 0, "no such file") from None


def _partition(chunks, name, spill_path, target, weigh, *, shuffle, seed, dtype, source_size, progress, weighted):
    """Pass 1: take every parsed chunk and spill its rows into their buckets (with their weights if ``weighted``)."""
    facts = Pass1(weights=WeightTally() if weighted else None)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    spill = None
    placed = 0.0  # weight of the rows placed so far (consecutive filling)
    with progress_bar(source_size, "convert", unit="B", unit_scale=True, enabled=progress) as bar:
        for chunk in chunks:
            tally(facts, chunk)
            check_row_norms(chunk, name)
            bar.update(chunk.source_pos - bar.n)
            if chunk.n_rows == 0:
                continue
            lengths = np.diff(chunk.indptr)
            row_weight = weigh(np.ones_like(lengths), lengths)
            if spill is None:
                n_buckets = 1
                if shuffle:
                    scale = source_size / max(chunk.source_pos, 1) if source_size else 1.0
                    n_buckets = max(1, round(float(np.sum(row_weight)) * scale / target))
                spill = SpillWriter(spill_path, n_buckets, dtype, weighted=weighted)
            if shuffle:
                buckets = rng.integers(0, spill.n_buckets, chunk.n_rows)
            else:
                before = placed + np.cumsum(row_weight) - row_weight
                buckets = (before // target).astype(np.int64)
                placed += float(np.sum(row_weight))
                spill.grow(int(buckets[-1]) + 1)
            spill.add(chunk.indptr, chunk.indices, chunk.data, chunk.labels, chunk.lines, buckets, chunk.weights)
        if source_size:
            bar.update(source_size - bar.n)
    if spill is None:
        spill = SpillWriter(spill_path, 1, dtype, weighted=weighted)
    spill.close()
    return facts, spill


def _rebalance(spill: SpillWriter, target, weigh, seed, dtype, path: Path) -> SpillWriter:
    """Repartition the buckets once if the first-chunk estimate missed the block size badly."""
    weights = np.array([weigh(r, n) for r, n in zip(spill.rows, spill.nnz)], dtype=float)
    total = weights.sum()
    wanted = max(1, round(total / target))
    too_big = weights.max() > 1.5 * target and wanted > 1
    too_small = spill.n_buckets > 1 and weights.min() < 0.5 * target
    if not (too_big or too_small) or wanted == spill.n_buckets:
        return spill
    rng = np.random.default_rng(np.random.SeedSequence([seed, 3]))
    fresh = SpillWriter(path, wanted, dtype, weighted=spill.weighted)
    for records in spill.records:
        for record in records:  # one record at a time keeps memory at one flush
            part = read_bucket(spill.path, [record], dtype, spill.weighted)
            buckets = rng.integers(0, wanted, part.n_rows)
            fresh.add(part.indptr, part.indices, part.data, part.labels, part.lines, buckets, part.weights)
    fresh.close()
    spill.path.unlink()
    return fresh


def _write_blocks(
    spill: SpillWriter,
    builder: StoreBuilder,
    *,
    dtype,
    compression,
    seed,
    jobs,
    progress,
    compact,
    keep_weights: bool = False,
    version: int = F.DENSE_VERSION,
    counts: tuple[FeatureCounts, int] | None = None,
) -> list[dict]:
    """Pass 2: turn every non-empty bucket into a block file; return their manifest entries.

    ``compact``: the sorted indices (as written) of a compact store, whose blocks hold positions in
    it; None: blocks hold indices as written. ``keep_weights``: the blocks keep the spill's weights (a spill
    whose weights are all 1 makes a store without them). ``version``: the store's format version. ``counts``: the
    features' counts to add each block's entries to, and the blocks' index base (``convert --columns``).

    ``jobs`` threads, not processes: reading a bucket, permuting it and compressing its chunks
    (:func:`blocksvm.store.chunks.encode`, before h5py is called: h5py serializes every HDF5 call) release the
    GIL, and worker processes would cost seconds to start and their own memory. Each block's bytes depend on its
    bucket and seed alone, so the store is the same whatever ``jobs``.
    """
    buckets = [b for b in range(spill.n_buckets) if spill.rows[b] > 0]
    seeds = np.random.SeedSequence([seed, 2]).spawn(len(buckets)) if seed is not None else None

    def build(i: int) -> dict:
        return _build_block(
            spill.path,
            spill.records[buckets[i]],
            dtype,
            seeds[i] if seeds else None,
            builder.block_path(i),
            i,
            compression,
            builder.store_id,
            compact,
            spill.weighted,
            keep_weights,
            version,
            counts,
        )

    entries, futures = [], []
    with (
        ThreadPoolExecutor(max(1, min(jobs, len(buckets)))) as pool,
        progress_bar(len(buckets), "write blocks", unit="block", enabled=progress) as bar,
    ):
        try:
            with sigint_held():  # a Ctrl-C inside submit would leave a started thread that nobody waits for
                futures += [pool.submit(build, i) for i in range(len(buckets))]
            for future in futures:  # in block order
                entries.append(future.result())
                bar.update()
        finally:
            _finish(futures)
    return entries


def _finish(futures: list[Future]) -> None:
    """Cancel the blocks not begun and wait for those being written: after an error or Ctrl-C, no thread writes
    into the partial store while it is being removed."""
    for future in futures:
        future.cancel()
    wait(futures)


def _build_block(
    spill_path,
    records: list[Record],
    dtype,
    seed,
    out_path: Path,
    index: int,
    compression: str,
    store_id: str,
    compact: np.ndarray | None,
    weighted: bool,
    keep_weights: bool,
    version: int,
    counts: tuple[FeatureCounts, int] | None = None,
) -> dict:
    """Pass 2, one bucket: read it, permute its rows (when ``seed`` is given), number its columns
    compactly (when ``compact`` is given), write the block (with its weights if ``keep_weights``)."""
    block = read_bucket(spill_path, records, dtype, weighted)
    if not keep_weights:
        block.weights = None
    if seed is not None:
        block = permute_rows(block, np.random.default_rng(seed).permutation(block.n_rows))
    if compact is not None:
        block.indices = rank_in(compact, block.indices)
    if counts is not None:
        counts[0].add(block.indices, shift=counts[1])
    return write_block(out_path, block, index=index, compression=compression, store_id=store_id, version=version)
