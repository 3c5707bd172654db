"""The ranking after fusion: how the fused candidates of a question answered with places to read
are ordered, one result per file.

- `signals`: the hand-set post-fusion signals (a definition of a named symbol, path and file-name
  agreement, file coherence and agreement, the demotion of files by their roles), each an
  adjustment of the fused score; selectable as the "hand" ranking, and the source of the
  features.
- `learned`: the same signals and more as named features of each candidate, weighed by the
  linear model shipped as `ranker.json` (trained with repository folds by benches/ranker.py); the
  default ("learned") ranking.
- `stage`: the stage behind one protocol (`Ranking`), as the searcher runs it: `HandSetRanking`
  or `LearnedRanking` (the signals, then the model's scores, the chunk each file shows, and each
  result's explanation).

The package's names are the learned ranking's (`maguyva.query.rank.learned`), so
`rank.features(...)` and `rank.shipped_model()` read as the stage they are.
"""

from maguyva.query.rank.learned import (
    CHUNK_EVIDENCE,
    FEATURES,
    FEATURES_VERSION,
    GROUPS,
    DefinedNames,
    FileFacts,
    Listed,
    RankModel,
    chunk_evidence,
    chunk_ids,
    code_coverages,
    deep_path_shares,
    deep_path_words,
    defined_name_words,
    defined_names,
    features,
    file_facts,
    group_of,
    hand_weights,
    listed,
    rows_of_shown_files,
    score_unit,
    shipped_model,
    symbol_agreements,
)

__all__ = [
    "CHUNK_EVIDENCE",
    "DEEP_FOLDERS",
    "DefinedNames",
    "FEATURES",
    "FEATURES_VERSION",
    "FileFacts",
    "GROUPS",
    "Listed",
    "RankModel",
    "chunk_evidence",
    "chunk_ids",
    "code_coverages",
    "deep_path_shares",
    "deep_path_words",
    "defined_name_words",
    "defined_names",
    "features",
    "file_facts",
    "group_of",
    "hand_weights",
    "listed",
    "rows_of_shown_files",
    "score_unit",
    "shipped_model",
    "symbol_agreements",
]
