"""Take references out of a message's prose whole, so what is left reads as a person wrote it.

A reference is part of a sentence ("Done in 0a2919f", "Useful for solving #424", "Reconcile #1477
and #2775"), so cutting the id alone leaves a fragment ("Done in", "Reconcile and"). Here each id
goes whole (``CVE-2024-39338``, never ``-39338``) together with what only served it: ids listed
beside it, the words that introduce it (``strip.lead_in_words``: "see", "fixes", "in", "solving"),
the brackets around it and the punctuation that joined it to the text. A sentence left without
content of its own then goes too. Nothing outside a removal changes: a line without an id comes
out exactly as it went in.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from miner.core.config import StripConfig

_URL = re.compile(r"(?:[\w+.-]*(?:https?|ftp|ssh|git)://|\bwww\.)[^\s<>\"'`\\]+?(?=[.,;:!?'\")\]>\\]*(?:\s|$))", re.I)
_MARKDOWN_LINK = re.compile(r"\[([^\]\n]+)\]\(((?:https?|ftp)://[^)\s]+)\)", re.I)
_EMAIL = re.compile(r"<?\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+>?")
_FIXED_IDS = re.compile(
    r"\bCVE-\d{4}-\d{4,}\b"  # advisories: the whole id, not the part after the year
    r"|\bGHSA(?:-[0-9a-z]{4}){3}\b"
    r"|\bpull request #\d+ from [\w./-]+"  # "Merge pull request #12 from owner/issue-12-branch"
    r"|\b[\w.-]+/[\w.-]+#\d+\b"  # owner/repo#123
    r"|\b[A-Za-z]{1,6}#\d+\b"  # PR#12, bz#12, rhbz#12
    r"|(?<![\w&#])#\d+\b"  # #12, not &#12; (an HTML entity)
    r"|\b(?:GH|GL)-\d+\b"
    r"|\b(?:issues?|PRs?|pull requests?|bugs?|tickets?|MRs?)\s+\d{2,}(?:(?:\s*,\s*|\s+(?:and|or)\s+)\d{2,})*\b",  # bugs 1 and 2
    re.I,
)
_KEY = re.compile(r"\b([A-Z][A-Z0-9]+)-\d+\b(?![.]\d)")  # PROJ-12; UTF-8 and GPL-2.0 are no tickets
_SHA = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b", re.I)
_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{7,40}(?![0-9A-Za-z])")  # any hex word that could name a commit
_GLUED_BEFORE = re.compile(r"(?<![\w.+~@-])[^\W_][\w]*(?:[-.+~@]+\w+)*[-.+~@]+$")
_REVISION = re.compile(r"[\^~]\d*")
# A commit's subject cited after its id: abc1234 ("subject"), or abc1234 "subject" on one line.
_CITED_SUBJECT = re.compile(r"\s*\(\s*\"(?:[^\n]|\n(?![ \t]*\n)){1,300}?\"\s*\)|[ \t]+\"[^\"\n]{1,200}\"")
_FOOTNOTE_MARK = re.compile(r"\[\w{1,3}\]")
_FOOTNOTE = re.compile(r"^[ \t]*\[(\w{1,3})\]:?[ \t]+(?:https?|ftp)://\S+[ \t]*$", re.M | re.I)
_SEPARATOR = re.compile(r"(?:\s|,|;|/|&|\+|\band\b|\bor\b)*", re.I)  # between ids listed together
_WORD = re.compile(r"[A-Za-z][\w'-]*|\d[\w.]*")
_PREVIOUS = re.compile(r"(?:^|(?<=[\s(\[]))([A-Za-z][A-Za-z'-]*|[a-z]\.[a-z]\.|&)\s*$")  # e.g. goes too
_BULLET = re.compile(r"[ \t]*(?:[-*+\u2022]|\d+[.)])?[ \t]*")
# Where a sentence ends: after . ! ? (not "e.g.") and a space, at a blank line, before a list item, after a
# line ending in ':'.
_BOUNDARY = re.compile(
    r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bcf\.)(?<!\bvs\.)[\"')\]]*[ \t]+"
    r"|(?<=[.!?])[\"')\]]*\n|\n[ \t]*\n\s*|\n(?=[ \t]*(?:[-*+\u2022]|\d+[.)])[ \t])|(?<=:)\n"
)
_MAX_LEAD_IN = 4  # words eaten before one reference: more and it is the sentence, not its lead-in
_MARK = "\x00"  # where a removal was: the tidying below touches only those places


@dataclass(frozen=True)
class Words:
    """The word lists of ``strip`` as sets (lower case)."""

    lead_in: frozenset[str]  # eaten anywhere in the run before a reference: "see", "fixes", "in"
    naming: frozenset[str]  # what a reference is called, eaten only right before it: "issue", "PR", "commit"
    auxiliary: frozenset[str]  # "be", "was": before a participle they make it the sentence's own verb
    clause: frozenset[str]  # "until", "since": they open a clause whose subject a reference may be
    filler: frozenset[str]  # no content by themselves
    min_words: int
    not_keys: frozenset[str]


def words_of(config: StripConfig) -> Words:
    lists = (config.lead_in_words, config.reference_words, config.auxiliary_words, config.clause_words, config.filler_words)
    return _words(tuple(tuple(x) for x in lists), config.min_words, tuple(config.not_issue_keys))


@lru_cache(maxsize=8)
def _words(lists: tuple[tuple[str, ...], ...], least: int, keys: tuple[str, ...]) -> Words:
    lead_in, naming, auxiliary, clause, filler = (frozenset(w.lower() for w in x) for x in lists)
    return Words(lead_in, naming, auxiliary, clause, filler, least, frozenset(keys))


_Edit = tuple[int, int, str]  # text[start:end] becomes the string


class _Eaten(NamedTuple):
    word: str
    start: int
    end: int


@dataclass
class _Cut:
    start: int
    end: int
    joined: bool = False  # the reference was part of the sentence (a word right before it): "Reconcile #12"
    label: bool = False  # "full diff: <link>": a line that only labels the reference
    first: bool = False  # nothing of the sentence before it
    replace: str = ""  # what stands in its place: "Commit <sha> broke X" -> "A commit broke X"


def id_spans(text: str, words: Words, is_commit: Callable[[str], bool] | None = None) -> list[tuple[int, int]]:
    """Where the ids are, each whole: links, addresses, advisory and issue ids, commit ids."""
    spans = [m.span() for m in _EMAIL.finditer(text)]
    found = [m.span() for p in (_URL, _FIXED_IDS) for m in p.finditer(text)]
    found += [m.span() for m in _KEY.finditer(text) if m.group(1) not in words.not_keys]
    spans += [(_whole_token(text, a, b)[0], b) for a, b in found]  # "pull-local#16756" goes whole
    hexes = [m.span() for m in _SHA.finditer(text)]
    if is_commit is not None:
        hexes += [m.span() for m in _HEX.finditer(text) if is_commit(m.group(0).lower())]
    for a, b in hexes:
        a, b = _whole_token(text, a, b)
        while m := _REVISION.match(text, b):  # abc1234^, abc1234~2: a revision of it
            b = m.end()
        cited = _CITED_SUBJECT.match(text, b)
        spans.append((a, cited.end() if cited else b))
    # A footnote whose text is only a link ("[1] https://...") goes, and so do its markers ("see [1]").
    for label in {m.group(1) for m in _FOOTNOTE.finditer(text)}:
        spans += [m.span() for m in re.finditer(rf"\[{re.escape(label)}\]", text)]
    return _merge(spans)


def _whole_token(text: str, start: int, end: int) -> tuple[int, int]:
    """A commit id glued into a longer token by '-', '.', '+', '~' or '@' (a Go pseudo-version
    ``v0.0.0-20260721132016-d427ff9ee9ad``, a range ``a1b2c3d..e4f5a6b``, ``moby@17d6f00``) takes the
    token along."""
    while m := _GLUED_BEFORE.search(text, max(0, start - 80), start):
        start = m.start()
    while m := re.match(r"[-.+~@]+\w+", text[end:]):
        end += m.end()
    return start, end


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def _segments(text: str) -> list[tuple[int, int]]:
    """Sentences (and list items, and lines that end in ':'), each without the space around it."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in [*_BOUNDARY.finditer(text), None]:
        end = m.start() if m else len(text)
        a, b = start, end
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            out.append((a, b))
        start = m.end() if m else len(text)
    return out


