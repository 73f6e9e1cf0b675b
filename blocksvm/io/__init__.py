"""Reading LIBSVM/svmlight text and converting it (or arrays, matrices and chunks of them) into a block store."""

from blocksvm.io.convert import ConvertSummary, convert, write_store
from blocksvm.io.libsvm import iter_parsed, load_libsvm, parse_chunk

__all__ = ["ConvertSummary", "convert", "iter_parsed", "load_libsvm", "parse_chunk", "write_columns", "write_store"]


def __getattr__(name: str):
    """``write_columns``, imported on first use (a conversion without columns never needs the column layout)."""
    if name == "write_columns":
        from blocksvm.store.columns import write_columns

        return write_columns
    raise AttributeError(f"module 'blocksvm.io' has no attribute {name!r}")
