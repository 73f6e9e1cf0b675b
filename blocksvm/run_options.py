"""How a run is driven and where it writes (:data:`RUN_OPTIONS`), and the options of ``blocksvm tune``
(:data:`TUNE_OPTIONS`): declared as the training parameters are (:class:`~blocksvm.params.Param`), each with the
commands that read it. A checkpoint does not compare them; docs/PARAMETERS.md lists them in their own tables."""

from __future__ import annotations

import math

from blocksvm.params import Param, boolean, count, data_source, natural, path, positive


def _path_option(name: str, help: str, metavar: str, commands: tuple[str, ...], **more) -> Param:
    """A run option whose value is a path (None: not used)."""
    kind = {"check": path, "expects": "a path or None", "none_ok": True, "parse": str}
    return Param(name, None, help, metavar=metavar, commands=commands, **kind, **more)


# How a run is driven and where it writes: not training parameters (a checkpoint does not compare them).
RUN_OPTIONS: tuple[Param, ...] = (
    Param(
        "validation",
        None,
        "A store (or LIBSVM file) whose accuracy is recorded after every pass.",
        data_source,
        "a path, a BlockStore or None",
        none_ok=True,
        parse=str,
        metavar="STORE",
        commands=("train",),
        group="data",
    ),
    _path_option(
        "history_path",
        "The JSON-lines history, one record per pass (command line: MODEL.history.jsonl by default).",
        "PATH",
        ("train",),
        flags=("--history",),
        group="output",
    ),
    _path_option(
        "cache_dir",
        "Folder of the cached stores of LIBSVM text inputs (default: $BLOCKSVM_CACHE_DIR, else the user's cache "
        "folder, $XDG_CACHE_HOME/blocksvm or ~/.cache/blocksvm).",
        "DIR",
        ("train", "tune"),
        group="data",
    ),
    _path_option(
        "checkpoint",
        "Write checkpoints here: after every pass, every --checkpoint-every blocks and --checkpoint-seconds, and when "
        "the run stops. Defaults to --resume.",
        "PATH",
        ("train", "stream", "tune"),
        command_help=(
            (
                "stream",
                "Write checkpoints here: every --checkpoint-every chunks of text and when the stream stops, so that "
                "--resume continues it (a file, not standard input). Defaults to --resume.",
            ),
        ),
        group="checkpoint",
    ),
    Param(
        "checkpoint_every",
        0,
        "Also checkpoint every this many blocks (train, tune) or 8 MB chunks of text (stream); 0: only at the points a "
        "run always writes one (after every pass of train and tune, and when a run stops).",
        natural,
        "an integer >= 0",
        parse=int,
        metavar="N",
        commands=("train", "stream", "tune"),
        command_defaults=(("stream", 16),),
        command_help=(
            ("train", "Also checkpoint every this many blocks; 0: only after every pass and when the run stops."),
            ("tune", "Also checkpoint every this many blocks; 0: only after every pass and when the search stops."),
            (
                "stream",
                "Checkpoint every this many 8 MB chunks of text (a stream makes one pass: the default writes one every "
                "128 MB); 0: only when the stream stops.",
            ),
        ),
        group="checkpoint",
    ),
    Param(
        "checkpoint_seconds",
        None,
        "Also checkpoint when this many seconds passed since the last one.",
        positive,
        "a positive number or None",
        none_ok=True,
        metavar="SECONDS",
        commands=("train", "tune"),
        group="checkpoint",
    ),
    _path_option(
        "resume",
        "Continue from this checkpoint (or its .prev if it is damaged), and keep writing it; only the parameters "
        "safe to change (docs/CHECKPOINTS.md) may differ.",
        "PATH",
        ("train", "stream", "tune"),
        command_help=(
            (
                "stream",
                "Continue from this checkpoint (or its .prev if it is damaged), and keep writing it: the stream of a "
                "file input, unchanged (its rows learned are parsed and skipped); only the parameters safe to change "
                "(docs/CHECKPOINTS.md) may differ.",
            ),
            (
                "tune",
                "Continue the search from this checkpoint (or its .prev if it is damaged), and keep writing it: the "
                "same tune options, --patience aside; only the parameters safe to change (docs/CHECKPOINTS.md) may "
                "differ.",
            ),
        ),
        group="checkpoint",
    ),
    _path_option(
        "warm_start",
        "Start from this model's weights (same problem and classes, bias and text format; features beyond the "
        "model's start at zero; -i: LIBLINEAR's warm-start extension's and Vowpal Wabbit's spelling): the learners "
        "whose state is their weights, newton, owl-qn, cdn, glmnet and the online learners but ogd.",
        "MODEL",
        ("train", "stream"),
        flags=("--warm-start", "-i"),
        command_help=(
            (
                "stream",
                "Start from this model's weights (same problem and classes, bias and text format; features beyond the "
                "model's start at zero; -i: Vowpal Wabbit's spelling): the online learners but ogd.",
            ),
        ),
        group="checkpoint",
    ),
    Param(
        "scheduler",
        None,
        "Train on the dask.distributed cluster at this address (e.g. tcp://host:8786; the [dask] extra): --workers "
        "shards (default: one per worker), the workers reading the store at the same path. newton and owl-qn sum "
        "each pass there (the serial model, bit for bit); dual-cd runs CoCoA+ rounds. Given without --solver, it "
        "chooses newton where the loss allows it. docs/PARALLEL.md.",
        lambda x: isinstance(x, str),
        "an address or None",
        none_ok=True,
        parse=str,
        metavar="ADDRESS",
        commands=("train",),
        group="parallel",
    ),
    Param(
        "zero_based",
        False,
        "Feature indices of the text start at 0 (default: at 1, as LIBSVM writes them; an index 0 is an error).",
        boolean,
        "True or False (convert: 'auto' too)",
        parse=bool,
        commands=("stream", "convert"),
        command_defaults=(("convert", "auto"),),
        command_help=(
            (
                "convert",
                "Feature indices of the text start at 0 (--zero-based) or at 1, as LIBSVM writes them "
                "(--no-zero-based) (default: detected from the file, 0-based if an index 0 is met anywhere, and the "
                "summary names the line of the first; --no-zero-based refuses that line, as LIBLINEAR does)",
            ),
        ),
        group="data",
    ),
    Param(
        "skip_bad_lines",
        False,
        "Skip malformed lines of text and count them instead of stopping at the first (the count and the first such "
        "line are said at the end).",
        boolean,
        "True or False",
        parse=bool,
        commands=("train", "tune", "stream", "convert", "predict"),
        command_help=(
            (
                "train",
                "A text input: skip malformed lines while converting it and count them (said when it is converted or "
                "its cached store reused); a store was converted already, so it is refused with one",
            ),
            (
                "tune",
                "A text input: skip malformed lines while converting it and count them (said when it is converted or "
                "its cached store reused); a store was converted already, so it is refused with one",
            ),
            (
                "predict",
                "Text: skip malformed lines and count them (no prediction line is written for them: the output has "
                "fewer lines than the input); a store was converted already, so it is refused with one",
            ),
        ),
        group="data",
    ),
    Param(
        "strict",
        False,
        "Refuse input that does not fit the model: features outside its feature space and, for a classifier, labels "
        "not among its classes (default: such features ignored, such rows counted wrong, with a warning).",
        boolean,
        "True or False",
        parse=bool,
        commands=("train", "predict"),
        command_help=(
            (
                "train",
                "Refuse a --validation store whose features or labels the training store does not have (default: "
                "such features ignored and such rows counted wrong in its score, with a warning)",
            ),
        ),
        group="data",
    ),
    Param(
        "text_format",
        "libsvm",
        "The text's format: LIBSVM's indices, or Vowpal Wabbit's text (label [importance] |namespace name:value ...), "
        "its names hashed into 2^hash_bits columns as VW hashes them (docs/FORMAT.md, Hashed text).",
        lambda x: x in ("libsvm", "vw"),
        "libsvm or vw",
        choices=("libsvm", "vw"),
        parse=str,
        flags=("--format",),
        commands=("stream", "convert", "predict"),
        command_defaults=(("predict", None),),
        command_help=(
            (
                "predict",
                "The text's format, LIBSVM's or Vowpal Wabbit's (default: the model's, which a text must be in; a "
                "store needs none)",
            ),
        ),
        group="data",
    ),
    Param(
        "hash_bits",
        None,
        "VW text: names are hashed into 2^B columns, B in 1..30 (None: 18, VW's -b), by MurmurHash3 (x86, 32-bit) "
        "seeded with the namespace's hash; names may collide.",
        lambda x: isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 30,
        "an integer in 1..30 or None",
        none_ok=True,
        parse=int,
        metavar="B",
        commands=("stream", "convert", "predict"),
        command_help=(
            ("predict", "VW text: names are hashed into 2^B columns (default: the model's, which B must be)"),
        ),
        group="data",
    ),
    Param(
        "hash_all",
        False,
        "VW text: hash names made of digits too (VW's --hash all); by default such a name is its integer plus its "
        "namespace's hash.",
        boolean,
        "True or False",
        parse=bool,
        commands=("stream", "convert", "predict"),
        command_defaults=(("predict", None),),
        command_help=(("predict", "VW text: hash names made of digits too (default: as the model's text was hashed)"),),
        group="data",
    ),
)


