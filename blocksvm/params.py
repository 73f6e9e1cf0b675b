"""Every parameter, declared once: name, default, range, help, command-line flags, and who reads it.

:class:`Param` is the declaration. The parameters every learner reads are in :data:`COMMON`; those some
learners read (``C``, ``loss``, ...) are named constants here that each solver lists in its ``params``
beside its own. The registry fills in which solvers read each one (:func:`blocksvm.train.params.declared`),
and every parameter says which commands read it (``commands``: ``train``, ``stream``, and ``partial_fit``,
the face of :class:`blocksvm.OnlineClassifier`). From these declarations come
:class:`blocksvm.train.TrainParams` and its checks, the flags and ``--help`` of each command, the
parameters of the estimators and the table in docs/PARAMETERS.md; a value nothing reads is refused. The
run options and tune's options (:mod:`blocksvm.run_options`: checkpoints, resume, warm start, history, ...) are
declared the same way. tests/test_params.py fails if any of them disagree.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from blocksvm.aliases import Alias, liblinear_help, liblinear_problem
from blocksvm.losses import LOSSES

# The commands that read parameters: the two that train, and OnlineClassifier's fit and partial_fit.
COMMANDS = ("train", "stream", "partial_fit")


def cores() -> int:
    """The cores this process may run on: its CPU affinity where the system tells it (a container's or taskset's
    share), else the machine's."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def positive(x) -> bool:
    return _is_number(x) and x > 0 and math.isfinite(x)


def non_negative(x) -> bool:
    return _is_number(x) and x >= 0


def count(x) -> bool:
    """An integer >= 1."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= 1


def natural(x) -> bool:
    """An integer >= 0."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def finite(x) -> bool:
    return _is_number(x) and math.isfinite(x)


def boolean(x) -> bool:
    return isinstance(x, bool)


def path(x) -> bool:
    return isinstance(x, (str, os.PathLike))


def data_source(x) -> bool:
    """A path, or a store opened already (anything with ``iter_blocks``)."""
    return path(x) or hasattr(x, "iter_blocks")


# The groups of a command's options in its --help, in order (a parameter's ``group``).
GROUPS = (
    "data",
    "store",
    "problem",
    "search",
    "solver",
    "stopping",
    "parallel",
    "checkpoint",
    "online learners",
    "output",
)


