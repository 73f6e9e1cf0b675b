"""The commands on data: ``convert`` (text to a store), ``info`` (a store's or a model's description) and
``generate`` (a synthetic data set)."""

from __future__ import annotations

from functools import cache

from blocksvm._page_cache import read_soon
from blocksvm.cli.options import EXIT_CHECK_FAILED, EXIT_OK, Positional, command, option, print_json
from blocksvm.errors import BlocksvmError, ParameterError, check_writable


@cache
def _convert_options() -> tuple:
    from blocksvm.run_options import RUN_OPTIONS
    from blocksvm.store.format import COMPRESSIONS, DEFAULT_COMPRESSION

    text = {p.name: p for p in RUN_OPTIONS if "convert" in p.commands}  # shared with stream and predict
    store = "store"
    return (
        text["text_format"],
        text["hash_bits"],
        text["hash_all"],
        text["zero_based"],
        option(
            "csv_label",
            "The input is CSV with a header line: this column (its name or 0-based position) is the label, the others "
            "the features in order, empty cells zero",
            flags=("--csv",),
            metavar="LABEL_COLUMN",
            group="data",
        ),
        option(
            "weights",
            "Instance weights, one a line for the rows in order (LIBLINEAR's weights fork, -W); >= 0",
            metavar="FILE",
            group="data",
        ),
        option("n_features", "The feature count, if larger than the largest index (a test file's)", int, group="data"),
        text["skip_bad_lines"],
        option(
            "block_mb",
            "Megabytes of in-memory CSR a block (default 64): training holds about two blocks and its cache",
            float,
            metavar="MB",
            group=store,
        ),
        option(
            "block_rows",
            "Rows a block, instead of --block-mb (--block-size: an older name)",
            int,
            flags=("--block-rows", "--block-size"),
            metavar="ROWS",
            group=store,
        ),
        option("shuffle", "Spread rows at random over blocks and within each", bool, default=True, group=store),
        option("seed", "Seed of the shuffle: the same seed and text give the same store", int, default=0, group=store),
        option("dtype", "Type of the stored values", choices=("float32", "float64"), default="float32", group=store),
        option(
            "compression",
            f"{', '.join(COMPRESSIONS)}; gzip-N and zstd-N set a level (docs/FORMAT.md)",
            default=DEFAULT_COMPRESSION,
            metavar="CODEC",
            group=store,
        ),
        option(
            "jobs",
            "Threads parsing the text, and threads compressing and writing blocks (default: as many as cores); the "
            "store is the same, byte for byte",
            int,
            metavar="J",
            group="parallel",
        ),
        option(
            "columns",
            "Also write the store's column layout (what L1 learners read; 'blocksvm columns' adds it later)",
            bool,
            group=store,
        ),
        option("overwrite", "Replace an existing store", bool, group=store),
    )


@command(
    "convert",
    "convert LIBSVM/svmlight text (.gz/.bz2/.xz too), VW text or CSV into a block store",
    positionals=(
        Positional("input", "the text file: LIBSVM's (or VW's with --format vw, CSV with --csv)"),
        Positional("output", "the store directory to create"),
    ),
    options=_convert_options,
    json="print the summary as JSON",
)
def convert_command(out, input: str, output: str, **options) -> int:
    read_soon(input)  # the disk reads while numba starts
    from blocksvm.io.conversion import convert

    return out.report(convert(input, output, progress=out.progress, **options))


@command(
    "columns",
    "write a store's column layout (its entries by feature: what L1 learners read)",
    positionals=(
        Positional("store", "the store directory (its column layout is written, or written again, inside it)"),
    ),
    options=lambda: (
        option("block_mb", "Megabytes of entries a column block (default: the store's)", float, metavar="MB"),
        option("jobs", "Threads sorting, compressing and writing blocks (default: one a core)", int, metavar="J"),
    ),
    json="print the summary as JSON",
)
def columns_command(out, store: str, **options) -> int:
    from blocksvm.io.text_cache import say_to_stderr
    from blocksvm.store.columns import write_columns

    say = None if out.quiet else say_to_stderr
    return out.report(write_columns(store, progress=out.progress, say=say, **options))


