"""Cutting files into chunks: the spans of code that search returns.

Code is cut along its syntax tree. A definition that fits the size cap is one chunk; a larger one
is split at the boundaries of its statements (its child nodes); small neighbours are merged so
that a run of imports or one-line getters is one chunk rather than many; code between
definitions is chunked like everything else, so every non-blank line of a file is in a chunk.
Comments and attributes go with the code below them. Code chunks never overlap.

Other text is cut into overlapping windows of lines, ending at a blank line where one is near.

Sizes are counted in lines and in "significant characters": characters of each line without its
leading and trailing whitespace, because indentation costs an embedding model almost nothing
and should not make nested code split earlier than flat code.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from tree_sitter import Node

from maguyva.index.model import Chunk, Symbol

#: A chunk is read whole by a person or an agent, and scored by line overlap with the code that
#: answers a query: about one screen of code keeps it readable and precise.
MAX_CHUNK_LINES = 60
#: About 500 tokens of code: inside the input window of small local embedding models.
MAX_CHUNK_CHARS = 2_000
#: A piece of at most this many lines is too small to be a useful result on its own, so it is
#: merged with its neighbours (imports, one-line getters, a closing brace).
SMALL_LINES = 5
#: Plain code of at most this many lines (a closing brace, a lone statement) joins the
#: definition next to it; more is a chunk of its own rather than noise in the definition's.
TINY_LINES = 2
#: A class or module of at most this many lines stays one chunk even when it holds several
#: definitions; a bigger one is cut so that each method is its own chunk.
SMALL_CONTAINER_LINES = 25
#: Line windows for text that is not parsed (documentation, configuration).
TEXT_WINDOW_LINES = 40
#: Consecutive text windows share up to this many lines, so a paragraph cut by a window
#: boundary is still found whole in one of the two windows.
TEXT_WINDOW_OVERLAP = 8


def split_lines(content: bytes) -> list[str]:
    """The lines of `content` as text: invalid UTF-8 replaced, line ends removed.

    Lines are split at b"\\n" only, exactly as tree-sitter counts rows, so line i of the result is
    row i - 1 of a syntax tree of the same bytes.
    """
    text = content.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines


def significant_chars(text: str) -> int:
    """Characters of `text` that count towards `MAX_CHUNK_CHARS`: each line stripped."""
    return sum(len(line.strip()) for line in text.split("\n"))


class _Sizer:
    """Sizes of line ranges (0-based, inclusive) in constant time."""

    def __init__(self, lines: Sequence[str]) -> None:
        self._prefix = [0, *accumulate(map(len, map(str.strip, lines)))]

    def chars(self, first: int, last: int) -> int:
        return self._prefix[last + 1] - self._prefix[first]

    def blank(self, line: int) -> bool:
        return self._prefix[line + 1] == self._prefix[line]

    def fits(self, first: int, last: int) -> bool:
        return last - first < MAX_CHUNK_LINES and self.chars(first, last) <= MAX_CHUNK_CHARS

    def first_over(self, first: int) -> int:
        """The least `last + 1` for which lines first..last hold more than `MAX_CHUNK_CHARS`
        (len(lines) + 1 when none does)."""
        return bisect_right(self._prefix, self._prefix[first] + MAX_CHUNK_CHARS)


def chunk_text(lines: Sequence[str]) -> list[Chunk]:
    """Chunks of text that is not parsed: overlapping windows of lines."""
    sizer = _Sizer(lines)
    chunks: list[Chunk] = []
    count = len(lines)
    start = 0
    while start < count:
        while start < count and sizer.blank(start):
            start += 1
        if start >= count:
            break
        end = _window_end(sizer, start, count)
        last = _trim_end(sizer, start, end - 1)
        chunks.append(Chunk(start + 1, last + 1, "\n".join(lines[start : last + 1])))
        if end >= count:
            break
        start = max(start + 1, end - min(TEXT_WINDOW_OVERLAP, (end - start) // 4))
    return chunks


def _window_end(sizer: _Sizer, start: int, count: int) -> int:
    """The exclusive end of the text window starting at line `start`."""
    # The window grows while it fits: the first end past the cap is found by bisection over the
    # sizes' prefix sums (they only grow), not by trying every line.
    end = max(start + 1, min(count, start + min(TEXT_WINDOW_LINES, MAX_CHUNK_LINES), sizer.first_over(start) - 1))
    if end < count:
        # End after a blank line in the second half of the window, if there is one.
        for candidate in range(end - 1, start + (end - start) // 2, -1):
            if sizer.blank(candidate):
                return candidate + 1
    return end


def _trim_end(sizer: _Sizer, first: int, last: int) -> int:
    while last > first and sizer.blank(last):
        last -= 1
    return last


@dataclass(slots=True)
class _Unit:
    """A run of lines (0-based, inclusive) that is cut or merged as one piece."""

    first: int
    last: int
    #: A comment or attribute: belongs with the code below it.
    attaches: bool = False
    #: The opening lines of the definition around it (`class X:`): belongs with the code below.
    opens: bool = False
    #: The closing line of the definition around it (`}`): belongs with the code above.
    closes: bool = False
    #: The first line after comments and attributes joined to the unit (-1: `first`).
    code_first: int = -1
    #: The spans of the units merged into it, for moving some to a neighbour.
    parts: list[tuple[int, int]] = field(default_factory=list)
    #: Holds a whole definition.
    has_def: bool = False
    #: Every piece merged into it was small.
    all_small: bool = True
    #: The symbol around the unit (not one the unit holds whole); units merge only with
    #: units of the same owner, so a chunk does not straddle the edge of a definition.
    owner: str | None = None
    #: The owner is a function: the pieces of a function cut to fit merge freely (a closure in
    #: it does not need a chunk of its own).
    in_function: bool = False


_FUNCTION_KINDS = frozenset({"function", "method", "macro"})


class _Symbols:
    """Line spans (0-based, inclusive) of the symbols of a file, outermost first."""

    def __init__(self, symbols: Iterable[Symbol], scopes: Iterable[tuple[int, int, str]]) -> None:
        unique = {(s.start_line - 1, s.end_line - 1, s.qualified_name) for s in symbols}
        self.scopes = {(first - 1, last - 1, name) for first, last, name in scopes} - unique
        unique.update(self.scopes)
        self.spans = sorted(unique, key=lambda span: (span[0], -span[1], span[2]))
        self.starts = [first for first, _, _ in self.spans]
        #: Qualified names of functions: code inside one merges freely when it is cut.
        self.functions = {s.qualified_name for s in symbols if s.kind in _FUNCTION_KINDS}

    def _within(self, first: int, last: int) -> Iterable[tuple[int, int, str]]:
        """Symbols lying wholly within lines first..last, in order."""
        for index in range(bisect_left(self.starts, first), bisect_right(self.starts, last)):
            span = self.spans[index]
            if span[1] <= last:
                yield span

    def count(self, first: int, last: int, limit: int) -> int:
        """How many symbols, nested ones included, lie within first..last (up to `limit`)."""
        found = 0
        for _ in self._within(first, last):
            found += 1
            if found >= limit:
                break
        return found

    def outermost(self, first: int, last: int, limit: int) -> list[tuple[int, int, str]]:
        """Up to `limit` outermost symbols (not scopes) lying wholly within first..last."""
        found: list[tuple[int, int, str]] = []
        for span in self._within(first, last):
            if span in self.scopes or (found and span[1] <= found[-1][1]):
                continue  # nested in the previous one found
            found.append(span)
            if len(found) >= limit:
                break
        return found


def chunk_code(
    root: Node,
    lines: Sequence[str],
    symbols: Sequence[Symbol],
    attached_types: frozenset[str],
    scopes: Iterable[tuple[int, int, str]] = (),
) -> list[Chunk]:
    """Chunks of a parsed file.

    `root` is the syntax tree of the file whose `lines` are given; `symbols` are its definitions
    (their spans decide what is kept whole and name each chunk); nodes of `attached_types`
    (comments, attributes) are kept with the code after them. `scopes` are blocks that qualify
    the names inside them without being symbols (Rust `impl Type`), as 1-based inclusive
    `(start_line, end_line, qualified_name)`; chunks treat them like symbols.
    """
    if not lines:
        return []
    sizer = _Sizer(lines)
    index = _Symbols(symbols, scopes)
    units = _cut(root, sizer, index, attached_types)
    _classify(units, index)
    units = _attach(units, sizer)
    owners = _Enclosing(index.spans)
    for unit in units:
        unit.parts = unit.parts or [(unit.first, unit.last)]
        code_first = unit.code_first if unit.code_first >= 0 else unit.first
        owner = owners.innermost(code_first, unit.last, around=True)
        unit.owner = owner[2] if owner is not None else None
        unit.has_def = index.count(unit.first, unit.last, 1) > 0
        unit.all_small = unit.last - unit.first < SMALL_LINES
        unit.in_function = unit.owner in index.functions
    spans = [
        (unit.first, unit.last, unit.code_first if unit.code_first >= 0 else unit.first)
        for unit in _merge(units, sizer)
    ]
    spans = _fill_gaps(spans, sizer, len(lines))
    return _chunks(spans, lines, sizer, index)


def _cut(root: Node, sizer: _Sizer, index: _Symbols, attached: frozenset[str]) -> list[_Unit]:
    """Units in document order: nodes kept whole, found by descending from `root`.

    A node is kept whole when it fits the cap and is not a container of several definitions
    bigger than `SMALL_CONTAINER_LINES`; otherwise its children are considered in its place. A
    child that is nearly all of a node that did not fit (the body of a function a few lines too
    long) is opened too, so that the header can join its first statements. A node with no
    children that does not fit is cut into windows.
    """
    units: list[_Unit] = []
    stack: list[tuple[Node, bool]] = [(child, False) for child in reversed(root.children)]
    while stack:
        node, opened = stack.pop()
        first = node.start_point.row
        attaches = node.type in attached
        last = _last_row(node, trim=attaches)
        whole = first == last or (
            not opened
            and sizer.fits(first, last)
            and (last - first < SMALL_CONTAINER_LINES or index.count(first, last, 2) < 2)
        )
        if whole:
            _append(units, _Unit(first, last, attaches=attaches))
            continue
        children = node.children
        if children:
            for child in reversed(children):
                # A child is opened too when the rest of the node is only a few lines.
                opened = child.child_count > 0 and (
                    child.start_point.row - first + last - _last_row(child) < SMALL_LINES
                )
                stack.append((child, opened))
            continue
        for a, b in _windows(first, last, sizer):
            _append(units, _Unit(a, b))
    return units


def _append(units: list[_Unit], unit: _Unit) -> None:
    """Append `unit`, keeping units apart when siblings share a line.

    A shared line goes to the later unit (`export` before `class`, `} else {`): the earlier unit
    ends a line sooner, or, when it lies on the shared line alone, becomes part of the later one.
    """
    if units:
        previous = units[-1]
        if unit.last <= previous.last:
            return
        if unit.first <= previous.last:
            if previous.first < unit.first:
                previous.last = unit.first - 1
            else:
                unit.first = previous.first
                units.pop()
    units.append(unit)


def _last_row(node: Node, trim: bool = False) -> int:
    """The 0-based row of the last character of `node`.

    With `trim`, trailing whitespace does not count: some grammars end a comment at the
    indentation of the line after it.
    """
    start = node.start_point.row
    if trim:
        return start + (node.text or b"").rstrip().count(b"\n")
    row, column = node.end_point
    if column == 0 and row > start:
        return row - 1  # the node ends with its line break
    return max(row, start)


def _windows(first: int, last: int, sizer: _Sizer) -> Iterable[tuple[int, int]]:
    """Consecutive line ranges within the cap that cover first..last."""
    start = first
    while start <= last:
        # The longest range from `start` that fits (at least the line itself): `fits` holds up to
        # MAX_CHUNK_LINES lines and up to the line before `first_over`.
        end = max(start, min(last, start + MAX_CHUNK_LINES - 1, sizer.first_over(start) - 2))
        yield start, end
        start = end + 1


def _classify(units: list[_Unit], index: _Symbols) -> None:
    """Mark the opening and closing lines of definitions that were cut."""
    owners = _Enclosing(index.spans)
    previous: _Unit | None = None
    for unit in units:
        owner = owners.innermost(unit.first, unit.last, around=True)
        unit.owner = owner[2] if owner is not None else None
        if owner is not None and index.count(unit.first, unit.last, 1) == 0:
            tiny = unit.last - unit.first < TINY_LINES
            unit.closes = tiny and unit.last == owner[1]
            unit.opens = unit.first == owner[0] or (
                # the rest of a header: `where ...`, `{` on a line of its own
                tiny
                and not unit.closes
                and previous is not None
                and previous.opens
                and previous.owner == unit.owner
            )
        previous = unit


def _attach(units: list[_Unit], sizer: _Sizer) -> list[_Unit]:
    """Join comments, attributes and the opening lines of a definition that was cut (`class X:`,
    `impl X {`) to the unit after them, and its closing line (`}`, `end`) to the unit before
    it, where they fit together."""
    out: list[_Unit] = []
    pending: list[_Unit] = []
    for unit in units:
        if unit.attaches or unit.opens:
            pending.append(unit)
            continue
        if unit.closes and not pending and out and sizer.fits(out[-1].first, unit.last):
            out[-1].last = unit.last
            continue
        if pending and sizer.fits(pending[0].first, unit.last):
            unit.code_first = next((p.first for p in pending if p.opens), unit.first)
            unit.first = pending[0].first
        else:
            out.extend(_blocks(pending, sizer))  # a long doc comment: a chunk of its own
        pending = []
        out.append(unit)
    out.extend(_blocks(pending, sizer))
    return out


def _blocks(units: list[_Unit], sizer: _Sizer) -> list[_Unit]:
    """Runs of `units` (consecutive comment lines) joined into as few units as fit."""
    out: list[_Unit] = []
    for unit in units:
        if out and sizer.fits(out[-1].first, unit.last):
            block = out[-1]
            block.last = unit.last
            block.parts.append((unit.first, unit.last))
        else:
            block = _Unit(unit.first, unit.last, parts=[(unit.first, unit.last)])
            out.append(block)
        if block.code_first < 0 and not unit.attaches:
            block.code_first = unit.first
    return out


def _merge(units: list[_Unit], sizer: _Sizer) -> list[_Unit]:
    """Merge neighbours, greedily, while they fit the cap.

    Plain code merges with plain code; a definition takes in tiny plain code next to it; small
    definitions merge with each other. Two definitions of which one is not small stay apart, so a
    definition of some size is a chunk of its own. Nothing merges across the edge of a
    definition.
    """
    merged: list[_Unit] = []
    current: _Unit | None = None
    for unit in units:
        if current is None:
            current = unit
            continue
        if _mergeable(current, unit) and sizer.fits(current.first, unit.last):
            current.parts.append((unit.first, unit.last))
            current.last = unit.last
            current.has_def = current.has_def or unit.has_def
            current.all_small = current.all_small and unit.all_small
            continue
        merged.append(current)
        current = unit
    if current is not None:
        merged.append(current)
    _rebalance(merged, sizer)
    return merged


def _rebalance(merged: list[_Unit], sizer: _Sizer) -> None:
    """Even out a small last piece of code that was cut to fit (`return 0; }` alone) by moving
    whole pieces of the chunk before it into it, while it stays the smaller of the two."""
    for left, right in zip(merged, merged[1:], strict=False):
        if (
            left.owner != right.owner
            or left.has_def
            or right.has_def
            or right.last - right.first >= SMALL_LINES
        ):
            continue
        while len(left.parts) > 1:
            first, _ = left.parts[-1]
            before = left.parts[-2][1]
            if right.last - first > before - left.first or not sizer.fits(first, right.last):
                break
            right.parts.insert(0, left.parts.pop())
            right.first = first
            left.last = before


def _mergeable(left: _Unit, right: _Unit) -> bool:
    if left.owner != right.owner:
        return False
    if left.in_function or (not left.has_def and not right.has_def):
        return True
    if left.has_def and right.has_def:
        return left.all_small and right.all_small
    plain = right if left.has_def else left
    return plain.last - plain.first < TINY_LINES


def _fill_gaps(
    spans: list[tuple[int, int, int]], sizer: _Sizer, count: int
) -> list[tuple[int, int, int]]:
    """Add chunks for any non-blank line that no chunk covers (text outside the syntax tree)."""
    out: list[tuple[int, int, int]] = []
    covered_to = 0
    for first, last, code_first in [*spans, (count, count, count)]:
        if first > covered_to and sizer.chars(covered_to, first - 1) > 0:
            out.extend((a, b, a) for a, b in _windows(covered_to, first - 1, sizer))
        if first < count:
            out.append((first, last, code_first))
        covered_to = max(covered_to, last + 1)
    return out


def _chunks(
    spans: list[tuple[int, int, int]], lines: Sequence[str], sizer: _Sizer, index: _Symbols
) -> list[Chunk]:
    chunks: list[Chunk] = []
    enclosing = _Enclosing(index.spans)
    for first, last, code_first in spans:
        while first < last and sizer.blank(first):
            first += 1
        last = _trim_end(sizer, first, last)
        if sizer.blank(first):
            continue
        # Comments above a definition do not make the chunk sit outside it.
        symbol = _chunk_symbol(max(first, min(code_first, last)), last, index, enclosing)
        chunks.append(Chunk(first + 1, last + 1, "\n".join(lines[first : last + 1]), symbol))
    return chunks


def _chunk_symbol(first: int, last: int, index: _Symbols, enclosing: _Enclosing) -> str | None:
    """The symbol a chunk defines: its one outermost definition; for several, the symbol
    around them, or else the longest qualified-name prefix they share (`Engine` for Go
    methods `Engine.a` and `Engine.b`), or else the largest; for none, the symbol the chunk
    sits in."""
    inside = index.outermost(first, last, 1_000)
    if len(inside) == 1:
        return inside[0][2]
    around = enclosing.innermost(first, last)
    if around is not None:
        return around[2]
    if not inside:
        return None
    shared = inside[0][2].split(".")
    for _, _, name in inside[1:]:
        parts = name.split(".")
        common = 0
        while common < min(len(shared), len(parts)) and shared[common] == parts[common]:
            common += 1
        shared = shared[:common]
    if shared:
        return ".".join(shared)
    return max(inside, key=lambda span: span[1] - span[0])[2]  # the first of the largest


class _Enclosing:
    """The innermost symbol around each of a series of line ranges given in order."""

    def __init__(self, spans: list[tuple[int, int, str]]) -> None:
        self._spans = spans
        self._next = 0
        self._open: list[tuple[int, int, str]] = []

    def innermost(
        self, first: int, last: int, around: bool = False
    ) -> tuple[int, int, str] | None:
        """The innermost symbol holding lines first..last; with `around`, not one spanning
        exactly first..last."""
        spans = self._spans
        while self._next < len(spans) and spans[self._next][0] <= first:
            span = spans[self._next]
            while self._open and self._open[-1][1] < span[0]:
                self._open.pop()
            self._open.append(span)
            self._next += 1
        while self._open and self._open[-1][1] < first:
            self._open.pop()
        for span in reversed(self._open):
            if span[1] >= last and not (around and span[0] == first and span[1] == last):
                return span
        return None
