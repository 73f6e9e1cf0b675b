"""The ``blocksvm`` command line: a thin face over the Python API.

Every user-facing failure is a :class:`~blocksvm.errors.BlocksvmError` printed as one line
(``blocksvm: error: ...``) with exit code 2; ``--debug`` shows the traceback instead.
Exit codes: 0 success, 1 a check failed (``info --verify``), 2 an error, 130 interrupted by
Ctrl-C (SIGINT), 143 stopped by SIGTERM (training saves its model and checkpoint first).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from blocksvm.errors import BlocksvmError, ParameterError, check_writable

EXIT_OK, EXIT_CHECK_FAILED, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143

COMMANDS: dict[str, Callable[[argparse.ArgumentParser], None]] = {}


def command(name: str, help: str):
    """Register ``add_arguments`` for a sub-command; the function sets ``run`` via set_defaults."""

    def register(add_arguments):
        COMMANDS[name] = (help, add_arguments)
        return add_arguments

    return register


def _zero_based(text: str):
    choices = {"auto": "auto", "yes": True, "true": True, "no": False, "false": False}
    if text.lower() not in choices:
        raise argparse.ArgumentTypeError("expected auto, yes or no")
    return choices[text.lower()]


def _print_json(obj) -> None:
    print(json.dumps(obj, indent=1, default=str))


def _report(args, summary) -> int:
    """A command's summary: JSON with ``--json``, text unless ``--quiet``."""
    if args.json:
        _print_json(summary.to_dict())
    elif not args.quiet:
        print(summary)
    return EXIT_OK


