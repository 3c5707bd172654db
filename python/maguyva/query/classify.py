"""Sorting a question into one of six intents, cheaply, before any retrieval.

    >>> c = classify("who calls Session.request")
    >>> c.intent, c.confidence, c.rule, c.subject
    ('find_references', 0.9, 'references_phrase', 'Session.request')

The classifier is an ordered list of heuristics (SPEC §2); the first rule that matches wins. The
rules, their intents and their confidences are the table `maguyva.query.intents.RULES`. In the
order they are tried, with SPEC's row in brackets (its table has no row for find_similar):

- ``snippet`` [-] find_similar 0.80: the query is pasted code: several lines that read as code,
  or one line dense with code punctuation. Tried before everything else because a snippet is full
  of what the later rules look for: declaration keywords, quoted strings, exception names and
  identifiers. A stack trace is not a snippet; it goes to ``error_token``.
- ``definition_keyword`` [1] find_definition 0.95: a one-line query that starts like a
  declaration: ``def``, ``class``, ``func``, ``fn``, ``function``, ``import``, ``struct``,
  ``interface``, ``type``, ``trait``, ``enum``, ``impl``, ``const``, ``let``, ``package``... (after
  optional modifiers such as ``pub``, ``export`` or ``async``), followed by a name and then
  nothing, or code (``(``, ``:``, ``{``, ``<``...). "class loading is slow" or "type error when
  saving" are sentences, not declarations, and fall through.
- ``references_phrase`` [2] find_references 0.90: "who calls X", "what uses X", "usages of X",
  "references to X", "callers of X", "call sites of X", "where is X used/called", "is X still
  used", "find usages".
- ``impact_phrase`` [3] impact_analysis 0.90: "impact", "blast radius", "what depends on X",
  "depends on X", "dependents of X", "what breaks/would break if I change X", "is it safe to
  remove X".
- ``definition_phrase`` [-] find_definition 0.90: "where is X defined/declared/implemented",
  "where do we define X", "definition of X", for any name X. As explicit as a declaration, and
  tried before the error-token rule, which would take "where is ParseError defined".
- ``similar_phrase`` [-] find_similar 0.80: "similar to X", "code like this", "duplicated code".
  After the reference and impact phrases, before rules 4 and 5: the thing compared against is
  usually quoted or named, and those rules would otherwise take the query.
- ``quoted_string`` [4] exact_match 0.90: a literal in double, single or typographic quotes, or
  in backticks when it is more than a bare name (markdown marks code names with backticks, so
  `` `parse_config` `` is left to the identifier rule).
- ``error_token`` [4] exact_match 0.85: a stack trace, an exception name (``ValueError``,
  ``FooException``), an errno constant (``ECONNREFUSED``), ``ERR_*`` and rustc ``E0382`` codes,
  a signal (``SIGSEGV``), an HTTP error status, ``panic:``, ``segfault``...
- ``literal_phrase`` [4] exact_match 0.85: "grep for X", "find the string X", "exact match".
- ``identifier`` [5] find_definition 0.80: the query is a CamelCase, snake_case, qualified
  (``Session.request``, ``std::io::Read``) or called (``retry()``) name, alone or wrapped ("find
  X", "show me the X class", "where is X"), or a query that is one plain word (``Session``).
- ``identifier_in_sentence`` [5] find_definition 0.60: such a name inside a longer sentence,
  which may be asking something else about it.
- ``explanation_word`` [6] understand_code 0.75: "how", "why", "explain", "architecture", "what
  does", "overview", "walk me through"...
- ``fallback`` [7] understand_code 0.40: nothing matched.
- ``task_description`` [-] understand_code 0.50: not a rule tried in turn but a second reading
  of a ``quoted_string`` match when the query is a task description: a one-line statement (not
  a question, not "find ...") of three words or more besides the quoted span ('return "object"
  for plain objects in kind checks'). The literal stays the subject, as a hint about where to
  look; the answer is the places to read, as for any explanation question.

Besides the intent, a rule extracts what it can: `Classification.subject` (the symbol, literal or
error token the question is about, qualified names kept whole as written) and
`Classification.kind` (a symbol-kind filter from a leading declaration keyword or a kind word next
to the name: ``class X`` -> "class").

Everything is a precompiled regular expression; a call costs microseconds (benches/classifier.py
measures it). The phrases of rules 2 and 3, the definition and similarity phrases are looked for outside quotes:
the words of a quoted message are what is searched for, not the question. The word phrases are
matched against one lower-cased copy of the query (much cheaper
than case-insensitive matching); names, quotes and error tokens are read from the query as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from maguyva.lexicon import (
    DECLARATION_KEYWORDS,
    ERRNO_NAMES,
    FUNCTION_WORDS,
    KIND_WORDS,
    NAME_ENDINGS,
    PROPER_NOUNS,
    SUBJECT_LEAD_WORDS,
)
from maguyva.query.intents import EXACT_MATCH, RULES, RULES_BY_NAME, TASK_MIN_WORDS, TASK_SPAN_RULES, Rule

__all__ = ["REGEX_RULE", "Classification", "classify", "regex_pattern"]


@dataclass(frozen=True, slots=True)
class Classification:
    """What kind of question a query is, how sure the classifier is, and what it is about."""

    #: One of `maguyva.query.intents.INTENTS`.
    intent: str
    confidence: float
    #: Name of the rule that matched (`maguyva.query.intents.RULES`).
    rule: str
    #: The symbol, literal or error token the query is about, when the rule could extract one.
    subject: str | None = None
    #: A symbol kind (one of the index's symbol kinds: "function", "class", "module"...) the
    #: query asks for, or None.
    kind: str | None = None


#: The answer of each rule when it extracted nothing, built once (classifications are immutable).
_BARE_RESULTS = {r.name: Classification(r.intent, r.confidence, r.name) for r in RULES_BY_NAME.values()}


def _result(rule: str, subject: str | None = None, kind: str | None = None) -> Classification:
    if not subject and kind is None:
        return _BARE_RESULTS[rule]
    spec = RULES_BY_NAME[rule]
    return Classification(spec.intent, spec.confidence, rule, subject or None, kind)


# --- vocabulary ----------------------------------------------------------------------------------

#: A name, possibly qualified ("Session.request", "std::io::Read", "Foo#bar").
_QNAME = r"(?>[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*)"
#: A short run of words (up to four) that a phrase is about; `_pick` chooses the subject in it.
_SPAN = r"[^\s?!,;]+(?:[ \t]+[^\s?!,;]+){0,3}"
#: The same, ending as early as the text after it allows.
_LAZY_SPAN = r"[^\s?!,;]+?(?:[ \t]+[^\s?!,;]+?){0,3}?"


_KIND_WORD = "(?:" + "|".join(sorted(KIND_WORDS, key=len, reverse=True)) + ")"

# --- rule 0: pasted code -------------------------------------------------------------------------

#: Lines of a stack trace or crash report: such text is an error to look up, not a snippet.
_STACK_TRACE = re.compile(
    r"Traceback \(most recent call last\)|^\s*File \"[^\"]*\", line \d+|^\s+at \S.*[(:]\d+"
    r"|\bpanic: |panicked at|^goroutine \d+ \[|Exception in thread ",
    re.M,
)
#: A line that reads as code: ends like code, assigns or compares, calls, closes a block, is
#: indented, starts with a statement keyword, or is a comment, decorator or preprocessor line.
_CODE_LINE = re.compile(
    r"[{}:;,(\[]\s*$|=>\s*\S|\w\s*(?:[-+*/|&]?=|==|!=|:=|->)\s*\S|\w\(|^\s*[})\]]|^(?:\s{2,}|\t)\S"
    r"|^\s*(?:def|class|fn|func|function|return|elif|except|finally|impl|pub|const|let|var|import|raise"
    r"|throw|yield|await|pass)\b|^\s*(?://|/\*|\*/|#include\b|#\[|@\w)"
)
#: Every pair of marks below contains one of these characters (a cheap test that skips prose).
_CODE_CHARS = re.compile(r"[{;=&|]")
#: Marks of code in a single line; two different ones make the line a snippet.
_CODE_MARKS = re.compile(
    r"(?P<block>\{\s*[^\s{}][^{}]*\})|(?P<semi>;\s*\S|;\s*$)|(?P<arrow>=>)|(?P<walrus>:=)"
    r"|(?P<compare>===?|!==?)|(?P<logic>&&|\|\|)|(?P<update>[-+*/]=|\w\+\+|\w--)"
    r"|(?P<cstyle>\b(?:if|for|while|switch|catch)\s*\()"
)


def _is_snippet(text: str) -> bool:
    if "\n" in text:
        if _STACK_TRACE.search(text):
            return False
        lines = [line for line in text.splitlines() if line.strip()]
        code = sum(1 for line in lines if _CODE_LINE.search(line))
        return len(lines) >= 2 and code >= 2 and 2 * code >= len(lines)
    if _CODE_CHARS.search(text) is None:
        return False
    marks = {m.lastgroup for m in _CODE_MARKS.finditer(text)}
    return len(marks) >= 2


# --- rule 1: a declaration -----------------------------------------------------------------------

_DECLARATION = re.compile(
    r"(?:(?:pub(?:\([\w:]+\))?|export|default|public|private|protected|internal|static|async"
    r"|abstract|final|sealed|open|override|data|unsafe|extern|inline|const)\s+)*"
    r"(?P<kw>" + "|".join(map(re.escape, sorted(DECLARATION_KEYWORDS, key=len, reverse=True))) + r")"
    r"(?:\s+|(?=<))(?P<rest>.+)$",
    re.I,
)
#: Go's method receiver: "func (s *Server) Start(...)".
_GO_RECEIVER = re.compile(
    r"\(\s*(?:\w+\s+)?\*?\s*(?P<recv>\w+)(?:\[[^\]]*\])?\s*\)\s*(?P<name>\w+)(?P<tail>.*)$"
)
_GENERIC_PARAMS = r"(?:<[^>]*>\s*)?"
#: A declared name may end in `!` or `?` (Ruby's and Elixir's `save!`, `valid?`).
_DECLARED_NAME = re.compile(_GENERIC_PARAMS + r"(?P<name>" + _QNAME + r"[!?]?)(?P<tail>.*)$")
_IMPL = re.compile(
    _GENERIC_PARAMS + r"(?P<name>" + _QNAME + r")(?:<[^>]*>)?(?:\s+for\s+(?P<target>" + _QNAME + r"))?"
    r"(?P<tail>.*)$"
)
_IMPORT = re.compile(
    r"(?:\{\s*(?P<braced>[\w$]+)[^}]*\}|\*\s+as\s+(?P<alias>[\w$]+)|(?P<name>" + _QNAME + r"))(?P<tail>.*)$"
)
_FROM_IMPORT = re.compile(r"from\s+(?P<module>[\w.]+)\s+import\s+\(?\s*(?P<name>[\w*]+)", re.I)
_USE = re.compile(r"use\s+(?P<path>\w+(?:::[\w*]+)+)", re.I)
#: What may follow a declared name: nothing, code, a kind ("type Config struct"), or a short
#: location ("class User in models.py").
_DECLARATION_TAIL = re.compile(
    r"\s*(?:[?.!]*$|[(<:{\[=;,!]|->|(?:extends|implements|struct|interface|enum|class|where|with|as"
    r"|definition|declaration|signature|source|implementation)\b|(?:in|from)\s+\S+\s*$)",
    re.I,
)
_IMPORT_TAIL = re.compile(r"\s*(?:$|[;,]|(?:as|from)\s)", re.I)


def _declaration(text: str) -> Classification | None:
    if text[:4].lower() == "from":
        m = _FROM_IMPORT.match(text)
        if m is None:
            return None
        if m["name"] == "*":
            return _result("definition_keyword", m["module"], "module")
        return _result("definition_keyword", m["name"])
    if text[:3].lower() == "use":
        m = _USE.match(text)
        return _result("definition_keyword", m["path"]) if m else None
    m = _DECLARATION.match(text)
    if m is None:
        return None
    keyword, rest = m["kw"].lower(), m["rest"]
    kind = DECLARATION_KEYWORDS[keyword]
    if keyword == "import":
        found = _IMPORT.match(rest)
        if found is None or not _IMPORT_TAIL.match(found["tail"]):
            return None
        if found["name"] is None or "from" in found["tail"].lower():
            # "import { useState } from 'react'": the names are items of a module, not modules.
            kind = None
        return _result("definition_keyword", found["braced"] or found["alias"] or found["name"], kind)
    if keyword in ("func", "fn") and rest.startswith("("):
        found = _GO_RECEIVER.match(rest)
        if found is None or not _DECLARATION_TAIL.match(found["tail"]):
            return None
        return _result("definition_keyword", f"{found['recv']}.{found['name']}", kind)
    if keyword == "impl":
        found = _IMPL.match(rest)
        if found is None or not _DECLARATION_TAIL.match(found["tail"]):
            return None
        return _result("definition_keyword", found["target"] or found["name"], kind)
    found = _DECLARED_NAME.match(rest)
    if found is None or not _DECLARATION_TAIL.match(found["tail"]):
        return None
    if keyword == "type":
        # Go: "type Config struct", "type Store interface".
        after = found["tail"].split(None, 1)
        if after and after[0].lower() in ("struct", "interface"):
            kind = after[0].lower()
    return _result("definition_keyword", found["name"], kind)


# --- rules 2 and 3: reference and impact phrases -------------------------------------------------

#: Not after a conjunction: "registered and invoked" lists what happens to something.
_NOT_A_LIST = r"(?<!\band)(?<!\bor)(?<!\bthen)"
_REFERENCES = re.compile(
    # who calls X, what uses X, which functions call X, who is calling X
    r"\b(?:who|what|which(?:\s+[a-z]+){0,2}?)\s+(?:else\s+|all\s+|still\s+|actually\s+)?"
    r"(?:is\s+|are\s+)?(?:calls?|calling|uses?|using|invokes?|invoking|imports?|importing"
    r"|references?|referencing|instantiates?|consumes?|reads?)\b(?:\s+(?:into\s+|to\s+|from\s+)?"
    r"(?P<a>" + _SPAN + r"))?"
    # usages of X, references to X, callers of X, call sites of X
    r"|\b(?:usages?|uses|users|references?|refs|callers|callsites?|call[\s-]sites?|invocations?"
    r"|consumers|importers)\s+(?:of|to|for)\s+(?P<b>" + _SPAN + r")"
    # where is X used, how is X called, is X still used
    # (a span ending in "and"/"or" is a list of verbs: "how are handlers registered and invoked")
    r"|\b(?:is|are|was|were|gets?)\s+(?P<c>" + _LAZY_SPAN + r")" + _NOT_A_LIST + r"\s+(?:still\s+|ever\s+|even\s+"
    r"|actually\s+|currently\s+|really\s+)?(?:being\s+)?(?:used|called|invoked|referenced"
    r"|imported|instantiated|consumed)\b"
    # where X is used
    r"|\bwhere\s+(?P<d>" + _LAZY_SPAN + r")\s+(?:is|are|gets?)\s+(?:being\s+)?(?:used|called"
    r"|invoked|referenced|imported|instantiated)\b"
    # where do we call X
    r"|\bwhere\s+(?:else\s+)?(?:do|does|did)\s+(?:we|i|you|they|it|\w+)\s+(?:call|use|invoke"
    r"|import|reference|instantiate)\s+(?P<e>" + _SPAN + r")"
    # find usages, all callers of..., X call sites
    r"|\b(?:usages|callers|call[\s-]?sites|importers)\b|\bfind\s+(?:all\s+)?references\b"
)

_CHANGE_VERB = (
    r"(?:change[ds]?|changing|modif(?:y|ies|ied)|modifying|remove[ds]?|removing|delete[ds]?|deleting"
    r"|rename[ds]?|renaming|refactor(?:s|ed)?|refactoring|touch(?:es|ed)?|touching|drop(?:s|ped)?"
    r"|dropping|deprecate[ds]?|deprecating|update[ds]?|updating|edit(?:s|ed)?|editing)"
)
_IMPACT = re.compile(
    r"\bimpact(?:s|ed)?\b(?:\s+(?:of|on)\s+(?:" + _CHANGE_VERB + r"\s+)?(?P<a>" + _SPAN + r"))?"
    r"|\bblast\s+radius\b(?:\s+(?:of|for)\s+(?:" + _CHANGE_VERB + r"\s+)?(?P<b>" + _SPAN + r"))?"
    r"|\b(?:depends?|depending|relies|rely|relying)\s+(?:up)?on\b(?:\s+(?P<c>" + _SPAN + r"))?"
    r"|\bdepend[ae]nts?\b(?:\s+(?:of|on)\s+(?P<d>" + _SPAN + r"))?"
    r"|\bwhat\s+(?:would\s+|will\s+|could\s+|might\s+|else\s+)?(?:breaks?|be\s+affected)\b"
    r"(?:\s+(?:if|when)\s+(?:i|we|you|someone)\s+" + _CHANGE_VERB + r"\s+(?P<e>" + _SPAN + r"))?"
    r"|\bwhat\s+(?:happens|would\s+happen)\s+(?:if|when)\s+(?:i|we|you|someone)\s+" + _CHANGE_VERB
    + r"\s+(?P<h>" + _SPAN + r")"
    r"|\b(?:safe|ok|okay)\s+to\s+" + _CHANGE_VERB + r"\s+(?P<f>" + _SPAN + r")"
    r"|\bcan\s+(?:i|we)\s+(?:safely\s+)?(?:remove|delete|drop|rename)\s+(?P<g>" + _SPAN + r")"
    r"|\b(?:affected|broken)\s+(?:by|if)\b|\bripple\s+effects?\b|\bbreaking\s+changes?\b"
)

_SIMILAR = re.compile(
    r"\bsimilar(?:\s+to)?\b(?:\s+(?P<a>" + _SPAN + r"))?|\bresembl\w*(?:\s+(?P<b>" + _SPAN + r"))?"
    r"|\b(?:code|functions?|methods?|classes|implementations?|snippets?|something|anything|ones|places"
    r"|others?)"
    r"\s+(?:that\s+(?:looks?|is|are)\s+)?like\s+(?P<c>" + _SPAN + r")"
    r"|\blike\s+this\b|\bduplicat(?:e|ed|es)\s+(?:code|logic|functions?|implementations?|blocks?|snippets?"
    r"|of)\b|\bcode\s+duplication\b|\bcopy[-\s]?past\w*|\bnear[-\s]?duplicates?\b|\bclones?\s+of\b"
    r"|\bsame\s+(?:pattern|logic|idiom)\b"
)


_TOKEN = re.compile(_QNAME)


def _pick(span: str | None) -> str | None:
    """The subject in a short run of words: the first one after determiners and kind words,
    unless it is a function word."""
    if not span:
        return None
    for word in span.split():
        token = _strip_token(word)
        if not token:
            continue
        lowered = token.lower()
        if lowered in SUBJECT_LEAD_WORDS:
            continue
        if lowered in FUNCTION_WORDS or not _TOKEN.fullmatch(token):
            return None
        return token
    return None



def _sole_name(span: str | None) -> str | None:
    """A span of one word is the name asked about even when it is also a kind word ("where is
    Helpers defined")."""
    words = span.split() if span else []
    token = _strip_token(words[0]) if len(words) == 1 else ""
    return token if token and _TOKEN.fullmatch(token) and token.lower() not in FUNCTION_WORDS else None


def _strip_token(word: str) -> str:
    word = word.strip("`'\"“”‘’()[]{}<>?!.,;:*")
    if word.endswith(("'s", "’s")):
        word = word[:-2]
    if word.endswith("()"):
        word = word[:-2]
    return word


def _span(m: re.Match[str], text: str) -> str | None:
    """What the first group of `m` that took part in the match covers, read from `text` (the query
    as written; `m` may have matched its lower-cased copy, which has the same length)."""
    for group in range(1, m.re.groups + 1):
        start = m.start(group)
        if start >= 0:
            return text[start : m.end(group)]
    return None


def _phrase_subject(m: re.Match[str], text: str) -> str | None:
    return _pick(_span(m, text)) or _first_identifier(text)


# --- rule 4: literals and errors -----------------------------------------------------------------

_QUOTED = re.compile(
    r"(?<![\w\\])\"(?P<d>[^\"\n]+)\"|(?<![\w\\])'(?P<s>[^'\n]+)'(?!\w)"
    r"|“(?P<t>[^”\n]+)”|‘(?P<u>[^’\n]+)’"
    r"|`(?P<b>[^`\n]+)`"
)
_BARE_NAME = re.compile(_QNAME + r"(?:\(\))?")


def _mask_quoted(folded: str) -> str:
    """`folded` with the inside of every quoted span blanked (same length, so spans still line up
    with the query); backticked code names are kept, since they are what a question is about."""

    def blank(m: re.Match[str]) -> str:
        inner = m["b"]
        if inner is not None and _is_code_name(inner.strip()):
            return m.group(0)
        return m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1]

    return _QUOTED.sub(blank, folded) if any(q in folded for q in "\"'`“‘") else folded


