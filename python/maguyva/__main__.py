"""`python -m maguyva` is the `maguyva` command."""

import sys

from maguyva.serve.cli import main

sys.exit(main())
