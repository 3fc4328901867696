"""Which lines of a file are code, with a real lexer per language.

A prefix list is wrong in both directions: ``#include`` is code in C, and a
docstring line is not code in Python. Three lexers, fastest first:

- Python: one regular-expression scan for comments, strings, brackets and continuations, which
  tells a docstring (a statement of strings alone) from a string in an expression. It gives
  the same lines as the standard library's ``tokenize`` on every one of 3,359 files of mypy and
  flask, about 5x faster (``tokenize`` is pure Python before 3.12) and 50x faster than pygments;
- the C family (C, C++, Java, JavaScript, TypeScript, Go, Rust, C#, Kotlin, Swift, Scala):
  one regular expression that knows line comments, block comments and string, character
  and template literals, which is all that decides whether a line holds code;
- everything else: pygments, its regular-expression lexers run by ``miner.core.regex_lexers``
  (the same tokens, each found with one call: Ruby about 5x faster).
"""

from __future__ import annotations

import bisect
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Any

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.token import Comment, String, Text, Token, Whitespace
from pygments.util import ClassNotFound

from miner.core.regex_lexers import faster


@dataclass(frozen=True)
class CommentSpan:
    line: int  # 1-based
    start: int  # column of the first character, 0-based
    end: int  # column after the last character
    text: str
    token: int  # spans of one multi-line comment share this number


@lru_cache(maxsize=256)
def _lexer(path: str) -> Lexer | None:
    try:
        return faster(get_lexer_for_filename(path, stripnl=False, ensurenl=False, stripall=False))
    except ClassNotFound:
        return None


@lru_cache(maxsize=None)
def _is_comment(token: object) -> bool:  # a lexer has a few dozen token types: each is asked once
    return token in Comment and token not in Comment.Preproc and token not in Comment.PreprocFile or token in String.Doc


@lru_cache(maxsize=None)
def _is_blank_kind(token: object) -> bool:
    return token in Whitespace or token in Text


# What the lexers' loops ask of a token type, looked up once per type (asking pygments' types is slow):
# a comment, a string (not a comment), whitespace or text, or other code.
_COMMENT, _STRING, _BLANK, _CODE = "comment", "string", "blank", "code"
_KIND: dict[Any, str] = {}


def _kind(token: Any) -> str:
    kind = _COMMENT if _is_comment(token) else _STRING if token in String else _BLANK if _is_blank_kind(token) else _CODE
    _KIND[token] = kind
    return kind


class _Lexed:
    """The tokens pygments gives for one text: those read so far, and the stream of the rest. A stage
    that needs only the lines up to some line, or the tokens up to the first that differs from
    another version's, stops reading; the next stage to ask picks up where it stopped."""

    def __init__(self, stream: Iterator[tuple[Any, str]]) -> None:
        self.read: list[tuple[Any, str]] = []
        self._rest: Iterator[tuple[Any, str]] | None = stream
        self._failed: BaseException | None = None  # what stopped the stream, raised to every reader

    def __iter__(self) -> Iterator[tuple[Any, str]]:
        n = 0
        while True:
            if n < len(self.read):
                ready = self.read[n:]  # a copy: another reader may extend the list meanwhile
                yield from ready
                n += len(ready)
                continue
            if self._failed is not None:
                raise self._failed
            if self._rest is None:
                return
            try:
                more = list(islice(self._rest, 256))  # a few hundred at a time: fewer steps per token
            except BaseException as exc:
                self._failed = exc
                raise
            if not more:
                self._rest = None
                return
            self.read += more


_LEXED_KEEP = 8  # a fix's file is lexed by vet, then by the blame stage: the same few texts in a row
_LEXED_MOST_CHARS = 1 << 20  # a larger text is lexed each time it is asked: its tokens are not held
_KEPT = threading.local()  # each thread its own (one process may run tasks in threads: Dask)