def _is_code_name(text: str) -> bool:
    """Whether backticked `text` names code (`parse_config`, `Session.request`, `retry()`)
    rather than quoting a literal (`Cargo.toml`, `rate limit exceeded`)."""
    return _BARE_NAME.fullmatch(text) is not None and _is_identifier(text.removesuffix("()"))


#: An exception's name: `ValueError`, `FooException`, `KeyboardInterrupt`...
_EXCEPTION_NAME = re.compile(
    r"\b(?:[A-Z][A-Za-z0-9]*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault|Panic)"
    r"|StopIteration|StopAsyncIteration|KeyboardInterrupt|GeneratorExit|SystemExit)\b"
)
#: A run of lower-case module names, each followed by a dot (`wirekit.errors.`).
_MODULE_PATH = re.compile(r"\b(?:[a-z_]\w*\.)+")


def _exceptions(text: str) -> Iterator[str]:
    """The exception names of `text` in order, each with the module path written before it
    (`wirekit.errors.ConnectionError`), as one pattern (`_MODULE_PATH` repeated zero or
    more times, then `_EXCEPTION_NAME`) would find them, in linear time. That pattern retries its
    module path from every dot of a long dotted run that ends in no exception ("a.a.a.a..."), in
    time quadratic in the run's length. Here each path is read once: a name (it starts with a
    capital) never sits inside a path, so the path before a name is the one ending where it
    starts."""
    names = list(_EXCEPTION_NAME.finditer(text))
    if not names:
        return
    path_start = {m.end(): m.start() for m in _MODULE_PATH.finditer(text)}
    for m in names:
        yield text[path_start.get(m.start(), m.start()) : m.end()]


