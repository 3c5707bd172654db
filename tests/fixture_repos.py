"""Small repositories written for the tests of the agent surface (repository, corpus, MCP)."""

from __future__ import annotations

import os
import time
from pathlib import Path

#: A small Python service: definitions, calls, imports, a literal, docs and a binary file.
SHOP = {
    "app/__init__.py": "",
    "app/config.py": (
        "def parse_config(path):\n"
        '    """Read the configuration file at path into settings."""\n'
        "    with open(path) as handle:\n"
        "        return load_settings(handle.read())\n"
        "\n"
        "\n"
        "def load_settings(text):\n"
        '    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)\n'
    ),
    "app/server.py": (
        "from app.config import parse_config\n"
        "\n"
        "\n"
        "class Server:\n"
        '    """A server configured from a file."""\n'
        "\n"
        "    def __init__(self, path):\n"
        "        self.settings = parse_config(path)\n"
        "\n"
        "    def start(self):\n"
        "        raise ConnectionError(\"ECONNREFUSED while starting\")\n"
    ),
    "app/retry.py": (
        "from app.server import Server\n"
        "\n"
        "\n"
        "def retry_start(path, attempts=3):\n"
        '    """Start the server, retrying when the connection is refused."""\n'
        "    for _ in range(attempts):\n"
        "        try:\n"
        "            return Server(path).start()\n"
        "        except ConnectionError:\n"
        "            continue\n"
    ),
    "app/cli.py": (
        "from app.retry import retry_start\n"
        "\n"
        "\n"
        "def main(argv):\n"
        "    return retry_start(argv[0])\n"
    ),
    "docs/notes.md": "Configuration is parsed by parse_config; start-up is retried by retry_start.\n",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00binary",
}

#: A second, unrelated service in another language.
TOOLS = {
    "lib/cache.js": (
        "// An in-memory cache with expiry.\n"
        "function createCache(ttl) {\n"
        "  const entries = new Map();\n"
        "  return { get: (key) => entries.get(key), set: (key, value) => entries.set(key, value) };\n"
        "}\n"
        "\n"
        "function Parse_Config(text) {\n"
        "  return JSON.parse(text);\n"
        "}\n"
        "\n"
        "module.exports = { createCache, Parse_Config };\n"
    ),
    "lib/index.js": (
        "const { createCache, Parse_Config } = require('./cache');\n"
        "\n"
        "function boot(text) {\n"
        "  return createCache(Parse_Config(text).ttl);\n"
        "}\n"
        "\n"
        "module.exports = { boot };\n"
    ),
}

#: An mtime safely in the past, so stat comparison alone is trusted for fixture files.
OLD_MTIME_NS = time.time_ns() - 3600 * 10**9


def write_tree(root: Path, files: dict[str, str | bytes], *, old: bool = True) -> Path:
    """Write `files` under `root` (mtimes in the past unless `old` is false); return `root`."""
    for rel, content in files.items():
        write_file(root, rel, content, old=old)
    return root


def write_file(root: Path, rel: str, content: str | bytes, *, old: bool = False) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    if old:
        os.utime(path, ns=(OLD_MTIME_NS, OLD_MTIME_NS))
    return path
