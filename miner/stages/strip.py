"""Stage 5: strip hints from what the reviewer will see.

Descriptions lose trailers of every shape (known keys anywhere, with any prefix such as
``Docker-DCO-1.1-``; the closing block git reads as trailers), and titles and descriptions lose
issue, advisory and PR references, links, e-mail addresses and commit ids, each whole with the
words that only introduce it (``redact``), so what is left reads as a person wrote it. A title
left with no content of its own is replaced by one made from the change, and the answer says so.
Comments on the change's added lines that flag a problem (FIXME, TODO, XXX, ...) are blanked in
place, so line numbers stay true, and commit ids on those lines are removed; every edit is
returned so the answer part can record it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import NamedTuple

from miner.core.config import StripConfig
from miner.core.lexer import comment_spans
from miner.core.records import Blanked
from miner.stages.redact import redact, words_of

_HEX_TOKEN = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{7,40}(?![0-9A-Za-z])")  # any hex word that could name a commit
_TRAILER_SHAPE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:[ \t]*\S")  # git's trailer: "Token: value"
_CHERRY_PICK = re.compile(r"^\s*\(cherry[- ]picked from commit [0-9a-f]+\)\s*$", re.I)
# What git writes into a revert's message: a reference, whole.
_REVERT = re.compile(r"This reverts commit [0-9a-f]{7,40}(?:,\s+reversing\s+changes\s+made\s+to\s+[0-9a-f]{7,40})?\.?", re.I)
_CONVENTIONAL = re.compile(r"^[\w/.-]+(?:\([^)]*\))?!?:\s*|^[\w/.-]+\([^)]*\)!?\s*$")  # "fix(sec): ", "area: "
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


class Message(NamedTuple):
    """A commit message as the reviewer sees it; ``title_replaced`` when the author's title had no
    content left once its references went, and one was made from the change."""

    title: str
    description: str
    title_replaced: bool = False


@lru_cache(maxsize=8)
def _known_trailer(keys: tuple[str, ...]) -> re.Pattern[str]:
    """A known trailer key, with any prefix (``Docker-DCO-1.1-Signed-off-by:``), and a value."""
    names = "|".join(re.escape(k) for k in keys)
    return re.compile(rf"^\s*(?:[\w.]+-)*(?:{names})\s*:\s*\S", re.I)  # "Issue:" alone heads a paragraph


def _without_trailers(lines: list[str], keys: tuple[str, ...]) -> list[str]:
    """The body's lines without trailers: every trailing paragraph that is a trailer block as git
    reads one (each line "Token: value" or an indented continuation, one at least a known key or a
    hyphenated token), then known keys wherever they are, with the indented lines that continue them."""
    known = _known_trailer(keys)
    lowered = {k.lower() for k in keys}
    lines = list(lines)
    while lines:
        while lines and not lines[-1].strip():
            lines.pop()
        start = len(lines)
        while start and lines[start - 1].strip():
            start -= 1
        block = lines[start:]
        shapes = [_TRAILER_SHAPE.match(line) or _CHERRY_PICK.match(line) or known.match(line) for line in block]
        if not block or not shapes[0] or not all(m or line[:1] in (" ", "\t") for m, line in zip(shapes, block)):
            break
        tokens = [m.group(1) if m.re is _TRAILER_SHAPE else "-" for m in shapes if m]
        if not any("-" in t or t.lower() in lowered for t in tokens):
            break
        del lines[start:]
    kept: list[str] = []
    in_trailer = False
    for line in lines:
        in_trailer = bool(
            known.match(line) or _CHERRY_PICK.match(line) or (in_trailer and line[:1] in (" ", "\t") and line.strip())
        )
        if not in_trailer:
            kept.append(line)
    return kept


def scrub(text: str, is_commit: Callable[[str], bool] | None = None, config: StripConfig | None = None) -> str:
    """``text`` without links, addresses, issue and advisory ids or commit ids, each taken out whole
    with the words that only introduce it (see ``redact``). ``is_commit``, when given, tells
    whether a hex word names a commit of the repository (``Follow-up to 3463408``)."""
    return redact(text, words_of(config or _default_strip()), is_commit)


@lru_cache(maxsize=1)
def _default_strip() -> StripConfig:
    from miner.core.config import load_config

    return load_config().strip


def raw_message(message: str, mode: str) -> tuple[str, str]:
    """(title, description) as the author wrote them: stripping switched off (``strip.enabled: false``)."""
    if mode == "none":
        return "", ""
    subject, _, body = message.strip().partition("\n")
    return subject.strip(), ("" if mode == "title" else body.strip())


def _drop(text: str, phrases: tuple[str, ...]) -> str:
    """``text`` without any of ``phrases`` (case and spacing ignored): a later fix's subject is the answer."""
    for phrase in phrases:
        words = phrase.strip().rstrip(".").split()
        if words:
            text = re.sub(r"\s+".join(re.escape(w) for w in words) + r"\.?", "", text, flags=re.I)
    return text


def _hollow(title: str) -> bool:
    """A title with no content of its own: nothing, or only a prefix such as ``fix(sec):``."""
    rest = _CONVENTIONAL.sub("", title, count=1)
    return not re.search(r"[A-Za-z]{2,}", rest)


