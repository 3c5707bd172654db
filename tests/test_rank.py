"""The rank stage: candidates as named features, weighed by a linear model."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_rerank import index_fixture

from maguyva import Index, config
from maguyva.errors import RankModelError
from maguyva.query import rank
from maguyva.query.classify import classify as response_classification
from maguyva.query.rank import FEATURES, GROUPS, RankModel
from maguyva.query.search import Searcher

FILES = {
    "billing/invoice.py": '''\
        class Invoice:
            """A bill sent to a customer, with its lines and the tax owed."""

            def total(self):
                return sum(line.amount for line in self.lines) + self.tax()

            def tax(self):
                return sum(line.amount * line.rate for line in self.lines)
        ''',
    "billing/reminders.py": '''\
        from billing.invoice import Invoice

        def overdue(invoices, today):
            """Invoices past their due date that are not paid."""
            return [i for i in invoices if i.due < today and not i.paid]
        ''',
    "web/pages.py": '''\
        from billing.invoice import Invoice

        def invoice_page(request):
            return render(Invoice.load(request.id).total())
        ''',
    "tests/test_invoice.py": '''\
        from billing.invoice import Invoice

        def test_invoice_total_adds_tax():
            assert Invoice(lines=[Line(10, 0.5)]).total() == 15
        ''',
    "docs/invoices.md": "# Invoices\n\nAn invoice's total adds the tax of every line.\n",
    "billing/__init__.py": "from billing.invoice import Invoice\nfrom billing.reminders import overdue\n",
}

index = index_fixture("index", FILES)

#: One module of several definitions, each long enough to be a chunk of its own.
_BODY = "".join(f"    step_{i} = value * {i} + offset\n" for i in range(18))
SHAPES = {
    "geometry/shapes.py": "".join(
        f"def {name}(value, offset):\n    \"\"\"\"\"\"\n{_BODY}    return {returned}\n\n\n"
        for name, returned in (("circle_area", "step_3"), ("square_perimeter", "step_4"), ("triangle_angles", "step_5"))
    ),
    "geometry/units.py": "def metres(value):\n    return value * 1.0\n",
    "report/print_shapes.py": "from geometry.shapes import circle_area\n\ndef show(r):\n    print(circle_area(r, 0))\n",
}
shapes = index_fixture("shapes", SHAPES)


def recorded(index: Index, query: str) -> tuple[list[int], np.ndarray, np.ndarray]:
    """The candidates, features and hand-set scores of one question."""
    searcher = Searcher(index.reader)
    seen = []
    searcher.record = lambda *args: seen.append(args)
    searcher.search(query)
    searcher.close()
    assert seen, f"{query!r} was not ranked"
    _, _, candidates, x, hand = seen[-1]
    return candidates, x, hand


def column(name: str) -> int:
    return FEATURES.index(name)


def path_of(index: Index, chunk: int) -> str:
    return index.reader.files[int(index.reader.chunk_file[chunk])].path


def test_the_hand_weights_reproduce_the_hand_set_scores(index: Index):
    # One demotion at most per candidate here: the linear form is then exactly the product form.
    for query in ("how is the tax of an invoice computed", "Invoice", "which invoices are overdue"):
        candidates, x, hand = recorded(index, query)
        assert len(candidates) > 1
        # Features are in units of the best fused score: the same scores, divided by it.
        linear = x @ rank.hand_weights()
        np.testing.assert_allclose(linear / linear.max(), hand / hand.max(), rtol=1e-9, atol=1e-12)
        searcher = Searcher(index.reader, ranker=RankModel.hand())
        try:
            learned, handset = searcher.search(query), searcher.search(query, ranking="hand")
        finally:
            searcher.close()
        assert [(h.path, h.start_line) for h in learned.results] == [(h.path, h.start_line) for h in handset.results]
        assert [h.score for h in learned.results] == pytest.approx([h.score for h in handset.results])


def test_features_say_what_each_candidate_file_is(index: Index):
    candidates, x, _ = recorded(index, "how is the tax of an invoice computed")
    by_path: dict[str, list[int]] = {}
    for i, chunk in enumerate(candidates):
        by_path.setdefault(path_of(index, chunk), []).append(i)
    test_rows = by_path["tests/test_invoice.py"]
    assert all(x[i, column("test_file")] == 1 and x[i, column("secondary_code")] == 1 for i in test_rows)
    assert all(x[i, column("test_file")] == 0 for i in by_path["billing/invoice.py"])
    if "docs/invoices.md" in by_path:
        assert all(x[i, column("no_language")] == 1 for i in by_path["docs/invoices.md"])
    # invoice.py is imported by every other code file: the most imported, 1 on the scale.
    assert all(x[i, column("imported_by")] == pytest.approx(1.0) for i in by_path["billing/invoice.py"])
    assert all(x[i, column("imported_by")] == 0 for i in by_path["web/pages.py"])
    # The best fused candidate is 1 in units of the best fused score.
    assert x[:, column("fused")].max() == pytest.approx(1.0)
    # Each modality's own score runs from 0 (its weakest candidate) to 1 (its best).
    for name in ("semantic", "text", "structural"):
        assert x[:, column(f"{name}_score")].max() == pytest.approx(1.0)


def test_the_folders_above_a_file_agree_with_the_question_by_rare_words(index: Index):
    candidates, x, _ = recorded(index, "where does billing work out what is owed")
    share = {path_of(index, c): x[i, column("deep_path_share")] for i, c in enumerate(candidates)}
    assert share["billing/invoice.py"] > 0 and share.get("web/pages.py", 0.0) == 0
    # A package's index file that defines nothing of its own says so; a module that defines is neither.
    facts = rank.file_facts(index.reader)
    ids = {f.path: f.id for f in index.reader.files}
    assert facts.index_file[ids["billing/__init__.py"]] == 1 and facts.no_definitions[ids["billing/__init__.py"]] == 1
    assert facts.index_file[ids["billing/invoice.py"]] == 0 and facts.no_definitions[ids["billing/invoice.py"]] == 0
    assert facts.no_definitions[ids["docs/invoices.md"]] == 0  # not code


def test_a_learned_model_reorders_and_explains_exactly(index: Index):
    query = "how is the tax of an invoice computed"
    weights = np.zeros(len(FEATURES))
    weights[column("fused")] = 1.0
    weights[column("test_file")] = 10.0  # a model that wants tests first
    model = RankModel({g: weights for g in GROUPS}, "tests first")
    searcher = Searcher(index.reader, ranker=model)
    try:
        response = searcher.search(query)
    finally:
        searcher.close()
    assert response.results[0].path == "tests/test_invoice.py"
    for hit in response.results:
        assert hit.features, "every ranked result says what made its score"
        assert sum(hit.features.values()) == pytest.approx(hit.score)
        assert not hit.adjustments
    hand = index.search(query, ranking="hand")
    assert hand.results[0].path != "tests/test_invoice.py"
    assert hand.ranking == "hand" and response.ranking == "tests first"


def test_a_model_file_round_trips_and_a_wrong_one_is_refused(tmp_path):
    model = RankModel.hand()
    path = tmp_path / "model.json"
    path.write_text(model.to_json({"note": "hand"}))
    loaded = RankModel.load(path)
    for group in GROUPS:
        np.testing.assert_allclose(loaded.weights[group], model.weights[group], atol=1e-6)
    document = json.loads(path.read_text())
    document["features"] = document["features"][:-1]
    path.write_text(json.dumps(document))
    with pytest.raises(RankModelError, match="feature layout"):
        RankModel.load(path)
    path.write_text("{not json")
    with pytest.raises(RankModelError, match="not a model file"):
        RankModel.load(path)


def test_the_shipped_model_weighs_every_feature_for_every_group():
    model = rank.shipped_model()
    assert set(model.weights) == set(GROUPS)
    assert all(w.shape == (len(FEATURES),) and np.isfinite(w).all() for w in model.weights.values())



def test_a_model_computes_only_what_it_weighs_and_scores_the_same(index: Index):
    model = rank.shipped_model()
    assert "fused" in model.needed and model.needed <= set(FEATURES)
    for query in ("how is the tax of an invoice computed", "which invoices are overdue"):
        candidates, x, _ = recorded(index, query)  # every feature, as training records them
        searcher = Searcher(index.reader, ranker=model)
        try:
            response = searcher.search(query)
        finally:
            searcher.close()
        group = rank.group_of(response_classification(query))
        full = dict(zip(candidates, model.score(group, x)))
        shown = {h.chunk: sum(h.features.values()) for h in response.results}
        # The same order as scoring every feature, and the same score up to fusion's unit.
        order = sorted(full, key=lambda c: (-full[c], c))
        assert [h.chunk for h in response.results] == [c for c in order if c in shown][: len(shown)]
        ratios = {round(shown[c] / full[c], 9) for c in shown if full[c]}
        assert len(ratios) == 1


def test_a_chunk_says_how_much_of_the_name_it_defines_the_question_agrees_with(shapes: Index):
    query = "work out the area of a circle from the value and the offset"
    candidates, x, _ = recorded(shapes, query)
    by_symbol = {shapes.reader.chunk_symbol[c]: x[i, column("symbol_agreement")] for i, c in enumerate(candidates)}
    assert by_symbol["circle_area"] == pytest.approx(1.0)  # both words of its name are in the question
    assert by_symbol["square_perimeter"] == 0 and by_symbol["triangle_angles"] == 0
    # Only the defined name counts, not what qualifies it; a chunk defining nothing agrees with nothing.
    assert rank.symbol_agreements("the parser", [None, "Parser.circle_area"]).tolist() == [0.0, 0.0]
    assert rank.symbol_agreements("circle", ["geometry::Shapes::circle_area"]).tolist() == [0.5]


def test_a_file_keeps_its_best_chunks_place_and_shows_the_chunk_the_choice_prefers(shapes: Index):
    query = "work out the area of a circle from the value and the offset"
    placing = np.zeros(len(FEATURES))
    placing[column("fused")] = 1.0
    # A choice that wants each file's weakest candidate: every file with two or more shows another chunk.
    choice = np.zeros(len(FEATURES))
    choice[column("fused")] = -1.0
    plain = RankModel({g: placing for g in GROUPS})
    chosen = RankModel({g: placing for g in GROUPS}, choice={g: choice for g in ("sentence", "explanation")})
    assert chosen.needed == {"fused"}
    answers = {}
    for model in (plain, chosen):
        searcher = Searcher(shapes.reader, ranker=model)
        try:
            answers[not model.choice] = searcher.search(query).results
        finally:
            searcher.close()
    best, shown = answers[True], answers[False]
    files = len({h.path for h in best})
    assert [h.path for h in shown[:files]] == [h.path for h in best[:files]]  # the same files in the same places
    assert [h.score for h in shown[:files]] == pytest.approx([h.score for h in best[:files]])
    candidates, x, _ = recorded(shapes, query)
    fused = dict(zip(candidates, x[:, column("fused")]))
    moved = [h for h in shown[:files] if h.placed_by]
    assert moved, "a file of several candidates shows its least fused one"
    for hit in moved:
        same_file = [c for c in candidates if path_of(shapes, c) == hit.path]
        assert hit.chunk == min(same_file, key=lambda c: (fused[c], -c))
        placer = next(h for h in best if h.path == hit.path)
        assert hit.placed_by == (placer.start_line, placer.end_line) != (hit.start_line, hit.end_line)
        assert sum(hit.features.values()) == pytest.approx(hit.score)  # the placing chunk's parts
    # A bare name shows its best-scored chunk (its definition): the group has no choice weights.
    assert chosen.preference("name", x) is None
    document = json.loads(chosen.to_json())
    assert RankModel.from_json(json.dumps(document)).choice["explanation"].tolist() == choice.tolist()
    document["choice"]["sentence"] = document["choice"]["sentence"][:-1]
    with pytest.raises(RankModelError, match="choice within a file"):
        RankModel.from_json(json.dumps(document))


def test_one_chunk_per_file_in_the_place_of_its_best_then_the_rest_in_order():
    from maguyva.query.present import best_per_file

    chunk_file = np.array([0, 0, 1, 1, 2, 0])  # chunk -> file
    order = [3, 0, 5, 2, 1, 4]  # best first
    assert best_per_file(order, chunk_file) == ([3, 0, 4, 5, 2, 1], {})
    # Each file shows its most preferred chunk where its best stood; of equals, the better placed.
    preference = {3: 0.0, 2: 1.0, 0: 0.5, 5: 2.0, 1: 2.0, 4: 0.0}
    shown, placed_by = best_per_file(order, chunk_file, preference)
    assert shown == [2, 5, 4, 3, 0, 1]
    assert placed_by == {2: 3, 5: 0}
    assert best_per_file([], chunk_file) == ([], {})


def test_the_choice_made_from_the_shown_files_alone_is_the_choice_made_from_every_feature(shapes: Index):
    model = rank.shipped_model()
    for query in ("work out the area of a circle from the value and the offset", "print a shape", "metres"):
        searcher = Searcher(shapes.reader, ranker=model)
        try:
            lazy = searcher.search(query, top_k=2)
            searcher.record = lambda *recorded: None  # every feature of every candidate, as training records them
            full = searcher.search(query, top_k=2)
        finally:
            searcher.close()
        assert [(h.path, h.start_line, h.placed_by) for h in lazy.results] == [
            (h.path, h.start_line, h.placed_by) for h in full.results
        ]


CONTRACTS = {
    "pricing/discount_policy.ts": "export interface DiscountPolicy {\n  rate(total: number): number;\n}\n",
    "pricing/seasonal_discount.ts": (
        "import { DiscountPolicy } from './discount_policy';\n\n"
        "export class SeasonalDiscount implements DiscountPolicy {\n"
        "  rate(total: number): number {\n    return total > 100 ? 0.1 : 0;\n  }\n}\n"
    ),
    "pricing/mixed.ts": (
        "export interface Rounding {\n  round(x: number): number;\n}\n\n"
        "export function roundUp(x: number): number {\n  return Math.ceil(x);\n}\n"
    ),
}
contracts = index_fixture("contracts", CONTRACTS)


def test_a_file_that_only_declares_an_interface_says_so(contracts: Index):
    facts = rank.file_facts(contracts.reader)
    flag = {f.path: facts.interface_only[f.id] for f in contracts.reader.files}
    # The contract alone; not its implementation, nor a file that declares one and implements more.
    assert flag == {"pricing/discount_policy.ts": 1.0, "pricing/seasonal_discount.ts": 0.0, "pricing/mixed.ts": 0.0}


#: A task about a queue's shutdown: one file's code does it, another only talks about it in a
#: comment and a docstring, a third spells one of the task's words (a common one) in its code.
COVERAGE = {
    "jobs/worker_pool.py": (
        "class WorkerPool:\n"
        "    def drain_queue(self):\n"
        "        while self.pending:\n"
        "            self.pending.pop().shutdown()\n"
    ),
    "jobs/notes.py": (
        '"""Draining the queue before shutdown is the worker pool\'s job."""\n\n'
        "# drain queue shutdown worker pool\n"
        "def describe(self):\n"
        "    return self.pending\n"
    ),
    "jobs/pending.py": "def count(self):\n    return len(self.pending)\n",
    "jobs/clock.py": "def tick(self):\n    return self.now\n",
}
coverage = index_fixture("coverage", COVERAGE)