def _kept() -> OrderedDict[tuple[str, str], _Lexed]:
    """This thread's texts lexed last, by (lexer, text)."""
    kept: OrderedDict[tuple[str, str], _Lexed] | None = getattr(_KEPT, "lexed", None)
    if kept is None:
        kept = _KEPT.lexed = OrderedDict()
    return kept


def _pygments_tokens(lexer: Lexer, text: str) -> _Lexed:
    """Every (token type, text) pygments gives for ``text``, kept for the last few texts: pygments is
    the slow lexer, and several stages in turn ask about one version of a file."""
    kept = _kept()
    key = (type(lexer).__name__, text)
    found = kept.get(key)
    if found is None:
        found = _Lexed(lexer.get_tokens(text))
        if len(text) > _LEXED_MOST_CHARS:
            return found
        kept[key] = found
        if len(kept) > _LEXED_KEEP:
            kept.popitem(last=False)
    else:
        kept.move_to_end(key)
    return found


C_FAMILY = (
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".cxx",
    ".hpp",
    ".hh",
    ".hxx",
    ".inc",
    ".java",
    ".js",
    ".jsx",
    ".mjs",
    ".cjs",
    ".ts",
    ".tsx",
    ".mts",
    ".cts",
    ".go",
    ".rs",
    ".cs",
    ".kt",
    ".kts",
    ".swift",
    ".scala",
    ".m",
    ".mm",
)
_C_TOKENS = re.compile(r"""(//[^\n]*|/\*.*?(?:\*/|\Z))|"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?|`(?:\\.|[^`\\])*`?""", re.S)
# Go's backquoted strings are raw: a backslash in one escapes nothing (`\` is one backslash), so a
# JavaScript template's rule would run on past its closing quote.
_GO_TOKENS = re.compile(r"""(//[^\n]*|/\*.*?(?:\*/|\Z))|"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?|`[^`]*`?""", re.S)


# Rust: a string may span lines; a raw string (r"..", r#".."#, with a b or c prefix too) has no
# escapes and may hold quotes; '\n' is a character but 'a in <'a> is a lifetime, not the start of one.
_RUST_RAW = r"""[bc]?r(?:"[^"]*"?|\#"(?:[^"]|"(?!\#))*(?:"\#)?|\#\#"(?:[^"]|"(?!\#\#))*(?:"\#\#)?)"""
_RUST_STRING = r"""[bc]?"(?:\\.|[^"\\])*"?"""
_RUST_CHAR = r"""b?'(?:\\(?:u\{[0-9A-Fa-f_]*\}|x[0-9A-Fa-f]{2}|.)|[^'\\\n])'"""
_RUST_LITERALS = "|".join((_RUST_RAW, _RUST_STRING, _RUST_CHAR, r"'[A-Za-z_]\w*"))
_RUST_TOKENS = re.compile(r"(//[^\n]*|/\*.*?(?:\*/|\Z))|" + _RUST_LITERALS, re.S)


def _c_scanner(path: str) -> re.Pattern[str]:
    lower = path.lower()
    return _GO_TOKENS if lower.endswith(".go") else _RUST_TOKENS if lower.endswith(".rs") else _C_TOKENS


def _c_comments(text: str, path: str = "") -> list[tuple[int, int]]:
    """Character ranges of the comments of a C-family source (strings are skipped whole)."""
    scanner = _c_scanner(path)
    return [m.span() for m in scanner.finditer(text) if m.lastindex]


_NOT_NEWLINE = re.compile(r"[^\n]")


def _masked(text: str, ranges: list[tuple[int, int]]) -> str:
    """The text with every range blanked (newlines kept), so line numbers stay true."""
    parts: list[str] = []
    last = 0
    for start, end in ranges:
        parts.append(text[last:start])
        blanked = text[start:end]
        parts.append(" " * len(blanked) if "\n" not in blanked else _NOT_NEWLINE.sub(" ", blanked))
        last = end
    parts.append(text[last:])
    return "".join(parts)


