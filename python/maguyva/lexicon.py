"""Words of code and of questions: identifier splitting, query words, a light stemmer, and the
word lists every stage reads (stopwords, kind keywords, kinds by role).

Code names and questions speak differently: `parseConfigHTTPServer_v2` is five words to a person,
and "how are configs parsed" should meet `parse_config`. These helpers bring both to one form:

- `split_identifier` cuts an identifier at case changes, acronyms and separators, lowercased.
  Digits stay with the word before them (`v2`, `utf8`, `base64`, `http2`), because that is
  how they are read; digits with no word before them are a word of their own.
- `query_words` lists the words of a question: identifiers are split like names in code,
  English stopwords are dropped (unless nothing else is left), and duplicates are removed.
- `stem` folds inflected and derived forms onto one key (`parses`, `parsing`, `parsed`,
  `parser`, `parse` -> `pars`; `authentication`, `authenticated`, `authenticate` -> `authentic`;
  `persistence`, `persisted` -> `persist`; `entries`, `entry` -> `entri`).
  It is a small suffix stripper, not a linguistic stemmer: the keys are not words, they only have
  to agree between a question and the code, so both sides go through the same function. One
  suffix from `_SUFFIXES` is removed (the first that fits), then a remaining "-er" (so that
  `filtering` meets `filter`), then a final "e", or a final "y" after a consonant becomes "i".
  Words of three letters or fewer, and words with digits, are left alone; a suffix is only
  removed when at least three letters remain (four for "-ed", so `embed` and `speed` survive;
  `added` still becomes `add`). Unrelated words can share a key (`server` and `serve`,
  `heading` and `header`): for ranking, a small price.
"""

from __future__ import annotations

import re
from functools import lru_cache

from maguyva._core import (
    STEM_AGENT,
    STEM_KEEP_DOUBLE,
    STEM_NOT_PLURAL,
    STEM_SUFFIXES,
    STEM_UNDOUBLE,
    name_stems,
    name_words,
)

# One word of an identifier: an acronym before a capitalised word (the "HTTP" of "HTTPServer"),
# a capitalised or lowercase word, a run of capitals, each with the digits that follow it; or a
# run of digits. "Lowercase" is any letter but A-Z, so words in other scripts stay whole.
_LOWER = r"[^\W\d_A-Z]"
_PART = re.compile(rf"[A-Z]+(?=[A-Z]{_LOWER})[0-9]*|[A-Z]?{_LOWER}+[0-9]*|[A-Z]+[0-9]*|[0-9]+")
# Identifiers and words in free text: letters, digits, "_" and "$", optionally joined into a
# qualified name by ".", "::", "#" or "->".
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#|->)[A-Za-z_$][\w$]*)*|\w+")
_WORD = re.compile(r"[\w$]+")
_QUALIFIER_SEPARATORS = re.compile(r"::|#|->|\.")
# The same and PHP's namespace separator, for cutting a name's last part off.
_ANY_QUALIFIER_SEPARATOR = re.compile(r"::|\\|->|\.|#")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
# ASCII words of an identifier with digits apart, for literal search (`literal_parts`).
_LITERAL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# A camelCase or PascalCase word with an inner capital, whole, in a sentence.
_CAMEL_WORD = re.compile(r"\b(?:[A-Z][a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]*|[a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]+)\b")

