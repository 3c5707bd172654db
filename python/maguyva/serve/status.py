"""What an index holds and how fresh it is, as the `index_status` answers report it."""

from __future__ import annotations

import datetime
import json
import time
from typing import Any

from maguyva.index.store import shown_path
from maguyva.serve.repository import Repository

#: The skipped files a status names (all are counted by reason).
MAX_SKIPPED_FILES = 50


def repository_status(repository: Repository) -> dict[str, Any]:
    """What is indexed for one repository, how fresh it is, and what was left out."""
    with repository.open() as index:
        reader = index.reader
        meta = reader.meta
        built_at = float(meta.get("built_at", "0"))
        skipped_files = json.loads(meta.get("skipped_files", "[]"))
        embedder = reader.embedder
        languages: dict[str, int] = {}
        for f in reader.files:
            languages[f.language or "text"] = languages.get(f.language or "text", 0) + 1
        refresh = repository.last_refresh
        return {
            "name": repository.name,
            "root": str(repository.root),
            "index_dir": str(repository.index_dir),
            "generation": reader.generation.name,
            "built_at": _iso(built_at),
            "age_seconds": round(max(0.0, time.time() - built_at), 1),
            "files": len(reader.files),
            "chunks": int(meta.get("count_chunks", len(reader.chunk_file))),
            "symbols": int(meta.get("count_symbols", 0)),
            "edges": int(meta.get("count_edges", 0)),
            "languages": dict(sorted(languages.items(), key=lambda item: (-item[1], item[0]))),
            "embedder": f"{embedder['provider']}/{embedder['model']} ({embedder['dims']} bits)",
            "skipped": reader.skipped,
            "skipped_files": [
                {"path": shown_path(p), "reason": reason} for p, reason, _, _ in skipped_files[:MAX_SKIPPED_FILES]
            ],
            "secrets_included": meta.get("include_secrets") == "true",
            "fresh": refresh is not None and refresh.stale_reason is None,
            "last_refresh": None if refresh is None else {**refresh.to_dict(), "checked_at": _iso(refresh.checked_at)},
        }


def _iso(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).isoformat(timespec="seconds")