def made_title(prefix: str, description: str, paths: Sequence[str]) -> str:
    """A plain title from the change: the description's first sentence when it stands alone
    (a sentence of 2-20 words that does not lead into a list), else one naming the files."""
    first = description.strip().split("\n\n", 1)[0]
    if first and not re.match(r"\s|[-*+>#|`]|\d+[.)]", first):
        flat = " ".join(first.split())
        end = _SENTENCE_END.search(flat)
        sentence = flat[: end.start()] if end else flat
        if 2 <= len(sentence.split()) <= 20 and len(sentence) <= 120 and not sentence.endswith((":", ",", ";")):
            return prefix + sentence
    names = list(dict.fromkeys(p.rsplit("/", 1)[-1] for p in paths)) or ["files"]
    if len(names) > 3:
        listed = f"{', '.join(names[:2])} and {len(names) - 2} more files"
    else:
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{prefix}Change {listed}"


def sanitize_message(
    message: str,
    mode: str,
    config: StripConfig,
    avoid: tuple[str, ...] = (),
    is_commit: Callable[[str], bool] | None = None,
    paths: Sequence[str] = (),
) -> Message:
    """The title and description of a commit message, with hints removed, for the given mode.

    ``avoid`` holds the subjects of the fixes that labelled this change; none may show.
    ``is_commit`` tells whether a hex word names a commit of the repository (see ``scrub``).
    ``paths`` are the files the change touched: a title left with no content names them.
    """
    if mode == "none":
        return Message("", "")
    words = words_of(config)
    message = _drop(message, avoid)
    subject, _, body = message.strip().partition("\n")
    title = redact(subject.strip(), words, is_commit)
    kept = _without_trailers(_REVERT.sub("", body).split("\n"), tuple(config.trailer_keys))
    description = redact("\n".join(kept).strip("\n"), words, is_commit).strip()
    replaced = title != subject.strip() and _hollow(title)
    if replaced:
        # The author's prefix ("fix(sec): ") stays when it holds no reference itself.
        prefix = _CONVENTIONAL.match(subject.strip())
        kept_prefix = prefix.group(0).rstrip(": ") + ": " if prefix and redact(prefix.group(0), words) == prefix.group(0) else ""
        title = made_title(kept_prefix, description, paths)
    return Message(title, "" if mode == "title" else description, replaced)


@lru_cache(maxsize=8)
def _marker(markers: tuple[str, ...]) -> re.Pattern[str]:
    words = "|".join(re.escape(m) for m in markers)
    return re.compile(rf"\b(?:{words})\b|(?<![\w&])#\d+\b|\b(?:GH|gh)-\d+\b|https?://", re.UNICODE)


def blank_comments(path: str, text: str, added: set[int], config: StripConfig) -> tuple[str, list[Blanked]]:
    """Blank, in place, the comments on added lines that flag a problem.

    The comment's text goes; the line and any code before the comment stay, so every line
    number of the file is unchanged.
    """
    marker = _marker(tuple(config.comment_markers))
    lines = text.split("\n")
    if not any(marker.search(lines[n - 1]) for n in added if 0 < n <= len(lines)):
        return text, []  # no added line could hold a flagged comment: skip the lexer
    every = comment_spans(path, text)
    flagged = {s.token for s in every if s.line in added and marker.search(s.text)}
    # A flagged comment goes whole, all its lines, so no stray comment end is left behind.
    spans = [s for s in every if s.token in flagged and s.line in added]
    if not spans:
        return text, []
    edits: list[Blanked] = []
    for span in sorted(spans, key=lambda s: (s.line, -s.start)):
        original = lines[span.line - 1]
        lines[span.line - 1] = (original[: span.start] + original[span.end :]).rstrip()
        edits.append(Blanked(path=path, line=span.line, text=span.text))
    edits.sort(key=lambda b: (b.line, b.text))
    return "\n".join(lines), edits


def drop_commit_ids(path: str, text: str, added: set[int], is_commit: Callable[[str], bool]) -> tuple[str, list[Blanked]]:
    """Remove, from the change's added lines, every hex word that names a commit of the repository
    (``/* follows 252790c53 */``), in place like a blanked comment; each removal is returned.

    Lines the change did not add are the base as it was, which a materialized fixture hands
    over whole; they are left alone.
    """
    lines = text.split("\n")
    edits: list[Blanked] = []
    for n in sorted(added):
        if not 0 < n <= len(lines):
            continue
        line = lines[n - 1]
        # A space before the id goes with it, so "as 252790c53 did" reads "as did".
        tokens = [
            (" " if m.start() and line[m.start() - 1] == " " else "") + m.group(0)
            for m in _HEX_TOKEN.finditer(line)
            if is_commit(m.group(0).lower())
        ]
        if not tokens:
            continue
        for token in tokens:
            line = line.replace(token, "", 1)
        lines[n - 1] = line.rstrip()
        edits += [Blanked(path=path, line=n, text=token) for token in tokens]
    return "\n".join(lines), edits