_ERROR_CODE = re.compile(r"\b(?:E[A-Z0-9_]{2,}|ERR_[A-Z0-9_]{3,}|E0\d{3})\b")
_HTTP_STATUS = re.compile(
    r"\b(?:http|status(?:\s+code)?)[\s:/]*(?P<a>[45]\d\d)\b"
    r"|\b(?P<b>[45]\d\d\s+(?:not\s+found|bad\s+request|unauthori[sz]ed|forbidden|internal\s+server"
    r"\s+error|bad\s+gateway|service\s+unavailable|gateway\s+time-?out|too\s+many\s+requests"
    r"|conflict|method\s+not\s+allowed|unprocessable\s+entity|payload\s+too\s+large"
    r"|request\s+time-?out|gone))\b"
)
_CRASH = re.compile(
    r"traceback \(most recent call last\)|\bpanic:|panicked at|exception in thread|\bsegfault\b"
    r"|segmentation fault|core dumped|nil pointer dereference|index out of range"
    r"|cannot read propert(?:y|ies) of (?:undefined|null)|is not a function|fatal error:"
)
_SIGNAL = re.compile(r"\bSIG[A-Z]{2,}\b|\bUnhandledPromiseRejection\w*")
_LITERAL = re.compile(
    r"\bgrep\b(?:\s+-\w+)*(?:\s+for)?(?:\s+(?P<a>\S+))?"
    r"|\b(?:exact|literal|verbatim)(?:ly)?\s+(?:string|text|match(?:es)?|occurrences?|phrase|search)\b"
    r"(?:\s+(?:for|of)\s+(?P<b>\S+))?"
    r"|\b(?:find|search(?:\s+for)?|look\s+for|locate|containing|contains|with)\s+(?:the\s+|a\s+)?"
    r"(?:string|literal|text|phrase|word|message)\s+(?P<c>\S+)"
    r"|\b(?:all\s+)?occurrences\s+of\s+(?P<d>\S+)"
)