# Comments, string literals (any prefix, triple-quoted or not), brackets, backslash continuations
# and newlines: all a scan needs to find comments and docstrings. An unterminated string runs to
# the end of its line (or, triple-quoted, of the file), as the tokenizer would have it. Everything
# else on a line is one `other` run; a word right before a quote is left to `string` (its prefix).
_PY_COMMENT = r"\#[^\n]*"
_PY_STRING = r"""[rRbBuUfF]{0,2}(?:'''(?:\\.|.)*?(?:'''|\Z)|\"\"\"(?:\\.|.)*?(?:\"\"\"|\Z)
        |'(?:\\.|[^'\\\n])*'?|"(?:\\.|[^"\\\n])*"?)"""
_PY_TOKENS = re.compile(
    rf"""
    (?P<comment>{_PY_COMMENT})
  | (?P<string>{_PY_STRING})
  | (?P<open>[(\[{{]) | (?P<close>[)\]}}]) | (?P<cont>\\\r?\n) | (?P<newline>\n)
  | (?P<other>(?:[^\s\w\#'"()\[\]{{}}\\]|\w++(?!['"]))(?:[^\n\w\#'"()\[\]{{}}\\]|\w++(?!['"]))*|\\)
""",
    re.S | re.X,
)
# Only the comments and strings of _PY_TOKENS: a search for them passes over the code between at
# once, and meets each where the whole scan meets it (no other token holds a quote or a `#`).
_PY_LITERALS = re.compile(f"{_PY_COMMENT}|{_PY_STRING}", re.S | re.X)


def python_long_string_lines(text: str) -> set[int]:
    """The lines (from 1) of a Python source that a string literal running over several lines
    touches: there, a line read alone does not give the tokens it gives in the file."""
    lines: set[int] = set()
    for match in _PY_LITERALS.finditer(text):
        breaks = match.group().count("\n")
        if breaks:
            first = text.count("\n", 0, match.start()) + 1
            lines.update(range(first, first + breaks + 1))
    return lines


