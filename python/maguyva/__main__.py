"""`python -m maguyva` is the `maguyva` command."""

import sys

from maguyva.cli import main

sys.exit(main())