def test_a_file_whose_code_spells_the_question_covers_it_and_comments_do_not(coverage: Index):
    reader = coverage.reader
    ids = {f.path: f.id for f in reader.files}
    files = np.array([ids["jobs/worker_pool.py"], ids["jobs/notes.py"], ids["jobs/pending.py"], ids["jobs/clock.py"],
                      ids["jobs/notes.py"]])
    shares = rank.code_coverages(reader, "drain the pending queue before the worker pool shuts down", files)
    pool, notes, pending, clock, notes_again = shares.tolist()
    # The file that does it covers the most (the unit); the one that only talks about it, in a
    # comment and its docstring, covers no more than its code's `pending`.
    assert pool == 1.0
    assert notes == pending == notes_again
    assert 0.0 < pending < 0.5
    assert clock == 0.0
    # Nothing to cover: a question of stopwords alone.
    assert not rank.code_coverages(reader, "how does it do what it does", files).any()


def test_code_coverage_is_the_same_by_one_pass_over_the_postings_or_a_lookup_per_candidate(coverage: Index):
    reader = coverage.reader
    files = np.array([f.id for f in reader.files] * 3)
    question = "drain the pending queue before the worker pool ticks"
    with config.using(config.DEFAULT.but(CODE_COVERAGE_PASS_ENTRIES=10**6)):
        one_pass = rank.code_coverages(reader, question, files)
    with config.using(config.DEFAULT.but(CODE_COVERAGE_PASS_ENTRIES=0)):
        looked_up = rank.code_coverages(reader, question, files)
    assert one_pass.max() == 1.0 and (one_pass > 0).all()  # each file spells a word of it
    np.testing.assert_array_equal(one_pass, looked_up)