def _literal(text: str, folded: str) -> Classification | None:
    crash = _CRASH.search(folded)
    if crash is not None:
        # In a trace, the last exception named is the one that was raised.
        names = list(_exceptions(text))
        return _result("error_token", names[-1] if names else text[crash.start() : crash.end()].rstrip(":"))
    for quoted in _QUOTED.finditer(text):
        backticked = quoted["b"]
        if backticked is None:
            literal = quoted["d"] or quoted["s"] or quoted["t"] or quoted["u"]
            if literal.strip():
                return _result("quoted_string", literal)
        elif backticked.strip() and not _is_code_name(backticked.strip()):
            return _result("quoted_string", backticked)
    name = next(_exceptions(text), None)
    if name is not None:
        return _result("error_token", name)
    for found in _ERROR_CODE.finditer(text):
        code = found.group(0)
        if code in ERRNO_NAMES or code.startswith("ERR_") or code[1] == "0":
            return _result("error_token", code)
    signal = _SIGNAL.search(text)
    if signal is not None:
        return _result("error_token", signal.group(0))
    m = _HTTP_STATUS.search(folded)
    if m is not None:
        return _result("error_token", _span(m, text))
    m = _LITERAL.search(folded)
    if m is not None:
        literal = _span(m, text)
        return _result("literal_phrase", _strip_token(literal) if literal else _first_identifier(text))
    return None


