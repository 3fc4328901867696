"""Stage 5: strip hints from what the reviewer will see.

Descriptions lose trailers, issue and PR references, links, e-mail addresses and anything
that looks like a commit SHA or names a commit. Comments on the change's added lines that flag a
problem (FIXME, TODO, XXX, ...) are blanked in place, so line numbers stay true, and commit ids
on those lines are removed; every edit is returned so the answer part can record it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from miner.core.config import StripConfig
from miner.core.lexer import comment_spans
from miner.core.records import Blanked

_URL = re.compile(r"(?:https?|ftp|ssh|git)://\S+|\bwww\.\S+", re.I)
_EMAIL = re.compile(r"<?[\w.+-]+@[\w-]+(?:\.[\w-]+)+>?")
_ISSUE = re.compile(r"(?:\b(?:GH|gh|GL|gl)-\d+\b|(?<![\w&])#\d+\b|\b[A-Z][A-Z0-9]+-\d+\b|\b[\w.-]+/[\w.-]+#\d+\b)")
_SHA = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b", re.I)
_HEX_TOKEN = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{7,40}(?![0-9A-Za-z])")  # any hex word that could name a commit
_CLOSING = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|see|refs?|related to|cherry[- ]picked from( commit)?)"
    r"\s*:?\s*(?=$|[,.;)\]])",
    re.I,
)


@lru_cache(maxsize=8)
def _trailer(keys: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(re.escape(k) for k in keys)
    return re.compile(rf"^\s*(?:{names})\s*:.*$|^\s*\(cherry picked from commit [0-9a-f]+\)\s*$", re.I)


_REF_SENTENCE = re.compile(
    r"\b(?:this\s+|which\s+|that\s+|and\s+)?(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|refs?|see|addresse[sd])\s+"
    r"(?:issue\s+|bug\s+|pr\s+)?(?:(?:[\w.-]+/[\w.-]+)?#|GH-|gh-|[A-Z][A-Z0-9]+-)\d+\b[.,;]?",
    re.I,
)


def scrub(text: str, is_commit: Callable[[str], bool] | None = None) -> str:
    """Remove links, addresses, references and SHAs from one piece of text. ``_SHA`` catches
    what looks like a SHA (digits and letters); ``is_commit``, when given, also any other hex
    word that names a commit of the repository (``Follow-up to 3463408``)."""
    text = _REF_SENTENCE.sub("", text)
    for pattern in (_URL, _EMAIL, _ISSUE, _SHA):
        text = pattern.sub("", text)
    if is_commit is not None:
        text = _HEX_TOKEN.sub(lambda m: "" if is_commit(m.group(0).lower()) else m.group(0), text)
    text = _CLOSING.sub("", text)
    text = re.sub(r"\([\s,;]*\)|\[[\s,;]*\]", "", text)
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r"\s+([,.;:)])", r"\1", text)
    return text.strip(" \t-:;,")


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


def sanitize_message(
    message: str, mode: str, config: StripConfig, avoid: tuple[str, ...] = (), is_commit: Callable[[str], bool] | None = None
) -> tuple[str, str]:
    """(title, description) of a commit message, with hints removed, for the given mode.

    ``avoid`` holds the subjects of the fixes that labelled this change; none may show.
    ``is_commit`` tells whether a hex word names a commit of the repository (see ``scrub``).
    """
    if mode == "none":
        return "", ""
    message = _drop(message, avoid)
    lines = message.strip().split("\n")
    title = scrub(lines[0], is_commit)
    if mode == "title":
        return title, ""
    trailer = _trailer(tuple(config.trailer_keys))
    kept = [scrub(line, is_commit) for line in lines[1:] if not trailer.match(line)]
    # A trailer-like "Key: value" block at the very end is metadata, whatever its key.
    while kept and re.match(r"^[A-Za-z][\w-]*:\s", kept[-1]) and "-" in kept[-1].split(":")[0]:
        kept.pop()
    description = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return title, description


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