@command("convert", "convert a LIBSVM/svmlight file (.gz/.bz2/.xz too), or VW text, into a block store")
def _convert_args(p: argparse.ArgumentParser) -> None:
    from blocksvm.store.format import COMPRESSIONS, DEFAULT_COMPRESSION

    p.add_argument("input", help="LIBSVM text file (or VW text with --format vw)")
    p.add_argument("output", help="store directory to create")
    size = p.add_mutually_exclusive_group()
    size.add_argument(
        "--block-rows", "--block-size", type=int, metavar="ROWS", help="rows per block (--block-size: an older name)"
    )
    size.add_argument("--block-mb", type=float, metavar="MB", help="megabytes of in-memory CSR per block (default 64)")
    p.add_argument(
        "--shuffle",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="spread rows at random over blocks (default: on)",
    )
    p.add_argument("--seed", type=int, default=0, help="shuffle seed (default 0)")
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument(
        "--compression",
        default=DEFAULT_COMPRESSION,
        help=f"{', '.join(COMPRESSIONS)}; gzip-N/zstd-N set a level (default {DEFAULT_COMPRESSION})",
    )
    p.add_argument(
        "--zero-based",
        type=_zero_based,
        default="auto",
        metavar="auto|yes|no",
        help="feature indices start at 0 (default: auto-detect)",
    )
    p.add_argument("--n-features", type=int, help="feature count, if larger than the largest index")
    p.add_argument("--skip-bad-lines", action="store_true", help="skip and count malformed lines")
    p.add_argument("--overwrite", action="store_true", help="replace an existing store")
    p.add_argument(
        "--jobs",
        type=int,
        help="threads parsing the text, and threads compressing and writing blocks (default: as many as cores)",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument(
        "--csv",
        metavar="LABEL_COLUMN",
        help="the input is CSV with a header line: this column (name or 0-based position) is the label, the "
        "others the features in order, empty cells zero",
    )
    _add_text_format(p)
    p.add_argument(
        "--weights",
        metavar="FILE",
        help="instance weights, one a line for the rows in order (LIBLINEAR's weights fork, -W); >= 0",
    )
    p.add_argument(
        "--columns",
        action="store_true",
        help="also write the store's column layout (what L1 learners read; 'blocksvm columns' adds it later)",
    )
    p.set_defaults(run=_run_convert)


def _add_text_format(p: argparse.ArgumentParser) -> None:
    """``--format``, ``--hash-bits`` and ``--hash-all``: how text becomes columns (convert; predict, where they
    default to the model's and must be its)."""
    p.add_argument(
        "--format",
        dest="text_format",
        choices=["libsvm", "vw"],
        default=None,
        help="the text's format: LIBSVM's, or Vowpal Wabbit's (label [importance] |namespace name:value ...), its "
        "names hashed into 2^B columns (default: convert LIBSVM's, predict the model's)",
    )
    p.add_argument(
        "--hash-bits",
        type=int,
        metavar="B",
        help="VW names are hashed into 2^B columns, B in 1..30 (default 18, VW's -b): MurmurHash3 (x86, 32-bit) "
        "seeded with the namespace's hash, as VW hashes; names may collide",
    )
    p.add_argument(
        "--hash-all",
        action="store_true",
        default=None,
        help="hash VW names made of digits too (VW's --hash all); by default such a name is its integer plus the "
        "namespace's hash",
    )


def _run_convert(args) -> int:
    from blocksvm.io.convert import convert

    summary = convert(
        args.input,
        args.output,
        block_rows=args.block_rows,
        block_mb=args.block_mb,
        shuffle=args.shuffle,
        seed=args.seed,
        dtype=args.dtype,
        compression=args.compression,
        zero_based=args.zero_based,
        n_features=args.n_features,
        skip_bad_lines=args.skip_bad_lines,
        overwrite=args.overwrite,
        progress=None if not args.quiet else False,
        jobs=args.jobs,
        csv_label=args.csv,
        text_format=args.text_format or "libsvm",
        hash_bits=args.hash_bits,
        hash_all=bool(args.hash_all),
        weights=args.weights,
        columns=args.columns,
    )
    return _report(args, summary)


@command("columns", "write a store's column layout (its entries by feature: what L1 learners read)")
def _columns_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", help="store directory (its column layout is written, or written again, inside it)")
    p.add_argument(
        "--block-mb", type=float, metavar="MB", help="megabytes of entries per column block (default: the store's)"
    )
    p.add_argument("--jobs", type=int, help="threads sorting, compressing and writing blocks (default: one a core)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(run=_run_columns)


def _run_columns(args) -> int:
    from blocksvm.io.text_cache import say_to_stderr
    from blocksvm.store.columns import write_columns

    say = None if args.quiet else say_to_stderr
    summary = write_columns(
        args.store, block_mb=args.block_mb, jobs=args.jobs, progress=None if not args.quiet else False, say=say
    )
    return _report(args, summary)


@command("info", "print a block store's metadata and block sizes, or a model's problem and nonzero weights")
def _info_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", help="store directory, or a model file (blocksvm's or LIBLINEAR's)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--verify", action="store_true", help="read every block and check checksums and invariants")
    p.set_defaults(run=_run_info)


def _run_info(args) -> int:
    from blocksvm.store.reader import BlockStore

    if _is_model_file(Path(args.store)):
        return _run_model_info(args)
    store = BlockStore(args.store)
    info = store.info()
    info["columns"] = _columns_info(store)
    problems = store.verify() if args.verify else []
    if args.verify:
        info["verify"] = {"ok": not problems, "problems": problems}
    if args.json:
        _print_json(info)
    else:
        _print_info(info)
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


def _is_model_file(path: Path) -> bool:
    """A file blocksvm's models are saved in (HDF5) or LIBLINEAR's model text (it begins with its solver_type);
    anything else is left to the store's reader and its message."""
    import h5py

    if not path.is_file():
        return False
    with open(path, "rb") as f:
        return f.read(len(b"solver_type")) == b"solver_type" or h5py.is_hdf5(path)


def _run_model_info(args) -> int:
    from blocksvm.model import LinearModel

    if args.verify:
        raise ParameterError(f"--verify checks a block store's blocks; {args.store} is a model file")
    info = {"model": str(args.store), **LinearModel.load(args.store).info()}
    if args.json:
        _print_json(info)
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
        print(f"objective    {info['objective']:.10g} after training ({info['stop_reason']})")
    return EXIT_OK


def _print_info(info: dict) -> None:
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
    _print_columns(info.get("columns"), info)
    for b, size in enumerate(info["block_sizes"]):
        print(f"  block {b:5d}  {size['rows']:>10,} rows  {size['nnz']:>13,} nnz  {size['bytes'] / 1e6:9.1f} MB")
    if "verify" in info:
        verdict = "ok" if info["verify"]["ok"] else "FAILED"
        print(f"verify       {verdict}")
        for problem in info["verify"]["problems"]:
            print(f"  - {problem}")


def _print_columns(columns: dict | None, info: dict) -> None:
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


@command("generate", "write a synthetic webspam-like data set (LIBSVM text or a store)")
def _generate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("output", help="file (.txt, .gz, .bz2, .xz) or, with --store, a store directory")
    p.add_argument("--rows", type=int, required=True)
    p.add_argument("--features", type=int, required=True)
    p.add_argument("--nnz", type=int, default=50, help="mean entries per row (default 50)")
    p.add_argument("--noise", type=float, default=0.05, help="label flip probability (default 0.05)")
    p.add_argument("--classes", type=int, default=2, help="number of classes (default 2: labels -1/+1)")
    p.add_argument("--dense", action="store_true", help="every feature present")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--store", action="store_true", help="write a block store directly")
    p.add_argument(
        "--block-rows",
        "--block-size",
        type=int,
        default=100_000,
        metavar="ROWS",
        help="rows per block with --store (default 100000; --block-size: an older name)",
    )
    p.add_argument("--overwrite", action="store_true")
    p.set_defaults(run=_run_generate)


def _run_generate(args) -> int:
    from blocksvm.datasets import SyntheticSpec, make_store, write_libsvm

    spec = SyntheticSpec(
        rows=args.rows,
        features=args.features,
        nnz=args.nnz,
        noise=args.noise,
        seed=args.seed,
        dense=args.dense,
        classes=args.classes,
    )
    progress = None if not args.quiet else False
    if args.store:
        if args.block_rows < 1:  # make_store does not check it (0 divides by zero, < 0 writes no block)
            raise ParameterError(f"--block-rows must be a positive number of rows, not {args.block_rows}")
        make_store(args.output, spec, block_rows=args.block_rows, overwrite=args.overwrite, progress=progress)
    else:
        check_writable(args.output, "the data")
        try:
            write_libsvm(args.output, spec, progress=progress)
        except OSError as exc:  # a failed write names no file
            raise BlocksvmError(f"cannot write the data {args.output}: {exc.strerror or exc}") from None
    if not args.quiet:
        print(f"wrote {args.output}: {args.rows:,} rows, {args.features:,} features")
    return EXIT_OK


def liblinear_weight_options(argv: list[str]) -> list[str]:
    """``argv`` with the flags whose values argparse cannot read joined to them: LIBLINEAR's ``-wLABEL WEIGHT``
    (``-w1 5``, ``-w-1 0.5``) written as ``--class-weight=LABEL=WEIGHT`` (an option whose name carries a value),
    and ``--classes -1,1`` as ``--classes=-1,1`` (a value that looks like an option).

    Only after the ``train``, ``stream`` or ``tune`` command and before ``--``; everything else is returned as it was.
    """
    argv = list(argv)
    command = next((i for i, token in enumerate(argv) if not token.startswith("-")), None)
    if command is None or argv[command] not in ("train", "stream", "tune"):
        return argv
    out = argv[: command + 1]
    i = command + 1
    while i < len(argv):
        token = argv[i]
        if token == "--":
            return out + argv[i:]
        if token.startswith("-w") and _is_number(token[2:]) and i + 1 < len(argv) and _is_number(argv[i + 1]):
            out.append(f"--class-weight={token[2:]}={argv[i + 1]}")  # one token: the label may be negative
            i += 2
            continue
        if token == "--classes" and i + 1 < len(argv):
            out.append(f"--classes={argv[i + 1]}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@command("train", "train a linear classifier on a block store (or a LIBSVM file) by block minimization")
def _train_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "store",
        help="training store (from 'blocksvm convert'), or a LIBSVM file (.gz/.bz2/.xz too), "
        "converted once into a cached store beside it",
    )
    p.add_argument("model", help="model file to write")
    _add_declared(p, "train")
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="train on this dask.distributed cluster (e.g. "
        "tcp://host:8786) by CoCoA+ rounds, --workers shards (default: one per worker); the workers read "
        "the store at the same path (docs/PARALLEL.md)",
    )
    p.add_argument("--json", action="store_true", help="print the training summary as JSON")
    p.set_defaults(run=_run_train)


def _add_declared(p: argparse.ArgumentParser, command: str) -> None:
    """The flags of every declared parameter and run option: those ``command`` reads shown with its defaults,
    the others parsed but hidden, to be refused with a message that says why."""
    from blocksvm.train.params import PARAMS, RUN, for_command

    read = {param.name: param for param in (*for_command(command), *for_command(command, run_options=True))}
    for param in (*PARAMS.values(), *RUN.values()):
        read.get(param.name, param).add_to(p, command)


def _settle(args, command: str):
    """``(TrainParams, RunOptions)`` of ``command`` from the flags given (the one shared check)."""
    from blocksvm.train.params import settle

    return settle(command, None, _flags_given(args), cli=True)


def _flags_given(args) -> dict:
    """The declared parameters, run options and tune options given as flags (a repeated flag's values folded)."""
    from blocksvm.train.params import PARAMS, RUN, TUNE

    declared = {**PARAMS, **RUN, **TUNE}
    given = {name: getattr(args, name) for name in declared if hasattr(args, name)}
    for name, value in list(given.items()):
        if declared[name].many:
            given[name] = declared[name].many(value)
    for name, param in declared.items():  # an alias sets its parameter, or several (-s CODE: loss, penalty, solver)
        for alias in getattr(param, "aliases", ()):
            if hasattr(args, alias.dest):
                value = getattr(args, alias.dest)
                values = value if isinstance(value, dict) else {name: value}
                given |= {key: v for key, v in values.items() if key not in given}  # flags given explicitly win
    return given


def _run_train(args) -> int:
    from blocksvm.checkpoint import writing
    from blocksvm.train import train
    from blocksvm.train.engines import check_solver, connect

    params, run = _settle(args, "train")
    history = run.history_path or f"{args.model}.history.jsonl"
    outputs = {"the model": args.model, "the history": history, "the checkpoint": run.checkpoint or run.resume}
    for what, path in outputs.items():  # before training, not after hours of it
        if path:
            check_writable(path, what)
    if args.scheduler:
        check_solver(params.solver)  # before connecting
    with writing({"the model": args.model, "the history": history}):  # one run per output, until its model is written
        with contextlib.ExitStack() as stack:
            client = stack.enter_context(connect(args.scheduler)) if args.scheduler else None
            result = train(
                args.store,
                params,
                verbose=0 if args.quiet else 2 if args.verbose else 1,
                progress=None if not args.quiet else False,
                client=client,
                **{**_given(run, "train"), "history_path": history},
            )
        path = result.model.save(args.model)
    if args.json:
        _print_json({"model": str(path), "history": history, **result.model.summary})
    elif not args.quiet:
        print(f"model written to {path}; history in {history}", file=sys.stderr)
    if result.interrupted and result.stop_reason.startswith("stopped by"):
        where = run.checkpoint or run.resume
        if where and not args.quiet:
            print(f"checkpoint in {where}: continue with --resume {where}", file=sys.stderr)
        return EXIT_TERMINATED if "SIGTERM" in result.stop_reason else EXIT_INTERRUPTED
    return EXIT_OK


@command("tune", "choose C by K-fold cross-validation, every fold sharing each block read (LIBLINEAR's -C)")
def _tune_args(p: argparse.ArgumentParser) -> None:
    from blocksvm.params import TUNE_OPTIONS
    from blocksvm.train.params import PARAMS, RUN, tune_reads

    p.add_argument("store", help="training store, or a LIBSVM file (converted once into a cached store, as for train)")
    read = {param.name: param for param in tune_reads()}
    for param in (*PARAMS.values(), *RUN.values()):  # those tune does not read parsed but hidden, refused in one line
        read.get(param.name, param).add_to(p, "tune")
    for param in TUNE_OPTIONS:
        param.add_to(p, "tune")
    p.add_argument("--json", action="store_true", help="print the search as JSON")
    p.add_argument("--plot", metavar="PNG", help="draw the CV score against log2 C and the folds' spread (matplotlib)")
    p.set_defaults(run=_run_tune)


def _run_tune(args) -> int:
    from blocksvm.train.params import settle_tune
    from blocksvm.train.tune import tune

    params, run, options = settle_tune(None, _flags_given(args), cli=True)
    checkpoint = run.checkpoint or run.resume
    for path, what in ((options["refit"], "the model"), (args.plot, "the plot"), (checkpoint, "the checkpoint")):
        if path:
            check_writable(path, what)
    result = tune(
        args.store,
        params,
        verbose=0 if args.quiet or args.json else 2 if args.verbose else 1,
        progress=None if not args.quiet else False,
        **_given(run, "tune"),
        **options,
    )
    if result.interrupted:
        reason = result.model.summary["stop_reason"] if result.model else result.stop_reason
        if args.quiet:
            pass
        elif result.model:  # the search finished, its refit was cut
            again = f"tune again with --resume {checkpoint}" if checkpoint else f"train {args.store} at that C"
            print(
                f"the refit at C = {result.best_C:g} {reason}: the model written to {options['refit']} is not "
                f"finished; {again} for the finished one",
                file=sys.stderr,
            )
        elif checkpoint:
            print(f"checkpoint in {checkpoint}: continue with --resume {checkpoint}", file=sys.stderr)
        return EXIT_TERMINATED if "SIGTERM" in reason else EXIT_INTERRUPTED
    if args.plot:
        from blocksvm.plot import plot_cv

        plot_cv(result, args.plot)
    if args.json:
        _print_json(result.to_dict() | ({"model": str(options["refit"])} if options["refit"] else {}))
    elif not args.quiet:
        print(result.table())
        if options["refit"]:
            print(f"model at C = {result.best_C:g} written to {options['refit']}", file=sys.stderr)
    return EXIT_OK


@command("stream", "one pass of an online learner straight from LIBSVM text (or - for standard input)")
def _stream_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="LIBSVM text file (.gz, .bz2, .xz too), or - for standard input")
    p.add_argument("model", help="model file to write")
    _add_declared(p, "stream")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(run=_run_stream)


