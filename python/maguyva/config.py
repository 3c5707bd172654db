"""Numbers that every stage shares: read from here, not defined again where they are used."""

from __future__ import annotations

# BM25's usual constants, for every scorer of words (the text retriever over chunks, the symbol
# table's word index over symbols): k1 sets how fast repeated matches saturate, b how much a
# longer text's matches count less.
BM25_K1 = 1.2
BM25_B = 0.75
