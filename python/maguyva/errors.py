"""Every error a user of maguyva can meet, in one family.

Each is a `MaguyvaError`, whose message is one sentence saying what went wrong and, where there
is one, what to do; a caller that reports errors catches `MaguyvaError` (and `OSError`, for the
file system's own). Each class also keeps the built-in base a caller would expect of it
(`ValueError` for a bad argument, `FileNotFoundError` for a missing index, `OSError` for a
failed write), so code written against those keeps working. The compiled core raises
`CorruptIndexError` from here (it is `maguyva._core.CorruptIndexError` too); the index loader
reports it as an `IndexFormatError`, with the remedy.

This module imports nothing of maguyva: every stage may raise these errors.
"""

from __future__ import annotations


class MaguyvaError(Exception):
    """An error maguyva reports to its user, in one sentence."""


# -- the command line and the surfaces ------------------------------------------------------------


class UsageError(MaguyvaError):
    """A mistake in the command line, reported as one line."""


class RequestError(MaguyvaError, ValueError):
    """A question that cannot be answered as asked (one sentence saying why)."""


class UnknownRepositoryError(RequestError):
    """The question names a repository the corpus does not hold."""


class OutsideRootsError(RequestError):
    """The question names a path outside every repository of the corpus."""


class CloneError(RequestError):
    """A repository given by URL could not be cloned or brought up to date (git missing, the
    network or the repository unreachable)."""


class NotIndexedError(RequestError):
    """The question names a file (or line) the index does not hold."""


class ToolInputError(RequestError):
    """Arguments that do not fit an agent tool's input schema."""


# -- questions ----------------------------------------------------------------------------------


class QueryError(MaguyvaError, ValueError):
    """A question that cannot be asked: empty, with a bad option or result count."""


class QueryTooLongError(QueryError):
    """A query longer than the query length limit, refused before any work."""


class RankModelError(MaguyvaError, ValueError):
    """A ranking model file that cannot be used: unreadable, or trained for other features."""


# -- embedding ------------------------------------------------------------------------------------


class EmbeddingError(MaguyvaError, RuntimeError):
    """An embedder could not produce codes (a provider error, a bad model file, bad options)."""


class EmbeddingOptionError(EmbeddingError, ValueError):
    """An embedder asked for by a name or with options it does not have."""


class EmbeddingCacheError(MaguyvaError, RuntimeError):
    """The embedding cache file cannot be used (and could not be replaced)."""


# -- the index on disk ----------------------------------------------------------------------------


class IndexStoreError(MaguyvaError):
    """Base of the errors about an index on disk."""


class IndexNotFoundError(IndexStoreError, FileNotFoundError):
    """There is no index where one was expected."""


class IndexFormatError(IndexStoreError):
    """An index exists but cannot be read: another format version, or damaged files."""

    def __init__(self, problem: str, remedy: str = "`maguyva index` rebuilds it"):
        super().__init__(f"{problem}; {remedy}" if remedy else problem)
        #: What is wrong, without the remedy (a build that repairs it says what it repaired).
        self.problem = problem


class CorruptIndexError(IndexStoreError, ValueError):
    """A saved trigram index is damaged, truncated or of an unsupported format version."""


class IndexLockedError(IndexStoreError):
    """Another process is building this index."""


class IndexWriteError(IndexStoreError, OSError):
    """A build could not write its new generation (disk full, read-only folder...); the
    published index is unchanged."""


# -- a distributed corpus ------------------------------------------------------------------------


class ShardError(MaguyvaError):
    """No shard of a distributed corpus could answer: why the first one could not."""