def _grid_value(text: str) -> float:
    """``0.5``, ``1e-3`` or ``2^-6``."""
    base, caret, power = text.strip().partition("^")
    return float(base) ** float(power) if caret else float(base)


def _c_grid(text: str) -> tuple[float, ...]:
    """``--C-grid``: values separated by commas (``0.01,0.1,1``), or a range of powers of 2 (``2^-6..2^6``: every
    power between, doubling)."""
    import argparse

    try:
        if ".." in text:
            low, high = (_grid_value(part) for part in text.split(".."))
            first, last = math.log2(low), math.log2(high)
            if not (first <= last and first == round(first) and last == round(last)):
                raise ValueError
            return tuple(2.0**k for k in range(round(first), round(last) + 1))
        return tuple(_grid_value(part) for part in text.split(","))
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(
            "expected values separated by commas (0.01,0.1,1) or a range of powers of 2 (2^-6..2^6)"
        ) from None


def c_grid(x) -> bool:
    """One or more positive finite numbers, all different."""
    return isinstance(x, (tuple, list)) and len(x) >= 1 and len(set(x)) == len(x) and all(positive(v) for v in x)


def at_least_two(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 2


# The options of ``blocksvm tune`` (besides the training parameters train reads, C excepted: tune searches it).
TUNE_OPTIONS: tuple[Param, ...] = (
    Param(
        "folds",
        5,
        "K of K-fold cross-validation: a row's fold is a hash of its position in the store and --seed "
        "(docs/TUNE.md), and every fold's problems are solved side by side, sharing each block read.",
        at_least_two,
        "an integer >= 2",
        parse=int,
        metavar="K",
        commands=("tune",),
        group="search",
    ),
    Param(
        "C_grid",
        None,
        "The values of C, tried in increasing order, each warm-started from the one before: values separated by "
        "commas, or 2^A..2^B for every power of 2 between. None: LIBLINEAR's -C range, from a C small for the data "
        "(its calc_start_C) doubling up to 1024, stopped by --patience.",
        c_grid,
        "positive numbers, all different, or None",
        none_ok=True,
        parse=_c_grid,
        flags=("--C-grid",),
        metavar="GRID",
        commands=("tune",),
        group="search",
    ),
    Param(
        "patience",
        5,
        "Without --C-grid: stop doubling C after this many values in a row without a better cross-validation score.",
        count,
        "an integer >= 1",
        parse=int,
        metavar="N",
        commands=("tune",),
        group="search",
    ),
    Param(
        "warm",
        True,
        "Start each C from the solutions at the C before, scaled (Chu, Ho, Chen & Lin, KDD 2015); --no-warm: from "
        "zero, each C as a fresh training.",
        boolean,
        "True or False",
        parse=bool,
        commands=("tune",),
        group="search",
    ),
    _path_option(
        "refit",
        "Then train on all rows at the best C, started from the folds' solutions there, and write the model here.",
        "MODEL",
        ("tune",),
        group="search",
    ),
)
