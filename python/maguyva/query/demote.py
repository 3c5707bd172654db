"""Which paths rank lower: code that is vendored, built, archived, minified or generated.

Such files match queries as well as the project's own code but are rarely what the question is
about, so fusion multiplies their chunks' scores by DEMOTION instead of dropping them: a
question only they can answer still gets an answer.
"""

from __future__ import annotations

import re

DEMOTION = 0.5

_DEMOTED_FOLDERS = frozenset(
    {
        "vendor", "vendors", "third_party", "third-party", "thirdparty", "node_modules",
        "bower_components", "build", "dist", "target", "out", "archive", "archives",
        "generated", "gen", "__generated__",
    }
)
_DEMOTED_NAMES = re.compile(
    r"""(\.min\.(js|css|mjs)$)|(\.(js|css)\.map$)|(_pb2(_grpc)?\.pyi?$)|(\.pb(\.gw)?\.go$)
    |(\.pb\.(h|cc)$)|(\.g\.dart$)|(\.(generated|gen)\.\w+$)|(_generated\.\w+$)|(\.designer\.cs$)
    |(\.(tar|tgz|zip|jar|whl)$)|(^(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|poetry\.lock)$)""",
    re.VERBOSE,
)


def path_demotion(path: str) -> float:
    """DEMOTION for a demoted path (relative, '/'-separated), else 1."""
    *folders, name = path.split("/")
    if any(folder.lower() in _DEMOTED_FOLDERS for folder in folders):
        return DEMOTION
    return DEMOTION if _DEMOTED_NAMES.search(name) else 1.0
