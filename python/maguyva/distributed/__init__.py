"""A corpus indexed and served on a Ray cluster (the `maguyva[ray]` extra).

    from maguyva.distributed import RayCorpus
    with RayCorpus.build(["path/a", "path/b"], address=None) as corpus:
        corpus.search("how are retries scheduled", top_k=10)
"""

from maguyva.distributed.corpus import DEFAULT_DEADLINE, RayCorpus
from maguyva.distributed.shards import MAX_SHARD_FILES, Shard

__all__ = ["DEFAULT_DEADLINE", "MAX_SHARD_FILES", "RayCorpus", "Shard"]