@command(
    "info",
    "describe a block store (metadata, blocks) or a model file (problem, classes, nonzero weights)",
    positionals=(Positional("path", "a store directory, or a model file (blocksvm's or LIBLINEAR's)"),),
    options=lambda: (option("verify", "A store: read every block and check its checksums and invariants", bool),),
    json="print one JSON object",
)
def info_command(out, path: str, verify: bool = False) -> int:
    from blocksvm.store.reader import BlockStore

    if is_model_file(path):
        if verify:
            raise ParameterError(f"--verify checks a block store's blocks; {path} is a model file")
        return _model_info(out, path)
    store = BlockStore(path)
    info = store.info()
    info["columns"] = _columns_info(store)
    problems = store.verify() if verify else []
    if verify:
        info["verify"] = {"ok": not problems, "problems": problems}
    if out.json:
        print_json(info)
    else:
        print_info(info)
    return EXIT_CHECK_FAILED if problems else EXIT_OK


def _columns_info(store) -> dict | None:
    """The store's column layout described (None: it has none; a layout that does not open: its problem)."""
    from blocksvm.errors import StoreError

    if "columns" not in store.manifest:
        return None
    try:
        return store.columns.info()
    except StoreError as exc:
        return {"problem": str(exc)}


def is_model_file(path) -> bool:
    """A blocksvm model (HDF5) or a LIBLINEAR model (text starting ``solver_type``); anything else is left to the
    store's reader and its message."""
    try:
        with open(path, "rb") as f:
            head = f.read(11)
    except OSError:
        return False
    return head.startswith(b"\x89HDF\r\n\x1a\n") or head == b"solver_type"


def _model_info(out, path: str) -> int:
    from blocksvm.model import LinearModel
    from blocksvm.train.records import liblinear_objective

    model = LinearModel.load(path)
    info = {"model": str(path), **model.info(), "liblinear_objective": liblinear_objective(model.summary)}
    if out.json:
        print_json(info)
        return EXIT_OK
    solver = f" ({info['solver']})" if info["solver"] else ""
    problem = f"{info['penalty']} {info['loss'] or 'loss unknown'}{solver}"
    classes = ", ".join(f"{c:g}" for c in info["classes"]) or "none (regression)"
    stored = f", {info['stored_columns']:,} stored (sparse: its nonzero columns)" if info["sparse"] else ""
    print(f"model        {info['model']}")
    print(f"problem      {problem}")
    print(f"classes      {classes}; {info['problems']} weight vector(s)")
    print(f"features     {info['features']:,}{stored}")
    print(f"nonzero      {info['nonzero_weights']:,} weights (the bias's aside)")
    print(f"bias         {info['bias']:g}")
    if info["objective"] is not None:
        objective, primal = info["liblinear_objective"], info["objective"]
        also = "" if objective == primal else f" (LIBLINEAR's, its dual's value; the primal {primal:.10g})"
        print(f"objective    {objective:.10g}{also} after training ({info['stop_reason']})")
    return EXIT_OK