#: Words that say nothing about code in a question. English function words, question words and
#: pronouns; not words that could name code ("file", "list", "test", "error" stay).
STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can cannot could did didn't do does doesn't doing don't down
    during each few for from further had has have having he her here hers herself him himself his
    how i if in into is isn't it it's its itself just let's me more most my myself no nor not of off
    on once only or other ought our ours ourselves out over own same she should so some such than
    that that's the their theirs them themselves then there there's these they this those through
    to too under until up very was we were what what's when where which while who whom why will
    with would you your yours yourself yourselves""".split()
)

# Suffixes in the order they are tried: (suffix, replacement, letters that must remain). After
# "-ing", "-ed" and "-er" a doubled final consonant is undoubled (stopped, getter); "ll", "ss" and
# "zz" are usually part of the word (install, pass, buzz). The core's tables, with which it stems
# ASCII words itself (`names::stem_ascii`): one list for both.
_SUFFIXES: tuple[tuple[str, str, int], ...] = tuple(STEM_SUFFIXES)
_UNDOUBLE = frozenset(STEM_UNDOUBLE)
_KEEP_DOUBLE = frozenset(STEM_KEEP_DOUBLE)
_NOT_PLURAL = tuple(STEM_NOT_PLURAL)


def split_identifier(identifier: str) -> list[str]:
    """The words of an identifier, lowercased: `parseConfigHTTPServer_v2` ->
    ["parse", "config", "http", "server", "v2"]. Any character that cannot be part of a word
    ("_", "-", ".", "::", spaces...) separates words."""
    if identifier.isalpha() and (identifier.islower() or identifier[1:].islower()):
        return [identifier.lower()]  # the common case of a plain word: no need for the pattern
    return [part.lower() for part in _PART.findall(identifier)]


def literal_parts(word: str) -> list[str]:
    """An identifier's words for a literal search, lowercased: as `split_identifier`, but digits
    stand apart (`http2Server` -> ["http", "2", "server"]), since a part is searched as a
    substring and "http" finds `http2` as well; ASCII letters only."""
    return [part.lower() for part in _LITERAL_PART.findall(word)]


def last_part(name: str) -> str:
    """The last part of a qualified name: `Foo::bar`, `a.b.bar`, `App\\Http\\bar`, `x->bar` -> `bar`."""
    return _ANY_QUALIFIER_SEPARATOR.split(name)[-1]


def camel_case_words(text: str) -> list[str]:
    """The camelCase and PascalCase words of a sentence with an inner capital (`SessionStore`,
    `parseConfig`; not `Session`): names written in prose, in order, with repeats."""
    return _CAMEL_WORD.findall(text)


def identifiers(text: str) -> list[str]:
    """The identifier-like tokens of free text, as written, possibly qualified
    (`Session.request`, `Foo::bar`, `pkg.Func`), in order, without duplicates."""
    seen: dict[str, None] = {}
    for token in _IDENTIFIER.findall(text):
        seen.setdefault(token, None)
    return list(seen)


def looks_like_code(token: str) -> bool:
    """Whether a token is spelled like an identifier rather than a word of prose: camelCase,
    PascalCase with an inner capital, snake_case, a qualified name, a word with digits, or an
    ALL_CAPS name of two or more letters."""
    if "_" in token or _QUALIFIER_SEPARATORS.search(token) or "$" in token:
        return any(c.isalpha() for c in token)
    if _CAMEL.search(token):
        return True
    if any(c.isdigit() for c in token) and any(c.isalpha() for c in token):
        return True
    return len(token) >= 2 and token.isupper()


def normalize_qualified(name: str) -> str:
    """A qualified name with its separators as dots: `Foo::bar`, `Foo#bar`, `Foo->bar` ->
    `Foo.bar`; call parentheses, quotes and surrounding punctuation removed."""
    name = name.strip().strip("`'\"")
    if name.endswith("()"):
        name = name[:-2]
    name = _QUALIFIER_SEPARATORS.sub(".", name)
    return ".".join(part for part in name.split(".") if part)


def words(text: str) -> list[str]:
    """Every word of `text`, identifiers split, lowercased, in order (with repeats)."""
    out: list[str] = []
    for token in _WORD.findall(text):
        out.extend(split_identifier(token))
    return out


def query_words(text: str) -> list[str]:
    """The words of a question, lowercased, in order, without repeats: identifiers are split into
    their words, English stopwords are dropped unless nothing else would be left."""
    all_words = list(dict.fromkeys(words(text)))
    kept = [w for w in all_words if w not in STOPWORDS]
    return kept or all_words


def code_words(source: bytes, skip: list[tuple[int, int]] | None = None) -> frozenset[str]:
    """The distinct words the names in `source` are made of, stemmed: ASCII identifiers split as
    `split_identifier` splits them, the words of three letters or more made of letters only
    (`parseHTTPConfig2` -> pars, http), leaving out the byte ranges `skip` (start, end: a file's
    comments). The index records them per file, and `coverage_words` reads a question the same
    way. The core does the splitting and the stemming (`maguyva._core.name_stems`): an index
    build meets every name of a repository once."""
    return frozenset(name_stems(source, skip or []))


def coverage_words(question: str) -> frozenset[str]:
    """`code_words` of a question, without its stopwords: the words a file that answers it
    would spell in its code."""
    return frozenset(stem(w) for w in name_words(question.encode("utf-8", errors="replace")) if w not in STOPWORDS)


_AGENT: tuple[tuple[str, str, int], ...] = tuple(STEM_AGENT)
_VOWELS = frozenset("aeiou")


@lru_cache(maxsize=1 << 18)
def stem(word: str) -> str:
    """The key `word` (lowercase) shares with its inflected and derived forms (see module docs)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    word = _strip(word, _SUFFIXES)
    # Verbs in "-er" lose it too once their own ending is gone: filtering -> filter -> filt, like
    # filter and filters; referred -> refer -> ref, like reference.
    word = _strip(word, _AGENT)
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    elif word.endswith("y") and len(word) > 3 and word[-2] not in _VOWELS:
        word = word[:-1] + "i"  # entry and entries, retry and retried
    return word


