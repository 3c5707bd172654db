"""The build side of maguyva: walk a repository, read it, index it, keep the index on disk."""