def print_info(info: dict) -> None:
    labels = ", ".join(f"{k}: {v:,}" for k, v in info["labels"].items())
    params = info["params"]
    print(f"store        {info['path']} (format version {info['format_version']}, created {info['created']})")
    print(f"rows         {info['rows']:,}")
    print(f"features     {info['features']:,} (indices in the source are {info['index_base']}-based)")
    if info["features_used"] is not None:
        print(f"used         {info['features_used']:,} of them, stored compactly with a feature map")
    if info.get("text") is not None:
        from blocksvm.io.vw import describe

        print(f"text         {describe(info['text'])}")
    print(f"nnz          {info['nnz']:,}")
    print(f"labels       {labels}")
    if info.get("weights") is not None:
        w = info["weights"]
        print(
            f"weights      instance weights (weighted store) from {w['min']:g} to {w['max']:g}, sum {w['sum']:,.6g}, "
            f"{w['zero_rows']:,} rows weigh 0"
        )
    print(
        f"values       {info['dtype']}, compression {params['compression']}, "
        f"{info['bytes_on_disk'] / 1e6:,.1f} MB on disk"
    )
    print(f"blocks       {info['blocks']} (shuffled: {params['shuffle']}, seed {params['seed']})")
    if info.get("skipped_lines"):
        print(f"skipped      {info['skipped_lines']:,} malformed lines")
    _print_columns(info.get("columns"))
    for b, size in enumerate(info["block_sizes"]):
        print(f"  block {b:5d}  {size['rows']:>10,} rows  {size['nnz']:>13,} nnz  {size['bytes'] / 1e6:9.1f} MB")
    if "verify" in info:
        verdict = "ok" if info["verify"]["ok"] else "FAILED"
        print(f"verify       {verdict}")
        for problem in info["verify"]["problems"]:
            print(f"  - {problem}")


def _print_columns(columns: dict | None) -> None:
    if columns is None:
        print("columns      none (L1 learners write them on first use; 'blocksvm columns STORE' writes them now)")
    elif "problem" in columns:
        print(f"columns      cannot be read: {columns['problem']}")
    else:
        print(
            f"columns      {columns['blocks']} blocks by feature, {columns['stored_features']:,} of "
            f"{columns['features']:,} features stored (nonempty), {columns['bytes_on_disk'] / 1e6:,.1f} MB on disk "
            f"(block_mb {columns['block_mb']:g})"
        )


def _generate_options() -> tuple:
    return (
        option("rows", "Rows to write (required)", int, metavar="N"),
        option("features", "Width of the feature space (required)", int, metavar="N"),
        option("nnz", "Mean entries a row", int, default=50, metavar="N"),
        option("noise", "Probability that a label is flipped, in [0, 0.5)", float, default=0.05, metavar="P"),
        option("classes", "Classes: 2 gives labels -1/+1, K > 2 labels 1..K", int, default=2, metavar="K"),
        option("dense", "Every feature present in every row", bool),
        option("seed", "Seed of the rows and labels: the same seed, the same data", int, default=0),
        option("store", "Write a block store directly instead of text", bool),
        option(
            "block_rows",
            "Rows a block, with --store (--block-size: an older name)",
            int,
            default=100_000,
            flags=("--block-rows", "--block-size"),
            metavar="ROWS",
        ),
        option("overwrite", "Replace an existing store (with --store)", bool),
    )


@command(
    "generate",
    "write a synthetic webspam-like data set, as LIBSVM text or a store",
    positionals=(Positional("output", "a file (.txt, .gz, .bz2, .xz) or, with --store, a store directory"),),
    options=_generate_options,
)
def generate_command(
    out,
    output: str,
    rows: int | None = None,
    features: int | None = None,
    store: bool = False,
    block_rows: int = 100_000,
    overwrite: bool = False,
    **spec,
) -> int:
    from blocksvm.datasets import SyntheticSpec, make_store, write_libsvm

    if rows is None or features is None:
        raise ParameterError("generate needs --rows and --features")
    spec = SyntheticSpec(rows=rows, features=features, **spec)
    if store:
        if block_rows < 1:  # make_store does not check it (0 divides by zero, < 0 writes no block)
            raise ParameterError(f"--block-rows must be a positive number of rows, not {block_rows}")
        make_store(output, spec, block_rows=block_rows, overwrite=overwrite, progress=out.progress)
    else:
        check_writable(output, "the data")
        try:
            write_libsvm(output, spec, progress=out.progress)
        except OSError as exc:  # a failed write names no file
            raise BlocksvmError(f"cannot write the data {output}: {exc.strerror or exc}") from None
    out.tell(f"wrote {output}: {rows:,} rows, {features:,} features")
    return EXIT_OK