def _run_stream(args) -> int:
    from blocksvm.checkpoint import writing
    from blocksvm.stream import stream

    params, run = _settle(args, "stream")
    check_writable(args.model, "the model")
    with writing({"the model": args.model}):  # one run per output, until its model is written
        result = stream(args.input, params, verbose=0 if args.quiet or args.json else 1, **_given(run, "stream"))
        if result.model is None:
            print(
                f"no model written: stopped by {result.stopped_by} before the stream showed two classes",
                file=sys.stderr,
            )
        else:
            _stream_summary(args, result)
    if result.stopped_by:
        where = run.checkpoint or run.resume
        if where:
            print(f"checkpoint in {where}: continue with --resume {where}", file=sys.stderr)
        return EXIT_TERMINATED if result.stopped_by == "SIGTERM" else EXIT_INTERRUPTED
    return EXIT_OK


def _stream_summary(args, result) -> None:
    path = result.model.save(args.model)
    if args.json:
        _print_json({"model": str(path), **result.summary})
    elif not args.quiet:
        s = result.summary
        weight = f" of weight {s['weight']:g}" if "weight" in s else ""  # (VW's importance weights: the means' weights)
        print(
            f"{s['examples']} examples{weight} in {s['seconds']:.2f} s ({s['mb_per_s']} MB/s): progressive accuracy "
            f"{100 * s['progressive_accuracy']:.2f}%, progressive {'log ' * ('progressive_log_loss' in s)}loss "
            f"{s['progressive_loss']:.4f}, "
            f"{s['nonzero_weights']} nonzero weights; model written to {path}",
            file=sys.stderr,
        )