def _strip(word: str, suffixes: tuple[tuple[str, str, int], ...]) -> str:
    """`word` without the first of `suffixes` it ends with that leaves enough letters."""
    for suffix, replacement, keep in suffixes:
        if not word.endswith(suffix):
            continue
        base = word[: len(word) - len(suffix)]
        if len(base) < keep and not (suffix == "ed" and len(base) == 3 and base[-1] == base[-2]):
            continue
        if suffix == "s" and word.endswith(_NOT_PLURAL):
            continue
        if suffix in _UNDOUBLE and len(base) > 3 and base[-1] == base[-2] and base[-1] not in _KEEP_DOUBLE:
            base = base[:-1]
        return base + replacement
    return word


# --- word lists -------------------------------------------------------------------------------
# One place for every list of words or kinds, so that the classifier, the retrievers and the
# ranking read the same vocabulary. Lists that differ do so on purpose: each says whom it serves.

#: Words a kind may be written as -> the kind asked for: the structural retriever's reading of
#: the classifier's kind and of a leading keyword ("class X", "property x").
KIND_KEYWORDS = {
    "def": "function", "defn": "function", "func": "function", "fn": "function", "fun": "function",
    "function": "function", "sub": "function", "proc": "function", "method": "method",
    "class": "class", "struct": "struct", "interface": "interface", "protocol": "interface",
    "trait": "trait", "enum": "enum", "type": "type", "typedef": "type",
    "module": "module", "mod": "module", "package": "module", "namespace": "module",
    "const": "constant", "constant": "constant", "var": "variable", "let": "variable", "val": "variable",
    "variable": "variable", "macro": "macro", "field": "field", "property": "field",
}  # fmt: skip

#: Declaration keyword -> the symbol kind it declares (None: no kind filter); the classifier
#: reads "def parse", "class Session", "impl Read" with it: the kind keywords that start a
#: declaration, and three that declare without being a kind's name.
DECLARATION_KEYWORDS: dict[str, str | None] = {
    **{word: kind for word, kind in KIND_KEYWORDS.items()
       if word not in {"sub", "protocol", "constant", "variable", "field", "property"}},
    "impl": None, "import": "module", "macro_rules!": "macro",
}  # fmt: skip

#: A kind word next to a name in a sentence ("the Session class", "function parse_config") ->
#: symbol kind, for the classifier: the kind keywords that read as words of a sentence.
KIND_WORDS: dict[str, str] = {
    word: KIND_KEYWORDS[word]
    for word in ("function", "func", "method", "class", "interface", "struct", "enum", "trait", "type",
                 "constant", "const", "variable", "macro", "module", "package")
}  # fmt: skip