@dataclass(frozen=True)
class Param:
    """One parameter.

    Attributes
    ----------
    name : str
        Python name (``train(..., name=...)``, ``BlockSVC(name=...)``); the flag is ``--name``
        with dashes.
    default : object
    help : str
        One or two sentences: what it does and when to change it.
    check : callable
        ``check(value) -> bool``: is the value in range.
    expects : str
        The range in words, for the error message (``"a positive finite number"``).
    choices : tuple, optional
        The allowed values, when they are a list.
    none_ok : bool
        None is allowed (it disables what the parameter does).
    parse : callable
        Parses the command-line text (``float``, ``int``, ``str``; ``bool``: ``--name`` and ``--no-name``).
    flags : tuple of str
        The command-line spellings, first the main one (default: ``--name`` with dashes).
    aliases : tuple of Alias
        Spellings with their own parser.
    metavar : str, optional
    safe_to_change : bool
        A resumed run may change it: it decides when training stops or what it prints, never
        the path the optimizer takes.
    commands : tuple of str
        The commands that read it (of :data:`COMMANDS`, ``tune`` for its own options and the run options it
        reads, and the other commands of the command line for the options they share with these).
    command_defaults : tuple of (command, value)
        A default of its own for a command (``stream`` learns with the Perceptron by default).
    command_help : tuple of (command, text)
        A help text of its own for a command, where the general one would mislead there.
    many : callable, optional
        The flag may be repeated; ``many(values)`` folds the list of parsed values into the value.
    solver_defaults : tuple of (solver, value)
        A default of its own for a solver (OWL-QN makes hundreds of iterations where Newton makes tens).
    off : callable, optional
        ``off(value)``: the value turns what the parameter does off (a bias <= 0): a learner that ignores the
        parameter (its solver's ``ignores``) accepts it given so.
    group : str
        Where ``--help`` lists it, one of :data:`GROUPS` (empty: ``solver``, or ``online learners`` for a parameter
        only online learners read).
    solvers : tuple of str
        The solvers that read it (empty: every solver), filled in by the registry from the solvers' ``params``.
    """

    name: str
    default: Any
    help: str
    check: Callable[[Any], bool]
    expects: str
    choices: tuple | None = None
    none_ok: bool = False
    parse: Callable[[str], Any] = float
    flags: tuple[str, ...] = ()
    aliases: tuple[Alias, ...] = ()
    metavar: str | None = None
    safe_to_change: bool = False
    commands: tuple[str, ...] = COMMANDS
    command_defaults: tuple[tuple[str, Any], ...] = ()
    command_help: tuple[tuple[str, str], ...] = ()
    many: Callable[[list], Any] | None = None
    solver_defaults: tuple[tuple[str, Any], ...] = ()
    off: Callable[[Any], bool] | None = None
    group: str = ""
    solvers: tuple[str, ...] = ()

    @property
    def all_flags(self) -> tuple[str, ...]:
        return self.flags or ("--" + self.name.replace("_", "-"),)

    @property
    def range(self) -> str:
        """The allowed values in words."""
        return f"one of {', '.join(map(str, self.choices))}" if self.choices else self.expects

    def accepts(self, value) -> bool:
        if value is None:
            return self.none_ok
        if self.choices is not None:
            return value in self.choices
        return self.check(value)

    def default_for(self, command: str, solver: str | None = None):
        """The default of this parameter in ``command`` (and for ``solver``, when it has one of its own)."""
        if solver is not None and solver in dict(self.solver_defaults):
            return dict(self.solver_defaults)[solver]
        return dict(self.command_defaults).get(command, self.default)

    def help_for(self, command: str) -> str:
        """Its help in ``command``, with the default there (and the solvers' own defaults)."""
        default = self.default_for(command)
        others = "".join(f"; {solver}: {value}" for solver, value in self.solver_defaults)
        text = dict(self.command_help).get(command, self.help)
        return text + ("" if default is None or "(default" in text else f" (default {default}{others})")

    @property
    def label(self) -> str:
        """How a message names it on the command line."""
        return self.all_flags[0]


def _cost(text: str) -> float:
    """``-c``/``-C VALUE``: a number; LIBLINEAR's ``-C`` without one (its search of C) is answered with tune."""
    import argparse

    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number, not {text!r} (LIBLINEAR's -C without a number, its search of C, is 'blocksvm tune "
            "STORE'; here -C VALUE is the cost, LIBLINEAR's -c)"
        ) from None


def _class_weight_flag(text: str):
    """One ``-w LABEL=WEIGHT`` (or ``balanced``)."""
    import argparse

    if text == "balanced":
        return text
    label, sep, weight = text.partition("=")
    try:
        if not sep:
            raise ValueError
        return (label, float(weight))
    except ValueError:
        raise argparse.ArgumentTypeError("expected LABEL=WEIGHT or balanced") from None


def _class_weights(flags: list):
    """The repeated ``-w`` flags as one value: ``"balanced"`` or ``{label: weight}``."""
    return "balanced" if "balanced" in flags else dict(flags)


