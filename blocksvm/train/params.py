"""Training parameters and run options: dataclasses built from the declarations, and the one place they are
checked.

The fields of :class:`TrainParams` are :data:`blocksvm.params.COMMON` followed by every registered solver's
own ``params``, in registry order, with the solvers that read each one filled in from the solvers' lists;
:class:`RunOptions` are :data:`blocksvm.run_options.RUN_OPTIONS`. :func:`settle` turns what a command was given into
both, checked: each value against its range, and each against its readers (a value that the command or the
chosen solver does not read is refused with one line). Nothing here names a parameter by hand except the
cross-parameter rules: on ``class_weight``, the solver a penalty chooses, and ``l1_ratio`` (elastic net's alone).
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, field, fields, make_dataclass, replace

from blocksvm.aliases import listed
from blocksvm.errors import ParameterError
from blocksvm.losses import LOSSES, REGRESSION
from blocksvm.params import COMMON, Param
from blocksvm.penalties import LIBLINEAR_SOLVERS, PENALTIES, liblinear_code
from blocksvm.run_options import RUN_OPTIONS, TUNE_OPTIONS
from blocksvm.solvers.base import COLUMNS, ROW_SUMS, tunable
from blocksvm.solvers.registry import SOLVERS

# What each command does, and how a message names it, for the message that refuses a parameter it does not read.
ROLES = {
    "train": "trains on a store",
    "stream": "makes one pass over text, in file order",
    "partial_fit": "learns online from arrays",
}
NAMES = {"train": "train", "stream": "stream", "partial_fit": "OnlineClassifier", "tune": "tune"}


def declared() -> tuple[Param, ...]:
    """Every training parameter: the common ones, then each solver's own, with their readers filled in.

    A parameter some solvers list in their ``params`` is read by those solvers, under the commands they run
    under; one no solver lists is read by every solver.
    """
    readers: dict[str, list[str]] = {}
    for solver in SOLVERS.values():
        for p in solver.params:
            readers.setdefault(p.name, []).append(solver.name)
    params: dict[str, Param] = {}
    for p in (*COMMON, *(p for solver in SOLVERS.values() for p in solver.params)):
        if p.name in params:
            continue
        solvers = tuple(readers.get(p.name, ()))
        commands = p.commands
        if solvers:
            runs = {command for name in solvers for command in SOLVERS[name].commands}
            commands = tuple(c for c in p.commands if c in runs)
        choices = tuple(SOLVERS) if p.name == "solver" else p.choices
        online = bool(solvers) and all(SOLVERS[name].online for name in solvers)
        group = p.group or ("online learners" if online else "solver")
        params[p.name] = replace(p, solvers=solvers, commands=commands, choices=choices, group=group)
    return tuple(params.values())


PARAMS: dict[str, Param] = {p.name: p for p in declared()}
RUN: dict[str, Param] = {p.name: p for p in RUN_OPTIONS}
TUNE: dict[str, Param] = {p.name: p for p in TUNE_OPTIONS}
TUNE_READS = tuple(p.name for p in RUN_OPTIONS if "tune" in p.commands)  # the run options tune reads
# train's training parameters that tune does not read: C (its grid), the time limit and the exact-pass schedule
# (it makes one evaluation pass per C), and shards (its folds' problems share each read in one process)
TUNE_SKIPS = ("C", "time_limit", "eval_every", "workers", "line_search", "cocoa_sigma")
AUTO = "auto"
"""The estimators' solver: chosen by the data's shape where it is known (:func:`settle`'s ``shape``), else the
default."""


def tuned_solvers() -> tuple[str, ...]:
    """The solvers tune can search C with: those that move from value to value (:func:`~blocksvm.solvers.base.
    tunable`: dual CD scales its alphas, Newton and OWL-QN start from their weights)."""
    return tuple(name for name, solver in SOLVERS.items() if tunable(solver))


def tune_reads() -> tuple[Param, ...]:
    """The training parameters and run options ``blocksvm tune`` reads besides its own (:data:`TUNE`)."""
    tuned = (p for p in for_command("train") if not p.solvers or set(p.solvers) & set(tuned_solvers()))
    trained = (p for p in tuned if p.name not in TUNE_SKIPS)
    offered = choices_in("tune")
    tuned = (replace(p, commands=(*p.commands, "tune"), choices=offered.get(p.name, p.choices)) for p in trained)
    return (*tuned, *(RUN[n] for n in TUNE_READS))


# Parameters a resumed run may change: they affect when training stops or what it prints, never
# the path the optimizer takes.
SAFE_TO_CHANGE = frozenset(p.name for p in PARAMS.values() if p.safe_to_change)


def for_command(command: str, run_options: bool = False) -> tuple[Param, ...]:
    """The training parameters (or the run options) that ``command`` reads, each with its default there and the
    choices it offers there (:func:`choices_in`)."""
    params = RUN_OPTIONS if run_options else PARAMS.values()
    return tuple(
        replace(p, default=p.default_for(command), choices=choices_in(command).get(p.name, p.choices))
        for p in params
        if command in p.commands
    )


def solvers_in(command: str) -> tuple[str, ...]:
    """The solvers that run under ``command`` (tune: those it warm-starts along C)."""
    if command == "tune":
        return tuned_solvers()
    return tuple(name for name, s in SOLVERS.items() if command in s.commands)


def choices_in(command: str) -> dict[str, tuple]:
    """The values of ``solver``, ``loss`` and ``penalty`` that ``command`` takes: its solvers, the losses and
    penalties they minimize (of the solvers that read them); a value no solver of the command minimizes is refused
    there, so its help does not offer it."""
    solvers = [SOLVERS[name] for name in solvers_in(command)]
    reading = lambda name: [s for s in solvers if name in {p.name for p in s.params}]  # noqa: E731
    losses = {loss for s in reading("loss") for loss in s.losses}
    penalties = {penalty for s in reading("penalty") for penalty in s.penalties}
    return {
        "solver": tuple(s.name for s in solvers),
        "loss": tuple(loss for loss in PARAMS["loss"].choices if loss in losses),
        "penalty": tuple(penalty for penalty in PARAMS["penalty"].choices if penalty in penalties),
    }


def liblinear_codes(command: str) -> tuple[int, ...]:
    """LIBLINEAR's ``-s`` codes whose solvers run under ``command``."""
    return tuple(row.code for row in LIBLINEAR_SOLVERS if row.solver in solvers_in(command))


class _Checked:
    """Methods of :class:`TrainParams` and :class:`RunOptions`."""

    def validate(self):
        """Check every value against its declared range; raise ParameterError naming the first bad one."""
        for f in fields(self):
            p = PARAMS.get(f.name) or RUN[f.name]
            value = getattr(self, f.name)
            if p.name == "class_weight":
                _check_class_weight(value)
            elif not p.accepts(value) and not (value is None and p.solver_defaults):  # (None: the solver's own)
                raise ParameterError(f"{p.name} must be {p.range}, not {value!r}")
        return self

    def to_dict(self) -> dict:
        return asdict(self)

    def with_solver_defaults(self, command: str = "train"):
        """The parameters left at None that have a default of their solver's own, at that default (a TrainParams made
        by hand; :func:`settle` fills them itself)."""
        own = {p.name: p.default_for(command, self.solver) for p in PARAMS.values() if p.solver_defaults}
        return replace(self, **{name: value for name, value in own.items() if getattr(self, name) is None})

    @classmethod
    def from_dict(cls, values: dict):
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


def _check_class_weight(value) -> None:
    if value is None or value == "balanced":
        return
    if not isinstance(value, dict):
        raise ParameterError(f"class_weight must be a dict, 'balanced' or None, not {value!r}")
    for label, weight in value.items():
        if not (
            isinstance(weight, (int, float)) and not isinstance(weight, bool) and weight > 0 and math.isfinite(weight)
        ):
            raise ParameterError(f"class_weight[{label!r}] must be a positive number, not {weight!r}")


def _docstring(title: str, params) -> str:
    lines = [title, "", "Attributes", "----------"]
    for p in params:
        lines += [f"{p.name} : default={p.default!r}", f"    {p.help}"]
    return "\n".join(lines)


def unset(p) -> object:
    """The value of a parameter not chosen: its default, or None where solvers have defaults of their own (None: the
    solver's, filled in by :func:`settle` and ``with_solver_defaults``), so that a value given, even the generic
    default (``max_outer=50`` to dual CD, whose own is 1,000), is the value that runs."""
    return None if p.solver_defaults else p.default


TrainParams = make_dataclass(
    "TrainParams",
    [(p.name, object, field(default=unset(p))) for p in PARAMS.values()],
    bases=(_Checked,),
    namespace={
        "__doc__": _docstring(
            "Hyper-parameters and stopping rules of a run (built from blocksvm.params).", PARAMS.values()
        ),
        "__module__": __name__,
    },
)
RunOptions = make_dataclass(
    "RunOptions",
    [(p.name, object, field(default=p.default)) for p in RUN_OPTIONS],
    bases=(_Checked,),
    namespace={
        "__doc__": _docstring("How a run is driven and where it writes (built from blocksvm.params).", RUN_OPTIONS),
        "__module__": __name__,
    },
)


def settle(command: str, params=None, given: dict | None = None, *, cli: bool = False, shape=None):
    """The checked ``(TrainParams, RunOptions)`` of ``command``.

    Values come from ``command``'s defaults, then ``params`` (a TrainParams: its values that differ from the
    defaults count as given), then ``given`` (keyword arguments, or the flags on a command line). A penalty with an
    L1 term given without a solver chooses its solver (CDN or newGLMNET; OWL-QN for the elastic net), and the
    parameters not given take the chosen solver's defaults. ``solver="auto"`` (the estimators' default) is a solver
    not given, then chosen by the data's ``shape`` (rows, features) when it is known (:func:`_shaped`). Every value is
    checked against its range, and every given one against its readers: a parameter the command does not read, or
    the chosen solver does not read, is refused with one line (``cli``: naming its flag), and so is one that acts only
    beside another that is not there (:data:`NEEDS`).
    """
    given = dict(given or {})
    auto = given.get("solver") == AUTO
    if auto:
        del given["solver"]
    unknown = sorted(set(given) - set(PARAMS) - set(RUN))
    if unknown:
        raise ParameterError(f"unknown parameter(s): {', '.join(unknown)}")
    values = {p.name: unset(p) if p.solver_defaults else p.default_for(command) for p in PARAMS.values()}
    if params is not None:  # (a solver's own default, filled in when it was settled, is not a value given)
        own = {p.name: p.default_for(command, params.solver) for p in PARAMS.values() if p.solver_defaults}
        given = {k: v for k, v in params.to_dict().items() if v != values[k] and v != own.get(k, values[k])} | given
    values |= {k: v for k, v in given.items() if k in PARAMS}
    penalty = PENALTIES.get(values["penalty"])
    if "solver" not in given and penalty is not None and penalty.sparse:
        values["solver"] = penalty.solver_for(values["loss"])
    values |= _paired(command, values, given)
    if params is None:  # (a TrainParams states its solver: one settled already, or a user's, whose default it keeps)
        values |= _sharded(command, values, given)
    if auto and shape is not None:
        values |= _shaped(command, values, given, shape)
    own = (p for p in PARAMS.values() if p.solver_defaults and p.name not in given)
    values |= {p.name: p.default_for(command, values["solver"]) for p in own}
    trained = TrainParams(**values).validate()
    options = RunOptions(**{p.name: p.default_for(command) for p in RUN_OPTIONS})
    options = RunOptions(**(options.to_dict() | {k: v for k, v in given.items() if k in RUN})).validate()
    _check_solver(command, trained.solver, cli)
    _check_loss(trained, cli)
    _check_penalty(trained, given, cli)  # (first: --l1-ratio with --penalty l1 says why before who reads it)
    for name, value in given.items():
        _check_read(command, PARAMS.get(name) or RUN[name], trained.solver, cli, value)
    _check_needs(command, trained.to_dict() | options.to_dict(), given, cli)
    _check_some_rule_stops(trained, given, cli)
    return trained, options


def _check_some_rule_stops(trained, given: dict, cli: bool) -> None:
    """Refuse ``tol=0`` where nothing else would stop the run before its ``max_outer`` default: the gap rule off, no
    PG rule (``-e``), no ``max_outer`` or time limit given. (Given with one of them, 0 turns the gap rule off.)"""
    rules = SOLVERS[trained.solver].stop_rules
    if given.get("tol") != 0 or "max_outer" in given or trained.time_limit is not None:
        return
    if "pg" in rules and trained.eps is not None:
        return
    flags = ("--tol 0", "--max-outer N", "--time-limit SECONDS", "-e EPS") if cli else (
        "tol=0", "max_outer=N", "time_limit=SECONDS", "eps=EPS")  # fmt: skip
    raise ParameterError(
        f"{flags[0]} turns the duality gap rule off and no other rule would stop this run before its "
        f"{trained.max_outer:,} passes: give {flags[1]} or {flags[2]} for how long to run"
        + (f", {flags[3]} for LIBLINEAR's rule" if "pg" in rules else "")
        + ", or a tolerance > 0"
    )


def for_store(params, store, say=None):
    """``params`` for ``store``, the solver-choice rule that needs the store itself: a column learner's store gets its
    column layout (written once, said in one line through ``say``); a store without one whose folder cannot be
    written is trained by OWL-QN over its rows instead (said why). Before the store is locked for reading: writing
    the layout locks it."""
    from blocksvm.store import BlockStore, ensure_columns

    if SOLVERS[params.solver].reads != COLUMNS:
        return params
    store = store if isinstance(store, BlockStore) else BlockStore(store)
    if store.columns is not None:
        return params
    if not _can_write(store.path):
        if say is not None:
            say(
                f"note: {store.path} has no column layout and its folder cannot be written: owl-qn trains the "
                f"problem over its rows instead of {params.solver} over its columns ('blocksvm columns STORE' where "
                "the store can be written gives it columns)"
            )
        return replace(params, solver="owl-qn")
    ensure_columns(store, say=say)
    return params


def _can_write(folder) -> bool:
    return os.access(folder, os.W_OK)


def settle_tune(params=None, given: dict | None = None, *, cli: bool = False, shape=None):
    """The checked ``(TrainParams, RunOptions, tune options)`` of ``blocksvm tune``: the training parameters
    train reads but C (the grid replaces it), the run options of :data:`TUNE_READS` and :data:`TUNE` (a dict);
    ``shape`` as :func:`settle` reads it."""
    given = dict(given or {})
    options = {p.name: p.default for p in TUNE_OPTIONS} | {k: given.pop(k) for k in list(given) if k in TUNE}
    for name, value in options.items():
        if not TUNE[name].accepts(value):
            raise ParameterError(f"{name} must be {TUNE[name].range}, not {value!r}")
    if "C" in given or (params is not None and params.C != PARAMS["C"].default):
        raise ParameterError(f"tune searches C: give the values to try as {'--C-grid' if cli else 'C_grid'}")
    solver = given.get("solver", params.solver if params is not None else "dual-cd")
    if solver != AUTO:
        _check_tuned(solver, cli)
    read = {p.name for p in tune_reads()}
    for name in given:
        if name not in read and (name in RUN or name in TUNE_SKIPS):
            label = (RUN.get(name) or PARAMS[name]).label if cli else name
            raise ParameterError(f"{label} is a train option; tune searches C by cross-validation")
    trained, run = settle("train", params, given, cli=cli, shape=shape)
    _check_tuned(trained.solver, cli)  # (the solver a loss of its own chose)
    return trained, run, options


def _check_tuned(solver: str, cli: bool) -> None:
    tuned = tuned_solvers()
    if solver not in tuned:
        raise ParameterError(
            f"tune warm-starts {', '.join(tuned[:-1])} and {tuned[-1]} along C; "
            f"{'--solver ' if cli else 'solver='}{solver} "
            "cannot continue from another C: train it with 'blocksvm train' at each C"
        )


def _paired(command: str, values: dict, given: dict) -> dict:
    """The solver a given loss needs, or the loss a given solver needs, when the other was not given: a loss that the
    default solver does not minimize and exactly one solver does (``--loss crammer-singer``: its own solver), a
    solver that minimizes exactly one loss (``--solver one-class``), or exactly one penalty (``--solver cdn``: l1)."""
    solver, loss = SOLVERS.get(values["solver"]), values["loss"]
    if solver is None or loss not in PARAMS["loss"].choices:
        return {}  # (refused with their ranges)
    if "solver" not in given and _reads_loss(solver) and loss not in solver.losses:
        able = [name for name, s in SOLVERS.items() if command in s.commands and _reads_loss(s) and loss in s.losses]
        return {"solver": able[0]} if len(able) == 1 else {}
    paired = {}
    if "loss" not in given and _reads_loss(solver) and len(solver.losses) == 1:
        paired["loss"] = solver.losses[0]
    if "penalty" not in given and values["penalty"] not in solver.penalties and len(solver.penalties) == 1:
        paired["penalty"] = solver.penalties[0]  # (--solver cdn: the L1 problem, the only one it minimizes)
    return paired


def _sharded(command: str, values: dict, given: dict) -> dict:
    """Shards (``workers`` > 1, or a ``scheduler``) given without a solver choose the first solver whose passes are
    sums (the serial model, bit for bit, on any number of shards) that minimizes the problem's loss and penalty and
    reads every parameter given: Newton for the squared hinge, logistic regression and -s 11 (dual CD's CoCoA+
    rounds take many more passes than the serial run)."""
    workers = given.get("workers")
    if "solver" in given or not ((isinstance(workers, int) and workers > 1) or given.get("scheduler")):
        return {}
    return _pass_solver(command, values, given)


def _shaped(command: str, values: dict, given: dict, shape: tuple[int, int]) -> dict:
    """The solver the data's shape chooses where none was given (``solver="auto"``): with more rows than features,
    the first solver whose passes are sums (Newton) that minimizes the problem and reads every parameter given, as
    scikit-learn's ``LinearSVC(dual="auto")`` chooses LIBLINEAR's primal there: dual CD's coordinates are the rows,
    and on scaled or dense data it needs many passes (measured on a9a scaled: 50 passes short of a 1e-3 gap, against
    Newton's 4 iterations). Else dual CD, the default."""
    rows, features = shape
    if "solver" in given or rows <= features:
        return {}
    return _pass_solver(command, values, given)


def _pass_solver(command: str, values: dict, given: dict) -> dict:
    """The first solver whose passes are sums that minimizes the problem's loss and penalty, runs under ``command`` and
    reads every parameter given, unless another rule chose the solver already (a penalty's, a loss's own)."""
    if values["solver"] != PARAMS["solver"].default_for(command):  # another rule chose it (a penalty's solver)
        return {}
    for solver in SOLVERS.values():
        reads = {p.name for p in solver.params}
        minimizes = values["loss"] in solver.losses and values["penalty"] in solver.penalties
        read = all(
            key in RUN or not PARAMS[key].solvers or key in reads for key in given if key in PARAMS or key in RUN
        )
        runs = command in solver.commands and solver.reads == ROW_SUMS
        if runs and minimizes and read and not solver.ignores.keys() & given.keys():
            return {"solver": solver.name}
    return {}


FASTER = (
    "on scaled or dense data, or with more rows than features, --solver {solver} (solver='{solver}' in Python) "
    "converges in fewer passes than dual CD"
)


def faster_solver(params) -> str | None:
    """The remedy of a dual CD run that stopped short of its tolerance: the solver whose passes are sums that minimizes
    its problem (Newton, for the squared hinge, logistic regression and -s 11), which converges in fewer passes where
    dual CD needs many (scaled or dense data, more rows than features); None for another solver or a loss Newton does
    not minimize."""
    if params.solver != PARAMS["solver"].default:
        return None
    return _pass_solver("train", params.to_dict(), {}).get("solver")


def _reads_loss(solver) -> bool:
    return "loss" in {p.name for p in solver.params}


def _check_solver(command: str, solver: str, cli: bool) -> None:
    if command in SOLVERS[solver].commands:
        return
    online = ", ".join(name for name, s in SOLVERS.items() if command in s.commands)
    chosen = f"--solver {solver}" if cli else f"solver={solver!r}"
    where = {"stream": "convert the file and use 'blocksvm train'", "partial_fit": "use BlockSVC"}[command]
    raise ParameterError(
        f"{NAMES[command]} needs an online learner ({online}); {chosen} makes passes over a store: {where}"
    )


def _check_loss(trained, cli: bool) -> None:
    solver = SOLVERS[trained.solver]
    if "loss" not in {p.name for p in solver.params} or trained.loss in solver.losses:
        return
    loss, chosen = (
        (f"--loss {trained.loss}", f"--solver {solver.name}")
        if cli
        else (f"loss={trained.loss!r}", f"solver={solver.name!r}")
    )
    penalty = PENALTIES.get(trained.penalty)
    other = penalty.solver_for(trained.loss) if penalty is not None and penalty.sparse else None
    hint = ""
    if other is not None and other != solver.name and trained.loss in SOLVERS[other].losses:
        code = liblinear_code(trained.loss, trained.penalty)
        hint = f"; {'-s ' + str(code) + ', ' if code is not None else ''}{'--solver ' if cli else 'solver='}{other}"
        hint += " minimizes it"
    raise ParameterError(f"{loss} is not a loss {chosen} minimizes (it minimizes {', '.join(solver.losses)}){hint}")


def _check_penalty(trained, given: dict, cli: bool) -> None:
    """The penalty is one the solver minimizes, and ``l1_ratio`` is given only with the penalty that reads it."""
    solver = SOLVERS[trained.solver]
    flag = (lambda name, value: f"--{name.replace('_', '-')} {value}") if cli else (lambda n, v: f"{n}={v!r}")
    if "penalty" in {p.name for p in solver.params} and trained.penalty not in solver.penalties:
        raise ParameterError(
            f"{flag('penalty', trained.penalty)} is not a penalty {flag('solver', solver.name)} minimizes (it "
            f"minimizes {', '.join(solver.penalties)}); without {'--solver' if cli else 'solver='}, "
            f"{flag('penalty', trained.penalty)} chooses {PENALTIES[trained.penalty].solver_for(trained.loss)}"
        )
    if "l1_ratio" in given and trained.penalty != "elasticnet":
        raise ParameterError(
            f"{'--l1-ratio' if cli else 'l1_ratio'} weighs the two terms of {flag('penalty', 'elasticnet')}; "
            f"{flag('penalty', trained.penalty)} has one"
        )


# Options that act only beside another: the options, whether what they act on is there (of the settled values), and
# what to give for it (on the command line, in Python).
NEEDS = (
    (
        ("checkpoint_every", "checkpoint_seconds"),
        lambda v: bool(v["checkpoint"] or v["resume"]),
        ("--checkpoint PATH (or --resume PATH)", "checkpoint=PATH (or resume=PATH)"),
        "says when to write checkpoints",
    ),
    (
        ("line_search", "cocoa_sigma"),
        lambda v: bool((v["workers"] or 1) > 1 or v["scheduler"]),
        ("--workers K > 1 (or --scheduler)", "workers=K > 1 (or a client)"),
        "shapes the CoCoA+ rounds of dual CD on shards",
    ),
    (
        ("epsilon",),
        lambda v: LOSSES[v["loss"]].task == REGRESSION,
        (
            "a regression loss (--loss epsilon-insensitive or squared-epsilon-insensitive: -s 11, 12, 13)",
            "a regression loss (loss='epsilon-insensitive' or 'squared-epsilon-insensitive')",
        ),
        "is the width of support vector regression's insensitive tube",
    ),
    (
        ("strict",),
        lambda v: v["validation"] is not None,
        ("--validation DATA", "validation=DATA"),
        "refuses validation data whose features or labels the training data does not have",
    ),
)


def _check_needs(command: str, values: dict, given: dict, cli: bool) -> None:
    """Refuse an option given where what it acts on is not (:data:`NEEDS`): nothing would read it."""
    for names, present, (flag, keyword), what in NEEDS:
        for p in ((PARAMS.get(n) or RUN[n]) for n in names if n in given):
            if (cli or given[p.name] != p.default_for(command)) and not present(values):  # (a caller's defaults)
                label = p.label if cli else p.name
                raise ParameterError(f"{label} is read only with {flag if cli else keyword}: it {what}")


def _check_read(command: str, p: Param, solver: str, cli: bool, value=None) -> None:
    name = p.label if cli else p.name
    if command not in p.commands:
        owners = listed([NAMES[c] for c in p.commands if c in NAMES and not (cli and c == "partial_fit")])
        raise ParameterError(
            f"{name} is a{'n' if owners[0] in 'aeiouO' else ''} {owners} option; {NAMES[command]} {ROLES[command]}"
        )
    ignored = SOLVERS[solver].ignores.get(p.name)
    if ignored and not (p.off is not None and value is not None and p.off(value)):
        raise ParameterError(f"{name} is not read by {'--solver ' if cli else 'solver='}{solver}: {ignored}")
    if p.solvers and solver not in p.solvers:
        raise ParameterError(
            f"{name} is read by --solver {', '.join(p.solvers)}, not by --solver {solver}"
            if cli
            else f"{name} is read by the solvers {', '.join(p.solvers)}, not by solver={solver!r}"
        )


def reference_page() -> str:
    """docs/PARAMETERS.md: ``python -m blocksvm.train.params > docs/PARAMETERS.md`` writes it."""
    from blocksvm.params import ESTIMATOR_NAMES

    renamed = ", ".join(f"`{name}` is `{alias}`" for name, alias in ESTIMATOR_NAMES.items())
    return (
        "# Parameters\n\n"
        "Made from the declarations (`blocksvm/params.py` and each solver's `params`) by "
        "`python -m blocksvm.train.params > docs/PARAMETERS.md`; tests/test_params.py checks that this page, "
        "each command's `--help` and the estimators agree with them.\n\n"
        "Each parameter is read by the commands it names (`partial_fit`: `OnlineClassifier`'s `fit` and "
        "`partial_fit`; `BlockSVC` and `BlockSVR` read what `train` reads, `BlockSVCCV` and `BlockSVRCV` what "
        "`tune` reads but `refit` and the run options) and by the solvers it names; given anywhere else it "
        "is refused with one line. `blocksvm COMMAND --help` shows the command's own, with its defaults. In the "
        f"estimators {renamed}. Parameters marked safe to change in docs/CHECKPOINTS.md may differ when a run "
        "resumes.\n\n"
        "## Training parameters\n\n" + markdown_table(tuple(PARAMS.values())) + "\n"
        "## Run options\n\n"
        "How a run is driven and where it writes: keyword arguments of `train()`, `stream()` and `tune()`, flags "
        "of the commands; a checkpoint does not compare them.\n\n" + markdown_table(RUN_OPTIONS) + "\n"
        "## Tune options\n\n"
        "`blocksvm tune` and `blocksvm.train.tune()` read these, beside the training parameters train reads for "
        "dual CD and Newton (C aside: the grid gives it; not the time limit, `eval_every` or shards) and the run "
        "options marked tune above; docs/TUNE.md describes the search.\n\n" + markdown_table(TUNE_OPTIONS)
    )


def markdown_table(params: tuple[Param, ...]) -> str:
    """A reference table of docs/PARAMETERS.md."""
    lines = [
        "| parameter | flags | commands | solvers | default | range | what it does |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in params:
        flags = ", ".join(f"`{f}`" for f in (*p.all_flags, *(a.flag for a in p.aliases)))
        defaults = f"`{p.default!r}`" + "".join(f", {c}: `{v!r}`" for c, v in (*p.command_defaults, *p.solver_defaults))
        lines.append(
            f"| `{p.name}` | {flags} | {', '.join(p.commands)} | {', '.join(p.solvers) or 'all'} | {defaults} "
            f"| {p.expects} | {p.help} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(reference_page(), end="")