def _python_masks(text: str, upto: int | None = None) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character ranges of the comments and of the docstrings of a Python source.

    A docstring is a statement made only of string literals: strings that open a logical line
    (outside brackets) and are followed by nothing but more strings, comments and continuations
    before the line ends. One regular-expression scan, several times faster than ``tokenize``
    (which is pure Python before 3.12), and it never fails on a file that is not valid Python 3.
    """
    comments: list[tuple[int, int]] = []
    docstrings: list[tuple[int, int]] = []
    depth = 0
    line_start = True  # no token yet on this logical line
    pending: list[tuple[int, int]] = []  # strings that may turn out to be a docstring
    line = 1
    for m in _PY_TOKENS.finditer(text):
        kind = m.lastgroup
        if kind == "comment":
            comments.append(m.span())
            continue
        if kind == "cont":
            line += 1
            continue
        if kind == "newline":
            line += 1
            if depth == 0:
                docstrings += pending
                pending = []
                line_start = True
            if upto is not None and line > upto and not pending:
                break
            continue
        if kind == "string" and (line_start or pending):
            pending.append(m.span())
            line_start = False
            line += m.group().count("\n")
            continue
        pending = []
        line_start = False
        if kind == "string":
            line += m.group().count("\n")
        elif kind == "open":
            depth += 1
        elif kind == "close":
            depth = max(0, depth - 1)
    docstrings += pending
    return comments, docstrings


def _python_code_lines(text: str, upto: int | None) -> set[int]:
    """Lines of Python holding code: comments and docstrings are blanked, then blank lines dropped."""
    comments, docstrings = _python_masks(text, upto)
    masked = _masked(text, sorted(comments + docstrings))
    return {n for n, line in enumerate(masked.split("\n"), 1) if line.strip()}


def code_lines(path: str, text: str, upto: int | None = None) -> set[int]:
    """1-based numbers of the lines holding code: not blank, not only comments.

    With ``upto``, lexing stops once past that line: callers that need a few lines near the
    top of a large file do not pay for the rest. Only lines up to ``upto`` are answered for then.
    """
    if path.endswith((".py", ".pyi")):
        return _python_code_lines(text, upto)
    if path.lower().endswith(C_FAMILY):
        if upto is not None:  # a lexer reads left to right: the lines up to ``upto`` need only what precedes them
            text = "\n".join(text.split("\n", upto)[:upto])
        masked = _masked(text, _c_comments(text, path))
        return {n for n, line in enumerate(masked.split("\n"), 1) if line.strip()}
    lexer = _lexer(path)
    if lexer is None:  # a configuration file or a script of no known language: '#' starts a comment
        return {n for n, line in enumerate(text.split("\n"), 1) if line.strip() and not line.lstrip().startswith("#")}
    code: set[int] = set()
    line = 1
    for token, value in _pygments_tokens(lexer, text):  # read no further than ``upto`` needs
        kind = _KIND.get(token) or _kind(token)
        if "\n" not in value:  # most tokens: a line holds code if one of its tokens is code
            if kind is not _COMMENT and value.strip():
                code.add(line)
            continue
        if kind is not _COMMENT and not (kind is _BLANK and not value.strip()):
            for n, part in enumerate(value.split("\n")):
                if part.strip():
                    code.add(line + n)
        line += value.count("\n")
        if upto is not None and line > upto:
            break
    return code


def comment_spans(path: str, text: str) -> list[CommentSpan]:
    """Every comment in the file, split per line, with columns, for blanking in place."""
    if path.lower().endswith(C_FAMILY):
        return _spans(text, _c_comments(text, path))
    if path.endswith((".py", ".pyi")):
        return _spans(text, _python_masks(text)[0])
    lexer = _lexer(path)
    if lexer is None:
        return []
    spans: list[CommentSpan] = []
    line, col = 1, 0
    for index, (token, value) in enumerate(_pygments_tokens(lexer, text)):
        parts = value.split("\n")
        if token in Comment and token not in Comment.Preproc and token not in Comment.PreprocFile:
            for n, part in enumerate(parts):
                start = col if n == 0 else 0
                if part:
                    spans.append(CommentSpan(line + n, start, start + len(part), part, index))
        if len(parts) > 1:
            line += len(parts) - 1
            col = len(parts[-1])
        else:
            col += len(value)
    return spans


def _spans(text: str, ranges: list[tuple[int, int]]) -> list[CommentSpan]:
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    spans: list[CommentSpan] = []
    for index, (start, end) in enumerate(ranges):
        line = bisect.bisect_right(starts, start)
        col = start - starts[line - 1]
        for n, part in enumerate(text[start:end].split("\n")):
            first = col if n == 0 else 0
            if part:
                spans.append(CommentSpan(line + n, first, first + len(part), part, index))
    return spans


__all__ = ["CommentSpan", "code_lines", "comment_spans", "Token"]


# -- tokens: to tell a change of behaviour from one of layout --------------------------------

# A string, a word or one other character; a token that starts with a quote is a string.
_C_TOKEN = re.compile(
    r"""
    "(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?|`(?:\\.|[^`\\])*`?
  | [A-Za-z_$][\w$]*|\d[\w.]*
  | \S
""",
    re.S | re.X,
)
_GO_TOKEN = re.compile(
    r"""
    "(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?|`[^`]*`?
  | [A-Za-z_$][\w$]*|\d[\w.]*
  | \S