# --- rule 5: identifiers -------------------------------------------------------------------------

_IDENTIFIER = re.compile(
    r"(?<![\w$./:#\\-])(?P<id>"
    r"[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)+"  # qualified: Session.request, std::io::Read
    r"|[A-Za-z$][\w$]*_[\w$]+|_+[A-Za-z][\w$]*"  # snake_case, SCREAMING_CASE, _private
    r"|[a-z][a-z0-9$]*[A-Z][\w$]*"  # camelCase
    r"|[A-Z][a-z0-9]+[A-Z][\w$]*"  # PascalCase with a second hump
    r"|[A-Z]{2,}[a-z][\w$]*"  # HTTPServer
    r"|[A-Za-z_$][\w$]*(?=\(\))"  # retry()
    r"|(?<=`)[A-Za-z_$][\w$]*(?=(?:\(\))?`)"  # `retry`: backticks mark a code name
    r")(?![\w$])"
)


def _is_identifier(token: str) -> bool:
    if token.lower() in PROPER_NOUNS:
        return False
    if "." in token:
        parts = token.split(".")
        if parts[-1].lower() in NAME_ENDINGS or all(len(p) <= 1 for p in parts):
            return False
    return True


def _identifiers(text: str) -> Iterator[re.Match[str]]:
    for m in _IDENTIFIER.finditer(text):
        if _is_identifier(m["id"]):
            yield m


