"""The audit's ``fragment`` and ``trailer`` checks: what redaction may have left in a visible title or
description that no person would write.

Three kinds of fragment, each counted apart:

  dangling-end          a title or sentence ends in a word that needs a continuation ("Reconcile and",
                        "Done in", "Useful for solving"): where a reference was cut
  leading-punctuation   a line starts with punctuation a removal left (": Interactive container ...")
  id-remnant            digits glued to punctuation where part of an id was (``-39338`` of a CVE id,
                        ``.1-`` of ``Docker-DCO-1.1-``)

A title can really end in "to" and a log line can start with ")". With the mined repository the
audit reads the commit's own message, and a candidate the author wrote there too is the author's:
only what the message does not hold is a fragment, and an error. Without the repository each
candidate is a warning. The checks share no code with the stripping that made the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

KINDS = ("dangling-end", "id-remnant", "leading-punctuation")

# Words after which a sentence cannot end: conjunctions, prepositions, articles, verbs that take a reference.
_DANGLING = frozenset(
    "and or but nor of in for to from by with at on via into per than the a an see solving fixing fixes closes "
    "resolves refs addresses".split()
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")
_LEADING = re.compile(r"^\s*([,;:.)\]}])(?![.:\w])")
_REMNANTS = (
    re.compile(r"(?<![\w.+~/@-])-\d{4,}\b(?![.\d])"),  # -39338 of CVE-2024-39338
    re.compile(r"(?<![\w.])\.\d+-[A-Za-z]"),  # .1- of Docker-DCO-1.1-Signed-off-by
    re.compile(r"\b(?:CVE|GHSA)-(?![\w])"),  # an advisory id's prefix alone
)


def trailer_lines(text: str, keys: list[str]) -> Iterator[str]:
    """Lines that are trailers: a known key with any prefix (``Docker-DCO-1.1-Signed-off-by:``), or a
    DCO sign-off however it was cut."""
    names = "|".join(re.escape(k) for k in keys)
    known = re.compile(rf"^\s*(?:[\w.]+-)*(?:{names})\s*:\s*\S", re.I)
    for line in text.split("\n"):
        if known.match(line) or re.search(r"signed-off-by|\bDCO-\d", line, re.I):
            yield line.strip()


def _prose(description: str) -> Iterator[str]:
    """The description's units of prose: list items and paragraphs, each joined into one line;
    code (fenced or indented by four) is left out."""
    fenced = False
    item: list[str] = []
    for line in [*description.split("\n"), ""]:
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith(("    ", "\t")):
            continue
        if not line.strip() or _BULLET.match(line):
            if item:
                yield " ".join(item)
            item = [_BULLET.sub("", line).strip()] if line.strip() else []
        else:
            item.append(line.strip())


def _sentences(title: str, description: str) -> list[str]:
    units = [title, *_prose(description)]
    return [s for unit in units for s in _SENTENCE.split(unit) if s.strip()]


def _tail(sentence: str, n: int = 3) -> tuple[str, ...]:
    words = re.findall(r"[\w'-]+", sentence.lower())
    return tuple(words[-n:])


def _ends_dangling(sentence: str) -> bool:
    """The sentence's last word needs a continuation; one stop may follow it ("Done in."), not a
    bracket or a quote that closes (``"opt in to"``) nor more (``in ??`` of a backtrace)."""
    last = re.search(r"([\w'-]+)\s*[.!?:;,]?\s*$", sentence)
    return last is not None and last.group(1).lower() in _DANGLING


def fragments(title: str, description: str, original: str | None) -> Iterator[tuple[str, str, bool]]:
    """(kind, what, confirmed) for each fragment candidate of a visible title and description;
    ``confirmed`` when ``original`` (the commit's message) is given and does not hold it."""
    subject, _, body = (original or "").strip().partition("\n")
    known_ends = {_tail(s) for s in _sentences(subject, body)}
    for sentence in _sentences(title, description):
        if _ends_dangling(sentence):
            yield "dangling-end", sentence.strip()[-60:], original is not None and _tail(sentence) not in known_ends
    starts = {" ".join(line.split())[:20] for line in (original or "").split("\n")}
    for line in [title, *description.split("\n")]:
        if line.startswith(("    ", "\t")) or not _LEADING.match(line):
            continue
        yield "leading-punctuation", line.strip()[:60], original is not None and " ".join(line.split())[:20] not in starts
    text = f"{title}\n{description}"
    for pattern in _REMNANTS:
        for m in pattern.finditer(text):
            token = m.group(0)
            glued = original is not None and re.search(rf"\w{re.escape(token)}|{re.escape(token)}\w", original) is not None
            yield "id-remnant", text[max(0, m.start() - 20) : m.end() + 20].strip(), glued