#: The kinds a kind keyword admits. Python protocols and abstract bases are classes; a Go
#: `type X struct` is a struct; so each family is broader than its keyword.
KIND_FAMILIES = {
    "function": frozenset({"function", "method", "macro"}),
    "method": frozenset({"method", "function"}),
    "macro": frozenset({"macro", "function"}),
    "class": frozenset({"class", "struct", "interface", "trait", "enum", "type"}),
    "struct": frozenset({"struct", "class", "type"}),
    "interface": frozenset({"interface", "trait", "class", "type"}),
    "trait": frozenset({"trait", "interface", "class", "type"}),
    "enum": frozenset({"enum", "class", "type"}),
    "type": frozenset({"type", "class", "struct", "interface", "enum", "trait"}),
    "module": frozenset({"module"}),
    "constant": frozenset({"constant", "variable"}),
    "variable": frozenset({"variable", "constant", "field"}),
    "field": frozenset({"field", "variable", "constant"}),
}

#: With no kind asked for, these rank below other kinds among equal matches.
MINOR_KINDS = frozenset({"variable", "field"})

#: Symbol kinds that are types: what a base class or an implemented interface resolves to.
TYPE_KINDS = frozenset({"class", "interface", "struct", "trait", "type", "enum"})
#: Kinds preferred over callables of the same name: types and modules.
NAMESPACE_KINDS = TYPE_KINDS | {"module"}

#: Kinds whose definitions never answer "where is X defined" over a type or function.
VALUE_KINDS = frozenset({"field", "variable", "constant"})

#: The methods of Python's built-in containers, strings, numbers and in-memory streams (dict,
#: list, set, frozenset, str, bytes, bytearray, tuple, int, float, io.StringIO, io.BytesIO,
#: io.TextIOWrapper; their public callables on CPython 3.11). Called on a receiver of unknown
#: type (`row.fields.update(...)`), such a name is more likely theirs than the one method of the
#: index that shares it.
PYTHON_BUILTIN_METHODS = frozenset("""
add append as_integer_ratio bit_count bit_length capitalize casefold center clear close
conjugate copy count decode detach difference difference_update discard encode endswith
expandtabs extend fileno find flush format format_map from_bytes fromhex fromkeys get getbuffer
getvalue hex index insert intersection intersection_update is_integer isalnum isalpha isascii
isatty isdecimal isdigit isdisjoint isidentifier islower isnumeric isprintable isspace issubset
issuperset istitle isupper items join keys ljust lower lstrip maketrans partition pop popitem
read read1 readable readinto readinto1 readline readlines reconfigure remove removeprefix
removesuffix replace reverse rfind rindex rjust rpartition rsplit rstrip seek seekable
setdefault sort split splitlines startswith strip swapcase symmetric_difference
symmetric_difference_update tell title to_bytes translate truncate union update upper values
writable write writelines zfill
""".split())

#: Kinds that declare a contract for others to implement.
CONTRACT_KINDS = frozenset({"interface", "trait"})

#: Definitions with bodies of their own (a method may be an interface's declaration).
BODY_KINDS = frozenset({"class", "struct", "function"})

#: Words of a question never searched for as literals: too common in questions to say anything
#: about code (the text retriever's list; "file" and "code" count here, not in `STOPWORDS`).
LITERAL_STOPWORDS = frozenset(
    """a an and are as at be by can code codebase do does file files find for from get
    how i in is it its me of on or show that the this to use used uses using was what when
    where which who why with work works""".split()
)

#: Question words that describe the search rather than the code, left out of the structural
#: retriever's word matching on top of `STOPWORDS`.
NOISE_WORDS = frozenset(
    """define defined defines definition definitions declare declared declares declaration
    declarations locate located location find show code work works implemented""".split()
)

#: Words of language syntax in signatures: they say nothing about what the code does.
SIGNATURE_KEYWORDS = frozenset(
    """def class func function fn fun pub public private protected internal static final abstract
    async await export default const let var val void return returns self this cls extends
    implements impl struct interface type enum trait where mut ref override virtual inline
    extern unsafe new in out of""".split()
)