def _first_identifier(text: str) -> str | None:
    return next((m["id"] for m in _identifiers(text)), None)


#: The whole query is one name, perhaps wrapped: "find parse_config", "show me the Session class",
#: "where is HTTPServer?", "`retry()`".
_WRAPPED_NAME = re.compile(
    r"(?:(?:please|pls)\s+)?(?:(?:find|show(?:\s+me)?|go\s+to|goto|jump\s+to|open|locate|search(?:\s+for)?"
    r"|look\s*up|look\s+for|get|where(?:'s|\s+is|\s+are)|what\s+is|definition\s+of)\s+)?"
    r"(?:the\s+)?(?:(?:definition|declaration|source|implementation)\s+(?:of|for)\s+)?(?:the\s+)?"
    r"(?:" + _KIND_WORD + r"\s+)?[`'\"]?(?P<name>" + _QNAME + r")(?:\(\))?[`'\"]?"
    r"(?:\s+" + _KIND_WORD + r")?"
    r"(?:\s+(?:is\s+)?(?:defined|declared|implemented|definition|declaration|source))?"
    r"\s*[?.!]*"
)
#: A definition question about any name, even a plain word: "where is retry defined".
_DEFINITION_FORM = re.compile(
    r"\bwhere\s+(?:is|are)\s+(?P<a>" + _LAZY_SPAN + r")\s+(?:defined|declared|implemented)\b"
    r"|\bwhere\s+(?:do|does|did)\s+(?:we|i|you|they)\s+(?:define|declare|implement)\s+(?P<b>" + _SPAN + r")"
    r"|\b(?:definition|declaration)\s+(?:of|for)\s+(?P<c>" + _SPAN + r")"
    r"|\b(?:go|jump)\s+to\s+(?:the\s+)?definition\b"
    r"|\b(?:" + _KIND_WORD + r")\s+(?:named|called)\s+(?P<d>" + _SPAN + r")"
)


