"""Reading LIBSVM/svmlight text and converting it into a block store."""

from blocksvm.io.convert import ConvertSummary, convert
from blocksvm.io.libsvm import iter_parsed, load_libsvm, parse_chunk

__all__ = ["ConvertSummary", "convert", "iter_parsed", "load_libsvm", "parse_chunk"]
