"""The commands on models: ``predict`` (a store or text through a model), ``export`` (LIBLINEAR's model text) and
``plot`` (a training history)."""

from __future__ import annotations

from blocksvm.cli.data import is_model_file
from blocksvm.cli.options import EXIT_OK, Positional, command, option
from blocksvm.errors import ParameterError, refuse_writing_over


def _predict_options() -> tuple:
    from blocksvm.aliases import Alias
    from blocksvm.run_options import RUN_OPTIONS

    text = {p.name: p for p in RUN_OPTIONS if "predict" in p.commands}  # shared with convert and stream
    return (
        option(
            "output", "File for one prediction per row, in the rows' order", flags=("--output", "-o"), group="output"
        ),
        option("decision_values", "Also write each row's decision values", bool, group="output"),
        option(
            "probability",
            "Write each class's probability after the label, under a 'labels' line (logistic regression models)",
            bool,
            aliases=(Alias("-b", _zero_or_one, "0|1", lambda offered: "LIBLINEAR's -b 1: --probability"),),
            group="output",
        ),
        text["strict"],
        text["text_format"],
        text["hash_bits"],
        text["hash_all"],
        text["skip_bad_lines"],
    )


def _zero_or_one(text: str) -> bool:
    import argparse

    if text not in ("0", "1"):
        raise argparse.ArgumentTypeError(f"expected 0 or 1, not {text!r}")
    return text == "1"


@command(
    "predict",
    "predict a store or a text file (LIBSVM's, or VW's for a model trained on VW text) with a model, blocksvm's or "
    "LIBLINEAR's",
    positionals=(
        Positional("model", "the model file (blocksvm's, or LIBLINEAR's model text)"),
        Positional("input", "a block store, or text: LIBSVM's (.gz/.bz2/.xz too), or VW's for a model of VW text"),
        Positional(
            "output_file",
            "file for one prediction per row, as --output; LIBLINEAR's order (predict INPUT MODEL OUTPUT) works too",
            metavar="output",
            optional=True,
        ),
    ),
    options=_predict_options,
    offers=lambda: {"-b": (0, 1)},
    json="print the summary as JSON",
)
def predict_command(out, model: str, input: str, output_file: str | None = None, **options) -> int:
    from blocksvm.predict import predict

    if "alias_b" in options:  # -b 0|1, unless --probability was given too
        options.setdefault("probability", options.pop("alias_b"))
    if output_file:
        if options.get("output"):
            raise ParameterError("give the output file once: as the third word or as --output, not both")
        options["output"] = output_file
    if not is_model_file(model) and is_model_file(input):  # LIBLINEAR's predict test_file model_file output_file
        model, input = input, model
    with out.warnings_said():  # features or labels outside the model's: one line each
        summary = predict(model, input, options.pop("output", None), progress=out.progress, **options)
    return out.report(summary)


@command(
    "export",
    "write a blocksvm model as LIBLINEAR's model text (its predict and train -i read it)",
    positionals=(Positional("model", "the blocksvm model file"), Positional("output", "the file to write")),
    options=lambda: (
        option("format", "The format to write: liblinear, LIBLINEAR's model text", choices=("liblinear",)),
    ),
)
def export_command(out, model: str, output: str, format: str = "liblinear") -> int:
    from blocksvm.liblinear_format import write_liblinear_model
    from blocksvm.model import LinearModel

    if format != "liblinear":
        raise ParameterError(f"export writes --format liblinear, not {format}")
    refuse_writing_over({"the LIBLINEAR model": output}, {"the model": model})
    loaded = LinearModel.load(model)
    path = write_liblinear_model(loaded, output)
    dense = ""
    if loaded.feature_map is not None:
        dense = f", dense: {loaded.n_features:,} features used of {loaded.space_features:,}"
    out.tell(f"wrote {path} (LIBLINEAR model format, {path.stat().st_size / 1e6:,.1f} MB{dense})")
    return EXIT_OK


@command(
    "plot",
    "draw a training history (objective, gap, accuracy per pass) to a PNG (the [plot] extra: matplotlib)",
    positionals=(Positional("history", "the JSON-lines history 'blocksvm train' writes (MODEL.history.jsonl)"),),
    options=lambda: (
        option("output", "The PNG file to write (default HISTORY.png)", flags=("--output", "-o")),
        option("title", "The figure's title"),
    ),
)
def plot_command(out, history: str, output: str | None = None, title: str | None = None) -> int:
    from blocksvm.plot import plot_history

    output = output or f"{history}.png"
    refuse_writing_over({"the plot": output}, {"the history": history})
    path = plot_history(history, output, title=title)
    out.tell(f"wrote {path}")
    return EXIT_OK