def _kind_near(text: str, start: int, end: int) -> str | None:
    before = text[max(0, start - 12) : start].split()
    if before:
        kind = KIND_WORDS.get(before[-1].strip("`'\"").lower())
        if kind:
            return kind
    after = text[end : end + 12].split(None, 1)
    if after:
        return KIND_WORDS.get(after[0].strip("`'\"?.,").lower())
    return None


def _definition_phrase(text: str, folded: str) -> Classification | None:
    """ "where is X defined", "definition of X": a request for a definition in so many words, as
    explicit as "where is X used" is for references (any name, not only a CamelCase or
    snake_case one: "where is Helpers defined")."""
    form = _DEFINITION_FORM.search(folded)
    if form is None:
        return None
    found = next(_identifiers(text[form.start() : form.end()]), None)
    span = _span(form, text)
    subject = found["id"] if found else _pick(span) or _sole_name(span)
    if not subject:
        return None
    at = text.find(subject, form.start())
    kind = _kind_near(text, at, at + len(subject)) if at >= 0 else None
    return _result("definition_phrase", subject, kind)


def _is_sole_word(name: str, text: str) -> bool:
    """A query of one plain word ("Session", "formatter") names a symbol: nobody asks a
    question in one word, but "Session" is how one looks up a class."""
    return name == text.strip().rstrip("?.!") and len(name) >= 3 and name.isidentifier() and name.lower() not in FUNCTION_WORDS


def _identifier(text: str, folded: str) -> Classification | None:
    m = _WRAPPED_NAME.fullmatch(folded)
    if m is not None:
        start, end = m.span("name")
        name = text[start:end]
        marked = text[end : end + 2] == "()" or text[start - 1 : start] == "`"
        if _is_identifier(name) and (marked or _IDENTIFIER.fullmatch(name) or _is_sole_word(name, text)):
            return _result("identifier", name, _kind_near(text, start, end))
    found = next(_identifiers(text), None)
    if found is not None:
        return _result("identifier_in_sentence", found["id"], _kind_near(text, found.start(), found.end()))
    return None


# --- rule 6: explanation -------------------------------------------------------------------------

_EXPLANATION = re.compile(
    r"\b(?:how|why|explain\w*|architecture|architectural|overview|walk\s+(?:me\s+)?through"
    r"|what(?:'s|\s+does|\s+do|\s+is|\s+are|\s+happens)|understand\w*|purpose|responsible\s+for|describe"
    r"|summar(?:y|ize|ise)|design\s+of|high[- ]level)\b"
)


# --- the classifier ------------------------------------------------------------------------------

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


#: The rule of a regular expression written `/pattern/` or `regex:pattern`: an exact-match
#: question whose subject is the pattern, decided before any other rule.
REGEX_RULE = "regular_expression"
_REGEX = re.compile(r"\s*(?:/(?P<slashed>.+)/|regex:\s*(?P<named>.+?))\s*", re.S)


def regex_pattern(query: str) -> str | None:
    """The regular expression of a query written `/pattern/` or `regex:pattern`, else None."""
    found = _REGEX.fullmatch(query)
    if found is None:
        return None
    return found["slashed"] if found["slashed"] is not None else found["named"]


def classify(query: str) -> Classification:
    """The intent of `query`, with the confidence of the rule that decided it and what the query is
    about. Never fails: an empty query is the fallback."""
    pattern = regex_pattern(query)
    if pattern is not None:
        return Classification(EXACT_MATCH, 1.0, REGEX_RULE, pattern)
    found = classify_question(query)
    if found.rule in TASK_SPAN_RULES and is_task_description(query, found.subject):
        return _result("task_description", found.subject)
    return found