def _group(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Ids listed together ("#1477 and #2775", "#1, #2") are one reference."""
    groups: list[tuple[int, int]] = []
    for a, b in spans:
        if groups and _SEPARATOR.fullmatch(text[groups[-1][1] : a]):
            groups[-1] = (groups[-1][0], b)
        else:
            groups.append((a, b))
    return groups


def _eat_lead_in(text: str, start: int, floor: int, words: Words, named: bool = True) -> tuple[int, list[_Eaten]]:
    """The start of a reference with the words before it that only introduce it ("Done in",
    "Useful for solving", "Fixes LP bug", "originally deprecated in"), and those words, nearest
    first. ``named``: the reference may be called by a name ("issue #12"; not a footnote's "[1]")."""
    eaten: list[_Eaten] = []
    while len(eaten) < _MAX_LEAD_IN:
        m = _PREVIOUS.search(text, max(floor, start - 64), start)  # a word's length back, not the whole sentence
        if m is None:
            break
        word = m.group(1).lower()
        # "LP bug #12" goes whole; "issue" in "issue seen in #12" is the sentence's.
        naming = named and word in words.naming and all(w.word.lower() in words.naming for w in eaten)
        if not (word in words.lead_in or naming):
            break
        if _participle(word):
            before = _PREVIOUS.search(text, floor, m.start(1))
            if before and before.group(1).lower() in words.auxiliary:
                break  # "had to be reverted in <sha>": the participle is the sentence's verb
        eaten.append(_Eaten(m.group(1), m.start(1), m.end(1)))
        start = m.start(1)
    return start, eaten


def _participle(word: str) -> bool:
    """A past tense or participle: "introduced", "done", "broke"."""
    return word.endswith(("ed", "en")) or word in ("done", "made", "found", "brought", "broke", "did", "took")


def _cut(text: str, span: tuple[int, int], segment: tuple[int, int], words: Words) -> _Cut:
    s, e = segment
    start, eaten = _eat_lead_in(text, span[0], s, words, named=not _FOOTNOTE_MARK.fullmatch(text, *span))
    end = span[1]
    before, after = text[s:start].rstrip(), text[end:e]
    cut = _Cut(start, end)
    if before.endswith(("(", "[")) and after.lstrip().startswith((")", "]")):
        cut.start = len(before) + s - 1
        cut.end = end + len(after) - len(after.lstrip()) + 1
        before, after = text[s : cut.start].rstrip(), text[cut.end : e]
        cut.first = not before.strip() or _BULLET.fullmatch(before) is not None
        return cut
    at_end = re.fullmatch(r"[\s.!?)\]]*", after) is not None or re.match(r"[ \t.!?)\]]*\n", after) is not None
    cut.first = _BULLET.fullmatch(before) is not None
    # Joined: a word of the sentence right before it ("Reconcile #12"), not a comma ("Works now, see #12").
    cut.joined = bool(before) and not cut.first and (before[-1].isalnum() or before[-1] in "_`'\"")
    if at_end and re.search(r"(?:[,;:]|\s[-\u2013\u2014])$", before):
        cut.label = before.endswith(":")
        cut.start, _ = _eat_lead_in(text, s + len(before) - 1, s, words)  # "agent, see: <link>"
        before = text[s : cut.start].rstrip()
        if before.endswith((",", ";")):
            cut.start = s + len(before) - 1
            before = before[:-1].rstrip()
        line = max(s, text.rfind("\n", s, cut.start) + 1)
        if cut.label and len(_WORD.findall(text, line, cut.start)) <= 4:
            cut.start, cut.label = line, False  # a label on its own line ("Vendor doc: <link>") goes with it
            before = text[s:line].rstrip()
    elif (cut.first or before.endswith((",", ";"))) and (m := re.match(r"\s*(?:[,;:]|[-\u2013\u2014](?=\s))\s*", after)):
        cut.end = end + m.end()  # "Fix #12: the parser ..." -> "the parser ..."
    elif cut.first and (m := re.match(r"\s*(?:and|or|but)\s+", after, re.I)):
        cut.end = end + m.end()  # "Fix #12 and a typo" -> "a typo"
    elif subject := _subject(text, span, eaten, after, words):
        keep, noun = subject
        if keep:
            cut.start, cut.first = keep, False
        article = ("An " if noun[0].lower() in "aeiou" else "A ") if cut.first else "the "
        cut.replace = (" " if keep else "") + article + noun  # "A commit broke X"; "until the bug is fixed"
    return cut


def _subject(text: str, span: tuple[int, int], eaten: list[_Eaten], after: str, words: Words) -> tuple[int, str] | None:
    """When a reference is the subject of its sentence's verb ("Commit <sha> broke X", "Given bug
    968457 was reported", "workarounds until bug 1709118 is fixed"): where the cut starts instead
    (0: where it does; else after the word that opens the clause, which stays) and the noun that
    stands for it. Only a commit id, or an id called by its name, followed by a verb in the past or
    an auxiliary."""
    verb = re.match(r"\s*([a-z][\w'-]*)", after)
    if verb is None or not (_participle(verb.group(1)) or verb.group(1) in words.auxiliary):
        return None
    keep = 0
    if eaten and eaten[-1].word.lower() in words.clause:
        keep, eaten = eaten[-1].end, eaten[:-1]
    named = re.match(r"([A-Za-z]+)\s", text[span[0] : span[1]])
    if len(eaten) == 1 and eaten[0].word.lower() in words.naming:
        noun = eaten[0].word
    elif not eaten and named and named.group(1).lower() in words.naming:
        noun = named.group(1)
    elif not eaten and _SHA.match(text, span[0]):
        noun = "commit"
    else:
        return None
    return keep, noun if noun.isupper() else noun.lower()


def _content(remnant: str, words: Words) -> list[str]:
    return [w for w in _WORD.findall(remnant) if w.lower() not in words.filler]


def _keeps(text: str, segment: tuple[int, int], cuts: list[_Cut], words: Words) -> bool:
    """Whether a sentence keeps content of its own once its references are cut."""
    s, e = segment
    pieces, at = [], s
    for c in cuts:
        pieces += [text[at : c.start], c.replace]
        at = c.end
    remnant = " ".join([*pieces, text[at:e]])
    every = [w for w in _WORD.findall(remnant) if w[0].isalpha()]  # "[1]" alone is no content
    if not every:
        return False
    if any(c.joined for c in cuts) and len(_content(remnant, words)) < words.min_words:
        return False  # "Useful for solving #424" -> "Useful"
    if any(c.label for c in cuts) and len(every) <= 4:
        return False  # "full diff: <link>"
    first = _WORD.findall(remnant)[0]  # "0x7f60 in main" starts with the address, not with "in"
    # "See #12 for details" -> "for details": what is left only continued the reference.
    pointing = first in words.filler and first in words.lead_in and first not in words.naming  # "for", not "the"
    return not (any(c.first for c in cuts) and first.islower() and pointing)


def redact(text: str, words: Words, is_commit: Callable[[str], bool] | None = None) -> str:
    """``text`` without its references, each taken out whole; a sentence left empty goes."""
    text = _MARKDOWN_LINK.sub(lambda m: _link_text(m, words), text)
    spans = id_spans(text, words, is_commit)
    if not spans:
        return text
    segments = _segments(text)
    plans: list[list[_Edit] | None] = []  # per sentence: its cuts, or None when it goes whole
    for s, e in segments:
        inside = [sp for sp in spans if s <= sp[0] < e]
        cuts = _cuts(text, inside, (s, e), words) if inside else []
        keeps = not cuts or _keeps(text, (s, e), cuts, words)
        plans.append([(c.start, c.end, c.replace) for c in cuts] if keeps else None)
    for i in reversed(range(len(segments) - 1)):
        s, e = segments[i]
        plan = plans[i]
        if plan is not None and text[e - 1] == ":" and _announces_only_cuts(text, segments, plans, i):
            # What announced a link that went: a short label goes ("Details:"), a sentence now ends.
            plans[i] = None if _only_labels(text[s : e - 1], words) else [*plan, (e - 1, e, ".")]
    edits = [edit for (s, e), plan in zip(segments, plans) for edit in (plan if plan is not None else [(s, e, "")])]
    return _tidy(text, sorted(edits))


def _only_labels(label: str, words: Words) -> bool:
    """Whether a line that announced a link is nothing without it: a few words ("Details"), or words
    that end pointing ("Info from (config removed in latest edition)")."""
    found = _WORD.findall(re.sub(r"\s*\([^()]*\)$", "", label))
    return len(_WORD.findall(label)) <= 4 or not found or found[-1].lower() in words.lead_in


def _link_text(link: re.Match[str], words: Words) -> str:
    """A Markdown link as prose: its text, or the bare link when the text only points ("[here](...)",
    "[comment](...)"), so that it goes with its lead-in."""
    label = link.group(1)
    pointing = all(w.lower() in words.naming or w.lower() in words.lead_in for w in _WORD.findall(label))
    return link.group(2) if pointing else label


def _announces_only_cuts(text: str, segments: list[tuple[int, int]], plans: list[list[_Edit] | None], i: int) -> bool:
    """Whether every sentence after sentence ``i``, to the end of its paragraph, went whole."""
    j = i + 1
    while j < len(segments) and plans[j] is None:
        if j + 1 == len(segments) or re.search(r"\n[ \t]*\n", text[segments[j][1] : segments[j + 1][0]]):
            return True
        j += 1
    return False


def _cuts(text: str, spans: list[tuple[int, int]], segment: tuple[int, int], words: Words) -> list[_Cut]:
    """The cuts of one sentence: each reference with its lead-in and brackets; references that end up
    side by side ("(see [a@1234567] and [a@89abcde])") are cut again as one."""
    spans = _group(text, spans)
    while True:
        cuts = [_cut(text, span, segment, words) for span in spans]
        merged: list[_Cut] = []
        for c in cuts:
            if merged and _SEPARATOR.fullmatch(text[merged[-1].end : c.start]):
                last = merged[-1]
                merged[-1] = _Cut(last.start, c.end, last.joined or c.joined, last.label or c.label, last.first)
            else:
                merged.append(c)
        if len(merged) == len(cuts):
            return cuts
        spans = [(c.start, c.end) for c in merged]


def _closes(line: str, at: int) -> bool:
    """Whether the quote after a removal at ``at`` closes one opened before it: 'Revert "Add test"'."""
    quote = line[line.index(_MARK, at) :].lstrip(_MARK + " \t")[:1]
    return line[:at].count(quote) % 2 == 1


def _opens(line: str, at: int) -> bool:
    """Whether the quote just before a removal at ``at`` opens a quotation: 'Say "#12 works"'."""
    return line[:at].count(line[at - 1]) % 2 == 1


def _tidy(text: str, edits: list[_Edit]) -> str:
    """Apply the edits, then mend only the places they left: doubled or stray space, punctuation
    that now opens or closes a line, empty brackets, lines and paragraphs left empty."""
    pieces, at = [], 0
    for a, b, replace in edits:
        if a < at:  # inside an earlier edit (a sentence that went whole)
            continue
        pieces += [text[at:a], _MARK + replace]
        at = b
    out = "".join([*pieces, text[at:]])
    out = re.sub(r"[(\[][ \t]*\x00[ \t]*[)\]]|\"[ \t]*\x00[ \t]*\"|'[ \t]*\x00[ \t]*'", _MARK, out)  # left empty
    lines = []
    for line in out.split("\n"):
        if _MARK not in line:
            lines.append(line)
            continue
        lead = _BULLET.match(line)
        head = lead.group(0) if lead else ""
        body = line[len(head) :]
        body = re.sub(r"^(?:[\x00 \t]|[,;:.)\]](?![\w.]))+", lambda m: "" if _MARK in m.group(0) else m.group(0), body)
        body = re.sub(r"(?:[ \t,;:(\[]|\s[-\u2013\u2014])*\x00[ \t\x00]*$", "", body)
        body = re.sub(r"[ \t]*\x00[ \t]*(?=[,.;:!?)\]])", "", body)
        body = re.sub(r"[ \t]*\x00[ \t]*(?=[\"'])", lambda m: _MARK if _closes(m.string, m.start()) else m.group(0), body)
        body = re.sub(r"(?<=[\"'])[ \t]*\x00[ \t]*", lambda m: _MARK if _opens(m.string, m.start()) else m.group(0), body)
        body = re.sub(r"(?<=[(\[])[ \t]*\x00[ \t]*", "", body)
        body = re.sub(r"[ \t]*\x00[ \t\x00]*", lambda m: " " if m.group(0).strip(_MARK) else "", body)
        if re.search(r"\w", body):
            lines.append(head + body)
    out = "\n".join(lines).replace(_MARK, "")
    out = re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", out)
    return out.strip("\n")
