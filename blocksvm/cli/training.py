"""The commands that train: ``train`` (a store or a text file, every solver), ``tune`` (C by cross-validation) and
``stream`` (one pass of an online learner over text). Their options are the declared training parameters and run
options (:mod:`blocksvm.params`): each command shows those it reads, and parses the others to refuse them in one
line (:func:`blocksvm.train.params.settle`)."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

from blocksvm._page_cache import read_soon
from blocksvm.cli.options import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    Positional,
    command,
    option,
    print_json,
)
from blocksvm.errors import ParameterError, check_writable, refuse_writing_over


@cache
def _read(command: str) -> tuple:
    """The parameters and run options ``command`` reads, as its help shows them."""
    from blocksvm.run_options import TUNE_OPTIONS
    from blocksvm.train.params import for_command, tune_reads

    if command == "tune":
        plot = option(
            "plot", "Draw the CV score against log2 C and the folds' spread (matplotlib)", metavar="PNG", group="output"
        )
        return (*tune_reads(), *TUNE_OPTIONS, plot)
    return (*for_command(command), *for_command(command, run_options=True))


@cache
def _not_read(command: str) -> tuple:
    """The declared parameters and run options ``command`` does not read: parsed, to be refused saying why."""
    from blocksvm.train.params import PARAMS, RUN

    read = {p.name for p in _read(command)}
    return tuple(p for p in (*PARAMS.values(), *RUN.values()) if p.name not in read)


def _offers(command: str) -> dict:
    from blocksvm.train.params import liblinear_codes

    return {"-s": liblinear_codes(command)}


def _declared(command: str) -> dict:
    """The :func:`command` arguments of a command whose options are the declared ones."""
    return {
        "options": lambda: _read(command),
        "hidden": lambda: _not_read(command),
        "offers": lambda: _offers(command),
    }


def settled(out, command: str, flags: dict):
    """The command's checked parameters (:func:`~blocksvm.train.params.settle`, tune's :func:`settle_tune`) from the
    flags given; a flag that changes what ``-s CODE`` set is said in one line once they are checked (``-s 0 --solver
    dual-cd``: -s 7's problem)."""
    from blocksvm.train.params import settle, settle_tune

    given, notes = given_flags(command, flags)
    checked = settle_tune(None, given, cli=True) if command == "tune" else settle(command, None, given, cli=True)
    for note in notes:
        out.say(f"note: {note}")
    return checked


def given_flags(command: str, flags: dict) -> tuple[dict, list[str]]:
    """The parameters given on the command line: the flags, and what an alias (``-s CODE``) sets where no flag
    gave it; and a line for each flag that changes what the alias set."""
    from blocksvm.train.params import PARAMS

    given = {name: value for name, value in flags.items() if not name.startswith("alias_")}
    notes = []
    for param in PARAMS.values():
        for alias in param.aliases:
            value = flags.get(alias.dest)
            if value is None:
                continue
            if not _offers(command).get(alias.flag):
                raise ParameterError(
                    f"{alias.flag} is LIBLINEAR's solver code, read by train and tune; {command} runs online "
                    "learners: give --solver"
                )
            values = value if isinstance(value, dict) else {param.name: value}
            changed = {
                key: given[key] for key in values if key in PROBLEM and key in given and given[key] != values[key]
            }
            _refuse_another_problem(alias.flag, values, changed, given)
            if changed:
                notes.append(_override_note(alias.flag, values, changed))
            codes_solver = values.get("solver", "dual-cd")
            if given.get("solver", codes_solver) != codes_solver:  # (its -e is its own solver's rule)
                values = {key: v for key, v in values.items() if key != "eps"}
            given |= {key: v for key, v in values.items() if key not in given}  # flags given explicitly win
    return given, notes


PROBLEM = ("loss", "penalty", "solver")
"""What ``-s CODE`` sets that a flag beside it can change with a note (or refuse): the problem and its solver; a
flag beside it that changes its ``-e`` is the user's stopping rule, said in no note."""


def _refuse_another_problem(flag: str, alias: dict, changed: dict, given: dict) -> None:
    """A --loss or --penalty beside ``-s CODE`` that changes its problem is refused (``-s 1 --loss logistic``): one
    flag would be read and the other not. (--solver may change: the same problem, solved another way.)"""
    from blocksvm.penalties import LIBLINEAR_SOLVERS

    other = {key: value for key, value in changed.items() if key in ("loss", "penalty")}
    if not other:
        return
    code = next(row.code for row in LIBLINEAR_SOLVERS if _sets(row) == alias)
    problem = {"penalty": "l2", **alias, **{k: v for k, v in given.items() if k in ("loss", "penalty")}}
    same = [row for row in LIBLINEAR_SOLVERS if (row.loss, row.penalty) == (problem["loss"], problem["penalty"])]
    solver = given.get("solver", alias.get("solver", "dual-cd"))
    same = [row.code for row in sorted(same, key=lambda row: row.solver != solver)]  # (its solver's code first)
    flags = " ".join(f"--{key} {value}" for key, value in other.items())
    that = f"LIBLINEAR's -s {same[0]}" if same else "a problem LIBLINEAR has no code for"
    raise ParameterError(
        f"{flag} {code} is the {alias['loss']} loss with the {alias.get('penalty', 'l2')} penalty; {flags} beside it "
        f"asks for another problem ({that}): give one of them"
    )


def _override_note(flag: str, alias: dict, changed: dict) -> str:
    """``-s 5`` with ``--loss logistic``: what the problem became."""
    from blocksvm.penalties import LIBLINEAR_SOLVERS

    code = next(row.code for row in LIBLINEAR_SOLVERS if _sets(row) == alias)
    problem = {"penalty": "l2", "solver": "dual-cd", **alias, **changed}
    same = [row for row in LIBLINEAR_SOLVERS if (row.loss, row.penalty) == (problem["loss"], problem["penalty"])]
    became = next((row for row in same if row.solver == problem["solver"]), same[0] if same else None)
    flags = " ".join(f"--{key.replace('_', '-')} {value}" for key, value in changed.items())
    what = f"LIBLINEAR's -s {became.code}" if became else "a problem LIBLINEAR has no code for"
    return f"{flag} {code} with {flags} trains {what} ({problem['loss']} loss, {problem['penalty']} penalty)"


def _sets(row) -> dict:
    from blocksvm.params import LOSS

    return LOSS.aliases[0].parse(str(row.code))


def partial_path(model: str) -> Path:
    """Where a run stopped by a signal writes the model it has so far: beside the output, never over it."""
    path = Path(model)
    return path.with_name(f"{path.stem}.partial{path.suffix}" if path.suffix else f"{path.name}.partial")


def _stopped(out, result_reason: str, model, partial: Path | None, checkpoint) -> int:
    """The lines of a run stopped by a signal, and its exit code."""
    if partial is not None:
        out.say(f"the model so far written to {partial}, not to {model}, which a finished run writes")
    if checkpoint:
        out.say(f"checkpoint in {checkpoint}: continue with --resume {checkpoint}")
    elif partial is not None:
        out.say("without --checkpoint this run cannot be resumed exactly; give one to continue a run later")
    return EXIT_TERMINATED if "SIGTERM" in result_reason else EXIT_INTERRUPTED


@command(
    "train",
    "train a linear model on a block store (or a text file, converted once): LIBLINEAR's problems (-s), by block "
    "minimization (dual CD), Newton's or OWL-QN's passes, coordinate descent over the store's columns (the L1 "
    "penalty: CDN, newGLMNET), Pegasos or an online learner",
    positionals=(
        Positional(
            "store",
            "the training store (from 'blocksvm convert'), or LIBSVM text (.gz/.bz2/.xz too), "
            "converted once into a cached store in the user's cache folder (--cache-dir)",
        ),
        Positional(
            "model",
            "the model file to write (default: the input's name + .model, in this folder, as LIBLINEAR names it)",
            optional=True,
        ),
    ),
    **_declared("train"),
    json="print the training summary as JSON",
)
def train_command(out, store: str, model: str | None = None, **flags) -> int:
    from blocksvm.checkpoint import writing
    from blocksvm.train import train

    params, run = settled(out, "train", flags)
    model = model or f"{Path(store).name}.model"  # LIBLINEAR's train: a9a -> a9a.model
    replaced = Path(model).exists()
    history = run.history_path or f"{model}.history.jsonl"
    partial = partial_path(model)
    outputs = {"the model": model, "the history": history, "the checkpoint": run.checkpoint or run.resume}
    refuse_writing_over({**outputs, "the model so far": partial, **_checkpoint_written(run)}, _inputs(store, run))
    for what, path in outputs.items():  # before training, not after hours of it
        if path:
            check_writable(path, what)
    with writing({"the model": model, "the history": history, "the model so far": partial}), out.warnings_said():
        result = train(
            store,
            params,
            verbose=out.verbosity,
            progress=out.progress,
            **{**_run_options(run, "train"), "history_path": history},
        )
        stopped = result.interrupted and result.stop_reason.startswith("stopped by")
        path = result.model.save(partial if stopped else model)
    if out.json:
        print_json({"model": str(path), "history": history, **result.model.summary})
    elif not stopped:
        out.say(f"model written to {path}{' (it replaced the model there)' * replaced}; history in {history}")
    if stopped:
        return _stopped(out, result.stop_reason, model, path, run.checkpoint or run.resume)
    _remove_partial(out, partial)
    return EXIT_OK


def _inputs(store: str, run) -> dict:
    """What a training command reads, by name, for :func:`~blocksvm.errors.refuse_writing_over`: its data (and the
    cached store of a text file), the validation data, the warm-start model and the checkpoint it resumes."""
    from blocksvm.io.text_cache import cache_path

    data = {"the training data": store, "the validation data": run.validation}
    cached = {
        f"the cached store of {what}": cache_path(path, run.cache_dir)
        for what, path in data.items()
        if path is not None and Path(path).is_file()
    }
    resumed = {"the checkpoint resumed": run.resume} if run.checkpoint not in (None, run.resume) else {}
    return {**data, **cached, "the warm-start model": run.warm_start, **resumed}


def _checkpoint_written(run) -> dict:
    """The checkpoint a run writes beside the one it resumes (``--resume A --checkpoint B``); one it resumes and keeps
    writing is the run's own state, not an input written over."""
    return {"the checkpoint": run.checkpoint} if run.checkpoint not in (None, run.resume) else {}


def _remove_partial(out, partial: Path) -> None:
    """A finished run removes the model so far that an interrupted run of the same output left beside it: the finished
    model replaces it. (The run holds the lock of that file: no run that could still write it is running.)"""
    if partial.exists():
        partial.unlink()
        out.say(f"removed {partial}, an interrupted run's model so far")


def _run_options(run, command: str) -> dict:
    """The run options that ``command`` reads, as keyword arguments."""
    from blocksvm.train.params import RUN

    return {name: value for name, value in run.to_dict().items() if command in RUN[name].commands}


@command(
    "tune",
    "choose C by K-fold cross-validation, every fold sharing each block read (LIBLINEAR's -C and -v)",
    positionals=(Positional("store", "the training store, or a LIBSVM file (converted once, as for train)"),),
    **_declared("tune"),
    json="print the search as JSON",
)
def tune_command(out, store: str, plot: str | None = None, **flags) -> int:
    from blocksvm.train.c_search import tune

    params, run, options = settled(out, "tune", flags)
    checkpoint = run.checkpoint or run.resume
    written = {"the model": options["refit"], "the plot": plot, "the checkpoint": checkpoint}
    refuse_writing_over({**written, **_checkpoint_written(run)}, _inputs(store, run))
    for path, what in ((options["refit"], "the model"), (plot, "the plot"), (checkpoint, "the checkpoint")):
        if path:
            check_writable(path, what)
    result = tune(
        store,
        params,
        verbose=0 if out.json else out.verbosity,
        progress=out.progress,
        **_run_options(run, "tune"),
        **options,
    )
    if result.interrupted:
        reason = result.model.summary["stop_reason"] if result.model else result.stop_reason
        if result.model:  # the search finished, its refit was cut
            again = f"tune again with --resume {checkpoint}" if checkpoint else f"train {store} at that C"
            out.say(
                f"the refit at C = {result.best_C:g} {reason}: the model written to {options['refit']} is not "
                f"finished; {again} for the finished one"
            )
        elif checkpoint:
            out.say(f"checkpoint in {checkpoint}: continue with --resume {checkpoint}")
        return EXIT_TERMINATED if "SIGTERM" in reason else EXIT_INTERRUPTED
    if plot:
        from blocksvm.plot import plot_cv

        plot_cv(result, plot)
    if out.json:
        print_json(result.to_dict() | ({"model": str(options["refit"])} if options["refit"] else {}))
    else:
        out.tell(result.table())
        if options["refit"]:
            out.say(f"model at C = {result.best_C:g} written to {options['refit']}")
    return EXIT_OK


@command(
    "stream",
    "one pass of an online learner straight from text (LIBSVM's or VW's; - for standard input), no store",
    positionals=(
        Positional("input", "LIBSVM text (.gz, .bz2, .xz too; VW text with --format vw), or - for standard input"),
        Positional("model", "the model file to write"),
    ),
    **_declared("stream"),
    json="print the summary as JSON",
)
def stream_command(out, input: str, model: str, **flags) -> int:
    read_soon(input)  # the disk reads while numba starts
    from blocksvm.checkpoint import writing
    from blocksvm.stream import stream

    params, run = settled(out, "stream", flags)
    partial, replaced = partial_path(model), Path(model).exists()
    written = {"the model": model, "the model so far": partial, "the checkpoint": run.checkpoint or run.resume}
    refuse_writing_over({**written, **_checkpoint_written(run)}, _inputs(input, run))
    check_writable(model, "the model")
    with writing({"the model": model, "the model so far": partial}):  # one run per output, until it is written
        result = stream(input, params, verbose=0 if out.json else out.verbosity, **_run_options(run, "stream"))
        path = None
        if result.model is None:
            print(
                f"no model written: stopped by {result.stopped_by} before the stream showed two classes",
                file=sys.stderr,
            )
        else:
            path = result.model.save(partial if result.stopped_by else model)
            _stream_summary(out, path, result, replaced and not result.stopped_by)
    if result.stopped_by:
        return _stopped(out, result.stopped_by, model, path, run.checkpoint or run.resume)
    _remove_partial(out, partial)
    return EXIT_OK


def _stream_summary(out, path, result, replaced: bool = False) -> None:
    if out.json:
        print_json({"model": str(path), **result.summary})
        return
    s = result.summary
    weight = f" of weight {s['weight']:g}" if "weight" in s else ""  # (VW's importance weights: the means' weights)
    out.say(
        f"{s['examples']} examples{weight} in {s['seconds']:.2f} s ({s['mb_per_s']} MB/s): progressive accuracy "
        f"{100 * s['progressive_accuracy']:.2f}%, progressive {'log ' * ('progressive_log_loss' in s)}loss "
        f"{s['progressive_loss']:.4f}, {s['nonzero_weights']} nonzero weights; model written to {path}"
        + " (it replaced the model there)"
        * replaced
    )
    if s.get("skipped_lines"):
        out.say(f"skipped {s['skipped_lines']:,} malformed lines; the first: {s['first_skipped']}")
