"""Fusion of several rankings (maguyva.query.fuse.fuse_rankings): places come from ranks alone,
whatever a list's size or scale, and ties go to the higher score, then to the earlier list."""

from __future__ import annotations

from maguyva.query.fuse import fuse_rankings


def test_equal_ranks_tie_and_the_higher_score_wins():
    # Rank 0 of both lists first (0.9 over 0.8), then rank 1 (0.7 over 0.5).
    assert fuse_rankings([[0.9, 0.5], [0.8, 0.7]], 40.0, 4) == [(0, 0), (1, 0), (1, 1), (0, 1)]


def test_a_long_list_does_not_push_a_short_one_out():
    long = [100.0 - i for i in range(50)]
    assert fuse_rankings([long, [0.01]], 40.0, 3) == [(0, 0), (1, 0), (0, 1)]


def test_equal_scores_go_to_the_earlier_list_and_keep_is_the_cut():
    assert fuse_rankings([[1.0], [1.0], [1.0]], 60.0, 2) == [(0, 0), (1, 0)]
    assert fuse_rankings([[], []], 60.0, 5) == []