def _given(run, command: str) -> dict:
    """The run options that ``command`` reads, as keyword arguments."""
    from blocksvm.train.params import RUN

    return {name: value for name, value in run.to_dict().items() if command in RUN[name].commands}


@command("predict", "predict a store or a LIBSVM file with a model (blocksvm or LIBLINEAR)")
def _predict_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="model file (blocksvm or LIBLINEAR text)")
    p.add_argument("input", help="block store or LIBSVM text file")
    p.add_argument(
        "output_file",
        nargs="?",
        metavar="output",
        help="file for one prediction per row, as --output; LIBLINEAR's order (predict INPUT MODEL OUTPUT) works too",
    )
    p.add_argument("--output", "-o", help="file for one prediction per row, in source order")
    p.add_argument("--decision-values", action="store_true", help="also write decision values")
    p.add_argument(
        "--probability",
        "-b",
        nargs="?",
        const=1,
        default=0,
        type=int,
        choices=[0, 1],
        help="write each class's probability after the label, under a 'labels' line (LIBLINEAR's -b 1; logistic "
        "regression models)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="refuse features outside the model's feature space (default: ignore them, with a warning)",
    )
    _add_text_format(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(run=_run_predict)


def _run_predict(args) -> int:
    import warnings

    from blocksvm.predict import FeatureSpaceWarning, predict

    _liblinear_predict_order(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FeatureSpaceWarning)
        summary = predict(
            args.model,
            args.input,
            args.output,
            decision_values=args.decision_values,
            probability=bool(args.probability),
            progress=None if not args.quiet else False,
            strict=args.strict,
            text_format=args.text_format,
            hash_bits=args.hash_bits,
            hash_all=args.hash_all,
        )
    for warning in caught:  # features outside the model's: one line; other warnings as Python shows them
        if issubclass(warning.category, FeatureSpaceWarning):
            if not args.quiet:
                print(f"warning: {warning.message}", file=sys.stderr)
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
    return _report(args, summary)


def _liblinear_predict_order(args) -> None:
    """LIBLINEAR's ``predict test_file model_file output_file``: the data first when the second file is the model,
    the output as a third word."""
    if args.output_file:
        if args.output:
            raise ParameterError("give the output file once: as the third word or as --output, not both")
        args.output = args.output_file
    if not _is_model_file(args.model) and _is_model_file(args.input):
        args.model, args.input = args.input, args.model


def _is_model_file(path: str) -> bool:
    """A blocksvm model (HDF5) or a LIBLINEAR model (text starting ``solver_type``)."""
    try:
        with open(path, "rb") as f:
            head = f.read(11)
    except OSError:
        return False
    return head.startswith(b"\x89HDF\r\n\x1a\n") or head == b"solver_type"


@command("export", "write a model in another format (LIBLINEAR's model text)")
def _export_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="blocksvm model file")
    p.add_argument("output", help="file to write")
    p.add_argument("--format", choices=["liblinear"], default="liblinear")
    p.set_defaults(run=_run_export)