""",
    re.S | re.X,
)
_RUST_TOKEN = re.compile(_RUST_LITERALS + r"|[A-Za-z_]\w*|\d[\w.]*|\S", re.S)
# The same tokens in one scan: a comment is matched whole and left out (it fills no group, so findall
# gives it as an empty token). This gives what blanking the comments first (``_c_comments``) and then
# scanning gives: every quote and every '/' begins a token here as it begins a match there (no word,
# number or other token holds one), and strings are matched alike, so both scans agree on where each
# string and each comment begins and ends.
_C_ONE_PASS = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)|(" + _C_TOKEN.pattern + ")", re.S | re.X)
_GO_ONE_PASS = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)|(" + _GO_TOKEN.pattern + ")", re.S | re.X)
_QUOTES = "\"'`"
_RAW = re.compile(r"([bc]?r)(#*)\"(.*?)(?:\"\2)?\Z", re.S)


def _rust_token(token: str) -> str:
    """A Rust token as ``code_tokens`` gives it: a literal as a string (a raw one too: ``r#"a"#`` is
    the string a with the prefix r); a lifetime (``'a``) or a word as it is."""
    raw = _RAW.match(token)
    if raw:
        return f"S{raw.group(1).lower()}:{raw.group(3)}"
    if token[0] == "'" and not (len(token) > 2 and token.endswith("'")):
        return token  # a lifetime or a label
    return _normal_string(token) if token[0] in _QUOTES or token[:2] in ('b"', 'c"', "b'") else token


def _normal_string(text: str) -> str:
    """A string literal without its quote style ('a' and "a" are one string), as ``S<prefix>:<body>``.
    Prefixes (b, r, f, u) are kept: they can change what the literal is."""
    match = re.match(r"[A-Za-z]{0,2}(?=[\"'`])", text)
    prefix = match.group().lower() if match else ""
    body = text[match.end() :] if match else text
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    if quote and quote[0] in _QUOTES:
        body = body[len(quote) : -len(quote)] if body.endswith(quote) and len(body) >= 2 * len(quote) else body[len(quote) :]
    return f"S{prefix}:" + body.replace('\\"', '"').replace("\\'", "'")


def code_tokens(path: str, text: str) -> list[str] | None:
    """The tokens of a source file, without comments, whitespace and quote style: two versions
    with the same tokens differ only in layout (a formatter's run, re-wrapped lines, comments).
    Strings are kept as ``S:<body>``. None when the language is not known."""
    tokens = code_token_stream(path, text)
    return None if tokens is None else list(tokens)


def code_token_stream(path: str, text: str) -> Iterator[str] | None:
    """``code_tokens`` one at a time: where pygments lexes the file, only as far as they are read."""
    lower = path.lower()
    if lower.endswith(C_FAMILY):
        if lower.endswith(".rs"):
            return iter([_rust_token(t) for t in _RUST_TOKEN.findall(_masked(text, _c_comments(text, path)))])
        scanner = _GO_ONE_PASS if lower.endswith(".go") else _C_ONE_PASS
        return iter([_normal_string(t) if t[0] in _QUOTES else t for t in scanner.findall(text) if t])
    if lower.endswith((".py", ".pyi")):
        return iter(_python_tokens(text))
    lexer = _lexer(path)
    if lexer is None:
        return None
    return _pygments_code_tokens(_pygments_tokens(lexer, text))


def _python_tokens(text: str) -> list[str]:
    # One scan: a comment is matched whole and left out, which gives the same tokens as scanning
    # the text with its comments blanked (a comment runs to the end of its line).
    out: list[str] = []
    for m in _PY_TOKENS.finditer(text):
        kind, value = m.lastgroup, m.group()
        if kind in ("newline", "cont", "comment") or not value.strip():
            continue
        if kind == "string":
            out.append(_normal_string(value))
        else:
            out += _C_TOKEN.findall(value)
    return out


def _pygments_code_tokens(lexed: _Lexed) -> Iterator[str]:
    string = ""  # pygments gives a literal in pieces (quotes, body, escapes): joined into one
    for token, value in lexed:
        kind = _KIND.get(token) or _kind(token)
        if kind is _STRING:
            string += value
            continue
        if string:
            yield _normal_string(string)
            string = ""
        if kind is _COMMENT:
            continue
        value = value.strip()
        if value:
            yield value
    if string:
        yield _normal_string(string)
