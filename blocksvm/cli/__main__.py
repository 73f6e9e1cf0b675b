"""``python -m blocksvm.cli``: the ``blocksvm`` command."""

import sys

from blocksvm.cli.entry import main

sys.exit(main())