def _run_export(args) -> int:
    from blocksvm.liblinear_format import write_liblinear_model
    from blocksvm.model import LinearModel

    model = LinearModel.load(args.model)
    path = write_liblinear_model(model, args.output)
    if not args.quiet:
        dense = ""
        if model.feature_map is not None:
            dense = f", dense: {model.n_features:,} features used of {model.space_features:,}"
        print(f"wrote {path} (LIBLINEAR model format, {path.stat().st_size / 1e6:,.1f} MB{dense})")
    return EXIT_OK


@command("plot", "draw a training history (objective, gap, accuracy) to a PNG")
def _plot_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("history", help="JSON-lines history written by 'blocksvm train'")
    p.add_argument("--output", "-o", help="PNG file (default HISTORY.png)")
    p.add_argument("--title")
    p.set_defaults(run=_run_plot)


def _run_plot(args) -> int:
    from blocksvm.plot import plot_history

    path = plot_history(args.history, args.output or f"{args.history}.png", title=args.title)
    if not args.quiet:
        print(f"wrote {path}")
    return EXIT_OK


@command("demo", "generate data larger than the memory budget, convert, train, predict")
def _demo_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rows", type=int, default=600_000, help="training rows (default 600000)")
    p.add_argument("--test-rows", type=int, default=100_000)
    p.add_argument("--features", type=int, default=20_000)
    p.add_argument("--nnz", type=int, default=40, help="mean nonzeros a row (default 40)")
    p.add_argument("--workdir", help="keep the files here (default: a temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the temporary files")
    p.add_argument("--json", action="store_true", help="print the figures as JSON at the end")
    p.set_defaults(run=_run_demo)


