"""Property tests draw the same examples on every run ("repeatable"), so a result of CI never
depends on luck; `MAGUYVA_HYPOTHESIS=explore` draws new ones, to look for faults (then fix them,
and keep the example as a test)."""

import os

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("MAGUYVA_HYPOTHESIS", "repeatable"))