#: Words the classifier skips before the subject of a phrase ("who calls *the* retry helper").
SUBJECT_LEAD_WORDS = frozenset(
    "the a an this that these those my our your its their any all every each some else "
    "function functions func method methods class classes struct structs interface interfaces "
    "trait traits enum enums type types constant constants const variable variables var field "
    "fields property properties attribute attributes module modules package packages file files "
    "code symbol symbols helper helpers api apis endpoint endpoints macro macros object objects "
    "def fn new old".split()
)
#: Words that cannot be the subject of a question to the classifier; a phrase whose first real word is one of these has none.
FUNCTION_WORDS = frozenset(
    "it when where what which who whom how why if is are was were be been being me us them him "
    "her in on at to from of for with into by and or not no i we you they there here anything "
    "something everything nothing anywhere everywhere so do does did can could would should will "
    "might may change changes changed break breaks used called calls use uses more less most much "
    "many".split()
)
#: Camel-cased words that are product names, not identifiers in the code being searched (the
#: classifier's).
PROPER_NOUNS = frozenset(
    "github gitlab bitbucket javascript typescript coffeescript postgresql mysql mongodb dynamodb "
    "bigquery graphql oauth oauth2 pytorch tensorflow numpy scipy pypi macos ios iphone "
    "ipad youtube linkedin powershell vscode intellij pycharm openai chatgpt devops openapi grpc "
    "webassembly elasticsearch opensearch rabbitmq nodejs camelcase pascalcase snake_case "
    "camel_case kebab_case".split()
)
#: Last segments that make "x.y" a file or host name rather than a qualified name (the classifier's).
NAME_ENDINGS = frozenset(
    "py pyi pyx js jsx ts tsx mjs cjs go rs java kt kts c h cc cpp hpp cs rb php swift scala sh "
    "bash zsh md rst txt json yaml yml toml ini cfg conf lock xml html htm css scss sql proto "
    "gradle mk cmake log csv env io com org net dev ai so dll exe wasm vue svelte lua pl ex exs "
    "erl hs ml clj dart zig jl ipynb".split()
)
#: errno names (POSIX and Linux), plus the few Node.js adds, that the classifier reads as error
#: codes; fixed so results do not depend on the platform it runs on.
ERRNO_NAMES = frozenset(
    "E2BIG EACCES EADDRINUSE EADDRNOTAVAIL EAFNOSUPPORT EAGAIN EALREADY EBADF EBADMSG EBUSY "
    "ECANCELED ECHILD ECONNABORTED ECONNREFUSED ECONNRESET EDEADLK EDEADLOCK EDESTADDRREQ EDOM "
    "EDQUOT EEXIST EFAULT EFBIG EHOSTDOWN EHOSTUNREACH EIDRM EILSEQ EINPROGRESS EINTR EINVAL EIO "
    "EISCONN EISDIR ELOOP EMFILE EMLINK EMSGSIZE EMULTIHOP ENAMETOOLONG ENETDOWN ENETRESET "
    "ENETUNREACH ENFILE ENOBUFS ENODATA ENODEV ENOENT ENOEXEC ENOLCK ENOLINK ENOMEM ENOMSG "
    "ENOPROTOOPT ENOSPC ENOSR ENOSTR ENOSYS ENOTBLK ENOTCONN ENOTDIR ENOTEMPTY ENOTRECOVERABLE "
    "ENOTSOCK ENOTSUP ENOTTY ENXIO EOPNOTSUPP EOVERFLOW EOWNERDEAD EPERM EPFNOSUPPORT EPIPE "
    "EPROTO EPROTONOSUPPORT EPROTOTYPE ERANGE EREMOTE EREMOTEIO EROFS ESHUTDOWN ESOCKTNOSUPPORT "
    "ESPIPE ESRCH ESTALE ETIME ETIMEDOUT ETOOMANYREFS ETXTBSY EUSERS EWOULDBLOCK EXDEV "
    "ENOTFOUND EAI_AGAIN EAI_NONAME EAI_FAIL ESOCKETTIMEDOUT".split()
)