def _run_demo(args) -> int:
    import io

    from blocksvm.demo import run_demo

    out = io.StringIO() if args.quiet else sys.stdout
    figures = run_demo(
        rows=args.rows,
        test_rows=args.test_rows,
        features=args.features,
        nnz=args.nnz,
        workdir=args.workdir,
        keep=args.keep,
        out=out,
    )
    if args.json:
        _print_json(figures)
    return EXIT_OK


class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors in the one-line form of every other error."""

    def error(self, message: str):
        self.exit(EXIT_ERROR, f"blocksvm: error: {message} (see '{self.prog} --help')\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``blocksvm`` parser; with ``only``, the options of that command alone (the others keep their name
    and help line), so that ``blocksvm --version`` or ``convert`` does not import what ``train`` needs."""
    from blocksvm._version import __version__

    parser = _Parser(
        prog="blocksvm",
        description="Linear SVMs on data larger than memory (block minimization over HDF5 blocks).",
    )
    parser.add_argument("--version", action="version", version=f"blocksvm {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    common.add_argument("-v", "--verbose", action="store_true", help="print more detail")
    common.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (help_text, add_arguments) in COMMANDS.items():
        command_parser = sub.add_parser(name, help=help_text, description=help_text, parents=[common])
        if only is None or only == name:
            add_arguments(command_parser)
    return parser


def _command_of(argv: list[str]) -> str:
    """The command ``argv`` names: its first word that is not an option ("" if none)."""
    return next((token for token in argv if not token.startswith("-")), "")


def _parse(argv: list[str]) -> argparse.Namespace:
    """The arguments of ``argv``; an argument the command does not know is an error that points at the
    command's ``--help``."""
    command = _command_of(argv)
    parser = build_parser(command)
    commands = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    folds = _liblinear_folds(argv) if command == "train" else None
    if folds:
        commands.choices[command].error(
            f"-v {folds} is LIBLINEAR's {folds}-fold cross-validation, -v alone --verbose here: cross-validate with "
            f"'blocksvm tune STORE --folds {folds}' (--C-grid C for one C; docs/TUNE.md)"
        )
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        commands.choices[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def _liblinear_folds(argv: list[str]) -> str | None:
    """K of LIBLINEAR's ``-v K`` in ``argv`` (before ``--``), or None."""
    argv = argv[: argv.index("--")] if "--" in argv else argv
    return next((k for flag, k in zip(argv, argv[1:]) if flag == "-v" and k.isdigit()), None)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``blocksvm`` command; returns the exit code.

    Ctrl-C at any moment, imports included, ends with one line and exit code 130 (never inside numba's
    glue code: :mod:`blocksvm._interrupt`).
    """
    from blocksvm._interrupt import sigint_handled

    as_command, argv = argv is None, liblinear_weight_options(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    with sigint_handled(), _quiet_when_read_no_more():
        try:
            if not argv:
                build_parser("").print_help()
                return EXIT_ERROR
            code = _run(_parse(argv))
        except KeyboardInterrupt:
            if debug:
                raise
            code = _interrupted()
    if as_command:
        _exit_past_stalled_reads(code)
    return code


def _exit_past_stalled_reads(code: int) -> None:
    """End the command now if a block's read it gave up on still runs (a stalled disk): the interpreter would wait for
    its thread at exit, for ever. Its outputs are written and closed by now."""
    reader = sys.modules.get("blocksvm.store.readahead")  # (a command that read no store imported none)
    if reader is not None and reader.reads_still_running():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class _QuietWhenClosed:
    """A text stream that goes quiet when its reader has gone (``blocksvm train ... 2>&1 | head -2``): the run
    goes on and writes its model and history as if nothing was printed; its printing is not the run."""

    def __init__(self, stream):
        self.stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                return self.stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._gone()

    def _gone(self) -> None:
        self.reader_gone = True
        with contextlib.suppress(OSError, ValueError):  # the interpreter's last flush must not meet the pipe
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.stream.fileno())

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


@contextlib.contextmanager
def _quiet_when_read_no_more():
    """Standard output and error as :class:`_QuietWhenClosed` streams for the block."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _QuietWhenClosed(sys.stdout), _QuietWhenClosed(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def _interrupted() -> int:
    print("blocksvm: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _run(args: argparse.Namespace) -> int:
    """Run the command; a user error is one line (the traceback with ``--debug``)."""
    from blocksvm._interrupt import StoppedWhileWaiting

    try:
        return args.run(args)
    except StoppedWhileWaiting as exc:  # a stop while a block was awaited, outside a pass (an evaluation, a round)
        if args.debug:
            raise
        print(f"blocksvm: {exc}; the last checkpoint is kept", file=sys.stderr)
        return EXIT_TERMINATED if exc.signal_name == "SIGTERM" else EXIT_INTERRUPTED
    except BlocksvmError as exc:
        if args.debug:
            raise
        print(f"blocksvm: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        if args.debug:
            raise
        print(f"blocksvm: error: {_os_error_text(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except MemoryError:
        if args.debug:
            raise
        print(
            "blocksvm: error: out of memory (smaller blocks need less: convert with a smaller --block-mb)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    except Exception as exc:  # a bug: one line, and the traceback with --debug
        if args.debug:
            raise
        if _caused_by_interrupt(exc):  # a C extension that wrapped a KeyboardInterrupt
            return _interrupted()
        print(
            f"blocksvm: error: unexpected {type(exc).__name__}: {exc} (a bug in blocksvm: run again with "
            "--debug and report the traceback)",
            file=sys.stderr,
        )
        return EXIT_ERROR


def _caused_by_interrupt(exc: BaseException) -> bool:
    """True if a KeyboardInterrupt is among the causes or contexts of ``exc``."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _os_error_text(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


if __name__ == "__main__":
    sys.exit(main())