#: The first words of a question or of a search ("find X in Y"), which a task description is not.
_QUESTION_WORD = re.compile(
    r"(?:who|what|where|which|when|why|how|is|are|does|do|can|should|find|search|look|locate|show|grep)\b", re.I
)


def is_task_description(query: str, span: str | None = None) -> bool:
    """Whether `query` reads as a task in hand (a commit subject, an issue title) rather than a
    question: one line of TASK_MIN_WORDS words or more besides `span` (the quoted or named part),
    not asked as a question."""
    text = query.strip()
    if "\n" in text or text.endswith("?") or _QUESTION_WORD.match(text):
        return False
    if _LITERAL.search(_mask_quoted(text.lower())):
        return False  # "grep for X", "find the string X": the string is asked for, whatever else
    words = len(text.split()) - (len(span.split()) if span else 0)
    return words >= TASK_MIN_WORDS


@dataclass(frozen=True, slots=True)
class _Question:
    """A question as the rules read it."""

    #: As asked, without surrounding whitespace.
    text: str
    #: Lower-cased, with spans in it spans in `text` (a few characters whose lower case is longer,
    #: "İ", are folded as ASCII only).
    folded: str
    #: `folded` with quoted messages masked: the words of `find "the response was already
    #: consumed"` are the thing searched for, not a question about who consumes it.
    asked: str


def _snippet_rule(q: _Question) -> Classification | None:
    return _result("snippet") if _is_snippet(q.text) else None


def _declaration_rule(q: _Question) -> Classification | None:
    return _declaration(q.text) if "\n" not in q.text else None


def _phrase_rule(name: str, pattern: re.Pattern[str]) -> Callable[[_Question], Classification | None]:
    def rule(q: _Question) -> Classification | None:
        m = pattern.search(q.asked)
        return None if m is None else _result(name, _phrase_subject(m, q.text))

    return rule


def _explanation_rule(q: _Question) -> Classification | None:
    return _result("explanation_word") if _EXPLANATION.search(q.folded) else None


#: What decides each rule of `intents.RULES`; one function may decide several neighbouring rules
#: (the literal rules, the identifier rules). `classify_question` tries them in the table's order.
_DECIDED_BY: dict[str, Callable[[_Question], Classification | None]] = {
    "snippet": _snippet_rule,
    "definition_keyword": _declaration_rule,
    "references_phrase": _phrase_rule("references_phrase", _REFERENCES),
    "impact_phrase": _phrase_rule("impact_phrase", _IMPACT),
    "definition_phrase": lambda q: _definition_phrase(q.text, q.asked),
    "similar_phrase": _phrase_rule("similar_phrase", _SIMILAR),
    "error_token": lambda q: _literal(q.text, q.folded),
    "identifier": lambda q: _identifier(q.text, q.folded),
    "explanation_word": _explanation_rule,
}
for _name in ("quoted_string", "literal_phrase"):
    _DECIDED_BY[_name] = _DECIDED_BY["error_token"]
_DECIDED_BY["identifier_in_sentence"] = _DECIDED_BY["identifier"]


def _rule_order(rules: tuple[Rule, ...] = RULES) -> tuple[Callable[[_Question], Classification | None], ...]:
    """The deciding functions in the order of `intents.RULES` (the fallback and the task
    description are not tried in turn). A function deciding several rules must decide
    neighbours in the table: otherwise the table's order could not be kept."""
    tried = [rule.name for rule in rules if rule.name not in ("fallback", "task_description")]
    if set(tried) != set(_DECIDED_BY):
        raise AssertionError(f"rules without a deciding function, or functions without a rule: {set(tried) ^ set(_DECIDED_BY)}")
    order: list[Callable[[_Question], Classification | None]] = []
    for name in tried:
        decide = _DECIDED_BY[name]
        if decide in order and order[-1] is not decide:
            raise AssertionError(f"the rule {name} is decided with rules that are not its neighbours")
        if not order or order[-1] is not decide:
            order.append(decide)
    return tuple(order)


_RULE_ORDER = _rule_order()


def classify_question(query: str) -> Classification:
    """The classification by SPEC's ordered rules alone, tried in the order of `intents.RULES`
    (`classify` then reads a task description's span as a hint)."""
    text = query.strip()
    if not text:
        return _result("fallback")
    folded = text.lower()
    if len(folded) != len(text):
        folded = text.translate(_ASCII_LOWER)
    question = _Question(text, folded, _mask_quoted(folded))
    for decide in _RULE_ORDER:
        found = decide(question)
        if found is not None:
            return found
    return _result("fallback")
