"""Reading LIBSVM/svmlight text and converting it (or arrays, matrices and chunks of them) into a block store."""

from blocksvm.io.convert import ConvertSummary, convert, write_store
from blocksvm.io.libsvm import iter_parsed, load_libsvm, parse_chunk
from blocksvm.store.columns import write_columns

__all__ = ["ConvertSummary", "convert", "iter_parsed", "load_libsvm", "parse_chunk", "write_columns", "write_store"]