def _labels(text: str) -> tuple[float, ...]:
    """``--classes A,B,...``: labels as numbers."""
    import argparse

    try:
        return tuple(float(label) for label in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError("expected labels separated by commas, e.g. -1,1") from None


def labels(x) -> bool:
    """Two or more distinct numeric labels."""
    return isinstance(x, (tuple, list)) and len(set(x)) == len(x) >= 2 and all(finite(v) for v in x)


# Parameters read by some solvers: each solver lists those it reads in its ``params``.
C = Param(
    "C",
    1.0,
    "Cost of a unit of loss (LIBLINEAR's -c); larger C fits the training data closer and takes more passes "
    "(pa1, pa2: the aggressiveness).",
    positive,
    "a positive finite number",
    parse=_cost,
    flags=("-C", "-c"),
    command_help=(
        (
            "stream",
            "pa1, pa2: the aggressiveness, the largest step a row may take; ogd: the cost of a unit of loss against "
            "the L2 penalty; scw1, scw2: the cost of a row's violation.",
        ),
    ),
    group="problem",
)
LOSS = Param(
    "loss",
    "squared-hinge",
    "hinge (L1-loss SVM, LIBLINEAR -s 3), squared-hinge (L2-loss SVM, -s 1), logistic (logistic regression, "
    "-s 7 or 0), or for regression epsilon-insensitive (L1-loss SVR, -s 13), squared-epsilon-insensitive "
    "(L2-loss SVR, -s 12 or 11); crammer-singer (Crammer and Singer's multiclass SVM, one problem over every class, "
    "-s 4) and one-class (the one-class SVM, --nu, labels unread, -s 21) are problems of their own, each solved by "
    "the solver of its name, which the loss chooses.",
    None,
    f"one of {', '.join(LOSSES)}",
    choices=tuple(LOSSES),
    parse=str,
    aliases=(Alias("-s", liblinear_problem, "CODE", liblinear_help),),
    command_help=(
        ("stream", "The loss the learners that read it minimize (ogd, ftrl, fobos): hinge, squared-hinge or logistic."),
        (
            "tune",
            "hinge (L1-loss SVM, LIBLINEAR -s 3), squared-hinge (L2-loss SVM, -s 1), logistic (logistic regression, "
            "-s 7 or 0), or for regression epsilon-insensitive (L1-loss SVR, -s 13), squared-epsilon-insensitive "
            "(L2-loss SVR, -s 12 or 11).",
        ),
    ),
    group="problem",
)
PENALTY = Param(
    "penalty",
    "l2",
    "The penalty of the weights beside the loss: l2 (1/2 ||w||^2, LIBLINEAR's L2R problems), l1 (||w||_1, LIBLINEAR's "
    "-s 5 and 6: a sparse model, stored by its nonzero weights) or elasticnet (l1_ratio ||w||_1 + (1 - l1_ratio)/2 "
    "||w||^2); the bias feature's weight is penalized too, as LIBLINEAR does. Without --solver, l1 chooses "
    "LIBLINEAR's coordinate descent over the store's columns (cdn for squared-hinge, glmnet for logistic) and "
    "elasticnet owl-qn.",
    None,
    "one of l2, l1, elasticnet",
    choices=("l2", "l1", "elasticnet"),
    parse=str,
    commands=("train",),
    group="problem",
)
L1_RATIO = Param(
    "l1_ratio",
    0.5,
    "The weight of the L1 term of --penalty elasticnet (its L2 term's: 1 - l1_ratio), scikit-learn's l1_ratio.",
    lambda x: _is_number(x) and 0 < x < 1,
    "a number in (0, 1)",
    commands=("train",),
    group="problem",
)
TOL = Param(
    "tol",
    None,
    "Stop when the relative duality gap (P - D) / P is at most this (confirmed by an exact evaluation pass); "
    "0 disables the rule. None: 1e-3 (one-class: 1e-6, as its decisions w.x - rho are differences of large numbers: "
    "at 1e-3, 0.3-0.6% of a9a's rows fall on the other side of the optimum's boundary than LIBLINEAR's -s 21 puts "
    "them), or, with --eps given, off: -e alone stops the run, as in LIBLINEAR (give both for either rule to stop "
    "it). -s 1, 3, 4, 7, 12 and 13 set LIBLINEAR's -e 0.1, so that they stop as LIBLINEAR does; without -s, "
    "this 1e-3 can end several times further from the optimum than LIBLINEAR's default for the hinge losses, "
    "thousands of times for the logistic loss (docs/BENCHMARKS.md).",
    non_negative,
    "a number >= 0 or None",
    none_ok=True,
    safe_to_change=True,
    commands=("train",),
    solver_defaults=(("one-class", 1e-6),),
    group="stopping",
)
EPS = Param(
    "eps",
    None,
    "LIBLINEAR's -e. dual-cd: stop when the projected-gradient violation over a pass is at most this: max PG - min "
    "PG (LIBLINEAR's rule for -s 1 and 3; for -s 7 LIBLINEAR bounds max |PG|, which ends sooner on a9a and w8a), and "
    "for the regression losses LIBLINEAR's rule of -s 12 and 13, the sum of |PG| over the rows relative to the first "
    "pass's "
    "(given without --tol, the duality gap rule is off: -e alone stops the run, as in LIBLINEAR); None disables the "
    "rule, but -s 1, 3, 7, 12 and 13 set LIBLINEAR's 0.1. "
    "newton: stop when ||grad f(w)|| <= eps ||grad f(0)|| (classification: times "
    "max(min(#pos, #neg), 1) / #rows, as LIBLINEAR's -s 0 and 2); None: LIBLINEAR's default, 0.01 (0.0001 for "
    "regression, -s 11). cdn, glmnet, owl-qn: stop when the 1-norm of the minimum-norm subgradient is at most eps "
    "times its value at the start (owl-qn: at w = 0), times max(min(#pos, #neg), 1) / #rows, as LIBLINEAR's -s 5 and "
    "6; None: their default, 0.01. "
    "crammer-singer, one-class: stop when LIBLINEAR's violation over a pass (-s 4: the largest of a row's; -s 21: "
    "max -G over alpha < 1 less min -G over alpha > 0) is at most this (without --tol, alone, as for dual-cd); None "
    "disables the rule, but -s 4 sets LIBLINEAR's 0.1.",
    positive,
    "a positive number or None",
    none_ok=True,
    flags=("--eps", "-e"),
    safe_to_change=True,
    commands=("train",),
    group="stopping",
)
AVERAGE = Param(
    "average",
    True,
    "Return the mean of the iterates, not the last (Pegasos: block ends from the second pass on; ogd: every "
    "step, the online-to-batch average; Perceptron, PA, CW, AROW: every row, the averaged Perceptron's mean). "
    "The default since measurements (docs/TUNING.md, Defaults): the last iterate of these learners can fall "
    "below the majority class after any number of passes.",
    boolean,
    "True or False",
    parse=bool,
    group="online learners",
)
L1 = Param(
    "l1",
    0.0,
    "The L1 strength lambda1 of the sparse online learners (> 0: weights exactly zero; the SVMs' and logistic "
    "regression's L1 problem is --penalty l1). ftrl: against the sum of the losses (McMahan et al.'s lambda1: it "
    "grows with the rows, e.g. 10 to 300 for 10^4 to 10^5 rows); fobos: against the mean loss, each step shrinks by "
    "eta_t lambda1 (e.g. 1e-4 to 1e-2).",
    non_negative,
    "a number >= 0",
    flags=("--lambda1",),
    metavar="LAMBDA1",
    group="online learners",
)

THREADS = Param(
    "threads",
    1,
    "Threads working at once. dual-cd: one-vs-rest problems a thread each (the same model, bit for bit); one "
    "problem's rows in shares, each thread on its own replica of w, the replicas' steps added and scaled by the "
    "dual's line search after every sweep. newton, owl-qn: each thread sums a share of a block's pieces into its own "
    "vectors (the same model, bit for bit). cdn, glmnet: the pieces of --column-pieces a thread each, and glmnet's "
    "gradient over its features on the threads left (the same model for any number of threads). docs/PARALLEL.md. 1 "
    "is the serial trainer.",
    count,
    "an integer >= 1",
    parse=int,
    metavar="T",
    group="parallel",
)
WORKERS = Param(
    "workers",
    None,
    "Shards worked on at once, on threads of this process or one per worker of a dask cluster (--scheduler). "
    "newton, owl-qn: shards of the blocks, each summing its blocks' share of a pass (the serial model, bit for bit). "
    "cdn, glmnet: the pieces of --column-pieces run on max(--threads, --workers) threads, or kept on the cluster's "
    "workers (the model depends on the pieces only). dual-cd: shards of the blocks in CoCoA+ rounds (more passes than "
    "the serial run: for data spread over machines). Given without --solver, shards choose newton where the loss "
    "allows it (squared-hinge, logistic, squared-epsilon-insensitive). docs/PARALLEL.md. None: 1, or with a cluster, "
    "one per worker. 1 is the serial trainer.",
    count,
    "an integer >= 1 or None",
    none_ok=True,
    parse=int,
    metavar="K",
    group="parallel",
)
CACHE_MB = Param(
    "cache_mb",
    None,
    "Megabytes of the support-vector cache of --working-set cache (rows solved with every block), taken out of "
    "--memory-mb (None: 64). The pass learners keep the store or its columns within --memory-mb.",
    positive,
    "a positive number of megabytes or None",
    none_ok=True,
    metavar="MB",
    group="data",
)
MEMORY_MB = Param(
    "memory_mb",
    None,
    "Megabytes of memory for the whole process (its first line says how they are spent): the runtime (250 MB), the "
    "learner's arrays and the blocks in flight come off first, and what is left keeps data in memory: decoded blocks "
    "kept across passes (dual CD, Pegasos, Crammer-Singer, one-class: as many as fit, the others read again at every "
    "pass; newton, owl-qn: the whole store when it fits), or the store's columns (cdn, glmnet). Below what the "
    "process needs before any data: refused, naming the smallest that works. More memory never makes a run slower. "
    "None: half of the memory available when the run starts. A resumed run keeps the plan it started with.",
    positive,
    "a positive number of megabytes or None",
    none_ok=True,
    metavar="MB",
    safe_to_change=True,
    commands=("train",),
    group="data",
)

COLUMN_PIECES = Param(
    "column_pieces",
    1,
    "cdn, glmnet: the features in P pieces solved side by side, each by coordinate descent with its own copy of the "
    "per-row vectors, their changes added (block Jacobi, as d-GLMNET): threads and workers share the pieces, and the "
    "model depends on P, never on --threads or --workers. 1: LIBLINEAR's own algorithm (its coordinate descent on "
    "one thread, the gradient on --threads); more pieces take more passes (docs/ALGORITHMS.md).",
    count,
    "an integer >= 1",
    parse=int,
    metavar="P",
    commands=("train",),
)

WORKING_SETS = ("cache", "pair", "block")
WORKING_SET = Param(
    "working_set",
    None,
    "Rows solved together with each loaded block: none (block: with one inner pass, every row swept once a pass, the "
    "rows kept in memory and the blocks streamed in one random order), a cache of support vectors kept from earlier "
    "blocks (cache: selective block minimization, Chang & Roth 2011), or the block visited before it (pair). "
    "docs/ALGORITHMS.md compares them. None: the learner's own (dual-cd: block with one inner pass, in this process; "
    "cache on shards, or with more inner passes).",
    None,
    "one of cache, pair, block, or None",
    none_ok=True,
    choices=WORKING_SETS,
    parse=str,
    solver_defaults=(("crammer-singer", "cache"), ("one-class", "cache")),
    group="solver",
)
INNER_PASSES = Param(
    "inner_passes",
    None,
    "Passes of dual CD over its working set per visit at most (one-class: iterations of its two-level method). With "
    "one, LIBLINEAR's shrinking carries from pass to pass as in LIBLINEAR's own loop; with more, each visit starts "
    "it afresh. None: the learner's own (dual-cd: 1 with the block working set, in this process, where the budget "
    "keeps a tenth of the rows; else 5). dual-cd given 1 where the budget keeps less: no rows kept, the blocks read "
    "from disk swept two at a time, paired afresh every pass (docs/ALGORITHMS.md).",
    count,
    "an integer >= 1 or None",
    none_ok=True,
    parse=int,
    solver_defaults=(("crammer-singer", 5), ("one-class", 5)),
)
INNER_EPS = Param(
    "inner_eps",
    0.0,
    "Inner early stop: a visit ends after a pass whose PG violation is at most this "
    "(0: always make inner_passes passes).",
    non_negative,
    "a number >= 0",
)
EPSILON = Param(
    "epsilon",
    0.1,
    "Support vector regression's epsilon (LIBLINEAR's -p): residuals within it cost nothing.",
    non_negative,
    "a number >= 0",
    flags=("--epsilon", "-p"),
    group="problem",
)

# Parameters every learner reads (those of some learners are listed in their ``params``), in the docs' order.
COMMON: tuple[Param, ...] = (
    C,
    LOSS,
    Param(
        "solver",
        "dual-cd",
        "The learner (docs/ALGORITHMS.md): dual-cd (dual coordinate descent over the store's blocks, with a duality "
        "gap; LIBLINEAR's -s 1, 3, 7, 12, 13), newton (LIBLINEAR's primal Newton method, -s 0, 2, 11), owl-qn (the "
        "elastic net, and the L1 penalty over rows), cdn and glmnet (the L1 penalty over the store's columns, -s 5 "
        "and 6), crammer-singer (-s 4), one-class (-s 21), pegasos (primal stochastic steps, no gap), and the online "
        "learners, perceptron, pa, pa1, pa2, cw, arow, ogd, ftrl, fobos, scw1 and scw2, which also learn in one pass "
        "from text ('blocksvm stream') and from arrays (OnlineClassifier).",
        None,
        "a solver of blocksvm.solvers.registry (--help lists them)",
        parse=str,
        command_defaults=(("stream", "perceptron"), ("partial_fit", "perceptron")),
        command_help=(
            (
                "stream",
                "The online learner: perceptron, pa, pa1, pa2, cw, arow, ogd, ftrl, fobos, scw1 or scw2 "
                "(docs/ALGORITHMS.md).",
            ),
            ("tune", "The solver tune warm-starts along C: dual-cd, newton, owl-qn, cdn or glmnet."),
        ),
        group="solver",
    ),
    Param(
        "bias",
        1.0,
        "Value of the constant bias feature appended to every row (LIBLINEAR's -B), its weight the model's intercept, "
        "penalized as the other weights (as LIBLINEAR and scikit-learn's LinearSVC do); <= 0: no bias term. The "
        "default, 1, is scikit-learn's intercept; LIBLINEAR's is -1 (no bias): give -B -1 to compare objectives with "
        "LIBLINEAR's or to warm-start from a LIBLINEAR model trained without one.",
        finite,
        "a finite number (<= 0: no bias)",
        flags=("--bias", "-B"),
        command_help=(
            (
                "tune",
                "Value of the constant bias feature appended to every row (LIBLINEAR's -B), its weight the model's "
                "intercept, penalized as the other weights (as LIBLINEAR and scikit-learn's LinearSVC do); <= 0: no "
                "bias term. The default, 1, is scikit-learn's intercept; LIBLINEAR's is -1 (no bias).",
            ),
        ),
        off=lambda x: x <= 0,
        group="problem",
    ),
    TOL,
    EPS,
    Param(
        "max_outer",
        50,
        "Outer iterations (passes over the store) at most (dual-cd: a sweep each, 1,000 at most, where LIBLINEAR's "
        "dual solvers stop at 300 iterations and its -s 1, 7 and 12 then go on with its primal Newton method; "
        "crammer-singer: its visits' sweeps each, as many as LIBLINEAR's -s 4 needs at its -e on a9a, 820; newton, "
        "owl-qn, cdn, glmnet: their iterations, a pass or more each).",
        count,
        "an integer >= 1",
        parse=int,
        safe_to_change=True,
        commands=("train", "partial_fit"),
        solver_defaults=(("dual-cd", 1000), ("crammer-singer", 1000), ("owl-qn", 500), ("cdn", 1000), ("glmnet", 100)),
        group="stopping",
    ),
    AVERAGE,
    L1,
    MEMORY_MB,
    Param(
        "order",
        "random",
        "Visit blocks and rows in a fresh random order each pass (random), or as stored (file: with a store "
        "converted --no-shuffle, the rows of the text file in order, as online learners and their textbook results "
        "assume).",
        None,
        "one of random, file",
        choices=("random", "file"),
        parse=str,
        commands=("train", "partial_fit"),
        command_help=(
            (
                "tune",
                "Visit blocks and rows in a fresh random order each pass (random), or as stored (file: with a store "
                "converted --no-shuffle, the rows of the text file in order).",
            ),
        ),
        group="data",
    ),
    Param(
        "class_weight",
        None,
        "Multiplier of C per class label (LIBLINEAR's -wi), or 'balanced': n_rows / (n_classes * count) for each "
        "class. Command line: -w LABEL=WEIGHT, repeatable.",
        None,
        "a dict, 'balanced' or None",
        none_ok=True,
        parse=_class_weight_flag,
        flags=("--class-weight", "-w"),
        metavar="LABEL=WEIGHT",
        many=_class_weights,
        group="problem",
    ),
    Param(
        "classes",
        None,
        "The labels of the stream, declared before its first row (as partial_fit's classes): every label's "
        "problem learns from the first row on. Without it a label's problem starts at the label's first row.",
        labels,
        "two or more distinct numbers, or None",
        none_ok=True,
        parse=_labels,
        metavar="A,B,...",
        commands=("stream",),
        group="problem",
    ),
    Param(
        "seed",
        0,
        "Seed of the block order and of the row order within blocks (the estimators' random_state).",
        natural,
        "an integer >= 0",
        parse=int,
        commands=("train", "partial_fit"),
        group="solver",
    ),
    Param(
        "time_limit",
        None,
        "Seconds of wall-clock time; training stops at the next block boundary after it (a checkpoint, if any, "
        "lets it resume).",
        positive,
        "a positive number of seconds or None",
        none_ok=True,
        metavar="SECONDS",
        safe_to_change=True,
        commands=("train",),
        group="stopping",
    ),
    Param(
        "eval_every",
        0,
        "Make an exact evaluation pass (objective at a fixed w) every this many outer iterations; 0: only to "
        "confirm the gap rule.",
        natural,
        "an integer >= 0",
        parse=int,
        metavar="K",
        safe_to_change=True,
        commands=("train",),
        group="stopping",
    ),
    Param(
        "prefetch",
        1,
        "Blocks read ahead of the one being trained on, each by a thread of its own (0: read in the training "
        "thread); each is a block more in memory.",
        natural,
        "an integer >= 0",
        parse=int,
        safe_to_change=True,
        commands=("train",),
        group="data",
    ),
    Param(
        "read_threads",
        None,
        "Threads decoding the chunks of the blocks being read, outside HDF5's lock (docs/FORMAT.md, Reading). "
        "None: one a core.",
        count,
        "an integer >= 1 or None",
        none_ok=True,
        parse=int,
        metavar="T",
        safe_to_change=True,
        commands=("train",),
        group="data",
    ),
)


# Parameters the estimators name as scikit-learn does (BlockSVCCV's folds and C grid: LogisticRegressionCV's names).
ESTIMATOR_NAMES = {"seed": "random_state", "threads": "n_jobs", "folds": "cv", "C_grid": "Cs"}
