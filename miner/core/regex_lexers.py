"""pygments' regular-expression lexers, run several times faster, giving the same tokens.

A pygments ``RegexLexer`` tries the rules of its current state one after another at each position,
one regular-expression match called from Python per rule, until one matches; Ruby's first state
has about sixty rules, many behind lookbehinds, and a Ruby file of 2,000 lines took a fifth of a
second. Here the loop keeps what pygments' loops (``RegexLexer``'s and ``ExtendedRegexLexer``'s) do, so
the tokens are theirs: the same state stack and transitions, a newline that resets to ``root``, an
unmatched character given as an error token. But the search for the first rule that matches is one call:

- a state's rules are joined into one alternation, ``(rule1)|(rule2)|...``: Python's ``re`` tries
  the alternatives in order at the position and stops at the first that matches, as the loop
  does, and the match of an alternative is the rule's own (a numbered back-reference is renamed,
  so that it still names its rule's group; a rule that cannot be renamed stands alone, in turn);
- a rule whose matches cannot begin with the character at the position is left out of the
  alternation used there. What a match may begin with is read from the parsed pattern, and is
  a superset: any character for what is not understood, and any position for a rule that may
  match the empty string.

The match a callback (``bygroups``, a heredoc) is given is that of the rule's own pattern, as in
pygments. Only lexers that use pygments' loop unchanged are run so (``faster``); any other is
returned as it is.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from typing import Any

from pygments.lexer import ExtendedRegexLexer, Lexer, LexerContext, RegexLexer
from pygments.token import Error, Text, Whitespace, _TokenType

# The parsed form of a pattern, to read what its matches begin with (modules of re itself).
sre_parser: Any = importlib.import_module("re._parser")
sre_constants: Any = importlib.import_module("re._constants")

_ASCII = frozenset(range(128))
_CATEGORIES = {
    name: frozenset(c for c in range(128) if re.match(pattern, chr(c)))
    for name, pattern in (
        ("CATEGORY_DIGIT", r"\d"),
        ("CATEGORY_NOT_DIGIT", r"\D"),
        ("CATEGORY_SPACE", r"\s"),
        ("CATEGORY_NOT_SPACE", r"\S"),
        ("CATEGORY_WORD", r"\w"),
        ("CATEGORY_NOT_WORD", r"\W"),
        ("CATEGORY_LINEBREAK", r"\n"),
        ("CATEGORY_NOT_LINEBREAK", r"[^\n]"),
    )
}
_ANYTHING = (_ASCII, True, True)

# (ASCII codes a match may begin with, whether it may begin with another character, whether it may be empty)
Starts = tuple[frozenset[int], bool, bool]


def starts(pattern: str, flags: int) -> Starts:
    """What a match of ``pattern`` may begin with (a superset: see the module's docstring)."""
    try:
        parsed = sre_parser.parse(pattern, flags)
        if (flags | parsed.state.flags) & re.IGNORECASE:
            return _ANYTHING  # a letter's other case may be outside ASCII, or inside it
        return _sequence(list(parsed))
    except Exception:  # noqa: BLE001 - an internal form this reading does not know: anything may start a match
        return _ANYTHING


def _sequence(items: list[tuple[Any, Any]]) -> Starts:
    first: set[int] = set()
    other = False
    for op, av in items:
        chars, more, empty = _item(str(op), av)
        first |= chars
        other = other or more
        if not empty:
            return frozenset(first), other, False
    return frozenset(first), other, True


def _item(op: str, av: Any) -> Starts:
    if op == "LITERAL":
        return (frozenset({av}) if av < 128 else frozenset()), av >= 128, False
    if op == "NOT_LITERAL":
        return _ASCII - {av}, True, False
    if op == "ANY":
        return _ASCII, True, False
    if op == "IN":
        return _charset(av)
    if op == "BRANCH":
        found = [_sequence(list(alternative)) for alternative in av[1]]
        return frozenset().union(*(f[0] for f in found)), any(f[1] for f in found), any(f[2] for f in found)
    if op == "SUBPATTERN":
        _, added, _, pattern = av
        return _ANYTHING if added & sre_constants.SRE_FLAG_IGNORECASE else _sequence(list(pattern))
    if op == "ATOMIC_GROUP":
        return _sequence(list(av))
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        least, _, pattern = av
        chars, more, empty = _sequence(list(pattern))
        return chars, more, empty or least == 0
    if op in ("AT", "ASSERT", "ASSERT_NOT"):  # zero-width: the next item begins the match
        return frozenset(), False, True
    return _ANYTHING  # a back-reference, a conditional: anything


def _charset(items: list[tuple[Any, Any]]) -> Starts:
    chars: set[int] = set()
    other = False
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            chars.update((av,) if av < 128 else ())
            other = other or av >= 128
        elif name == "RANGE":
            low, high = av
            chars.update(range(low, min(high, 127) + 1))
            other = other or high >= 128
        elif name == "CATEGORY" and str(av) in _CATEGORIES:
            chars |= _CATEGORIES[str(av)]
            other = True
        else:  # a negated set, or what this reading does not know
            return _ASCII, True, False
    return frozenset(chars), other, False


_OCTAL = "01234567"
_GLOBAL_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")


def renamed(pattern: str, tag: str) -> str | None:
    """``pattern`` with each numbered back-reference (``\\2``) made a named one (``(?P=tag_2)``) and the
    group it names named so, to stand in a larger alternation; None for a pattern that cannot stand
    in one (named groups, which could clash, conditionals, flags for the whole pattern)."""
    groups: list[int] = []  # where each capturing group opens
    refs: list[tuple[int, int, int]] = []  # (start, end, group number) of each back-reference
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\":
            digit = pattern[i + 1 : i + 2]
            if not in_class and digit and digit in "123456789":
                if len(pattern[i + 1 : i + 4]) == 3 and all(d in _OCTAL for d in pattern[i + 1 : i + 4]):
                    i += 4  # three octal digits: a character
                    continue
                end = i + 3 if pattern[i + 2 : i + 3].isdigit() else i + 2
                refs.append((i, end, int(pattern[i + 1 : end])))
                i = end
                continue
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            i += 1
            continue
        if c == "[":
            in_class = True
            i += 1
            i += pattern[i : i + 1] == "^"
            i += pattern[i : i + 1] == "]"  # a ']' first in a set is one of its characters
            continue
        if c == "(":
            if pattern[i + 1 : i + 2] != "?":
                groups.append(i)
            elif pattern[i + 2 : i + 3] in ("P", "(", "<") and pattern[i + 2 : i + 4] not in ("<=", "<!"):
                return None  # a named group or a conditional
            elif _GLOBAL_FLAGS.match(pattern, i):
                return None
        i += 1
    if any(number > len(groups) for *_, number in refs):
        return None
    edits = {(groups[number - 1], groups[number - 1] + 1, f"(?P<{tag}_{number}>") for *_, number in refs}
    edits |= {(start, end, f"(?P={tag}_{number})") for start, end, number in refs}
    parts: list[str] = []
    last = 0
    for start, end, text in sorted(edits):
        parts += [pattern[last:start], text]
        last = end
    parts.append(pattern[last:])
    return "".join(parts)


Rule = tuple[Any, Any, Any]  # pygments' (the bound ``match`` of a compiled pattern, action, new state)
# One step of the search: an alternation of several rules and the rule of each of its top groups,
# or one rule alone (its match is None).
Step = tuple[Callable[..., Any] | None, Rule | None, dict[int, Rule] | None]


class _Dispatch:
    """The search for the first rule of a state that matches: the steps to try for a position, by
    the character there (ASCII by code, any other, or none at the end of the text)."""

    def __init__(self, rules: list[Rule]) -> None:
        info = []
        for n, rule in enumerate(rules):
            compiled = rule[0].__self__
            alone = compiled.flags & re.VERBOSE  # a comment in a pattern would run past its group
            info.append((rule, None if alone else renamed(compiled.pattern, f"r{n}"), starts(compiled.pattern, compiled.flags)))
        made: dict[tuple[int, ...], tuple[Step, ...]] = {}

        def steps(keep: Callable[[Starts], bool]) -> tuple[Step, ...]:
            key = tuple(n for n, (_, _, first) in enumerate(info) if keep(first))
            if key not in made:
                made[key] = _steps([(info[n][0], info[n][1]) for n in key])
            return made[key]

        self.ascii = [steps(lambda first, c=c: c in first[0] or first[2]) for c in range(128)]  # type: ignore[misc]
        self.other = steps(lambda first: first[1] or first[2])
        self.end = steps(lambda first: first[2])

    def find(self, text: str, pos: int, end: int) -> tuple[re.Match[str] | None, Rule | None]:
        if pos < end:
            code = ord(text[pos])
            steps = self.ascii[code] if code < 128 else self.other
        else:
            steps = self.end
        for match, rule, table in steps:
            if match is None:
                assert rule is not None
                m = rule[0](text, pos, end)
                if m:
                    return m, rule
                continue
            assert table is not None
            m = match(text, pos, end)
            if m:
                rule = table[m.lastindex]
                if type(rule[1]) is not _TokenType:  # a callback reads the rule's own groups
                    m = rule[0](text, pos, end)
                return m, rule
        return None, None


def _steps(rules: list[tuple[Rule, str | None]]) -> tuple[Step, ...]:
    """The rules in order, those that can be joined (the same flags, a pattern that can stand in an
    alternation) joined."""
    out: list[Step] = []
    run: list[tuple[Rule, str]] = []

    def close() -> None:
        if len(run) == 1:
            out.append((None, run[0][0], None))
        elif run:
            table: dict[int, Rule] = {}
            parts: list[str] = []
            group = 1
            for rule, pattern in run:
                table[group] = rule
                parts.append(f"({pattern})")
                group += 1 + rule[0].__self__.groups
            out.append((re.compile("|".join(parts), run[0][0][0].__self__.flags).match, None, table))
        run.clear()

    for rule, pattern in rules:
        if pattern is None or (run and run[0][0][0].__self__.flags != rule[0].__self__.flags):
            close()
        if pattern is None:
            out.append((None, rule, None))
        else:
            run.append((rule, pattern))
    close()
    return tuple(out)


def _pushed(stack: list[str], new_state: Any) -> None:
    """pygments' state transition, on ``stack`` in place."""
    if isinstance(new_state, tuple):
        for state in new_state:
            if state == "#pop":
                if len(stack) > 1:
                    stack.pop()
            elif state == "#push":
                stack.append(stack[-1])
            else:
                stack.append(state)
    elif isinstance(new_state, int):
        # pop, but keep at least one state on the stack
        if abs(new_state) >= len(stack):
            del stack[1:]
        else:
            del stack[new_state:]
    elif new_state == "#push":
        stack.append(stack[-1])
    else:
        raise AssertionError(f"wrong state def: {new_state!r}")


def _regex_tokens(self: Any, text: str, stack: tuple[str, ...] = ("root",)) -> Iterator[tuple[int, Any, str]]:
    """``RegexLexer.get_tokens_unprocessed``, with the search for a rule in one call."""
    pos = 0
    end = len(text)
    states: dict[str, _Dispatch] = self._dispatch
    statestack = list(stack)
    current = states[statestack[-1]]
    while True:
        m, rule = current.find(text, pos, end)
        if m is not None and rule is not None:
            _, action, new_state = rule
            if action is not None:
                if type(action) is _TokenType:
                    yield pos, action, m.group()
                else:
                    yield from action(self, m)
            pos = m.end()
            if new_state is not None:
                _pushed(statestack, new_state)
                current = states[statestack[-1]]
            continue
        if pos >= end:
            break
        if text[pos] == "\n":  # at the end of a line, back to "root"
            statestack = ["root"]
            current = states["root"]
            yield pos, Whitespace, "\n"
            pos += 1
            continue
        yield pos, Error, text[pos]
        pos += 1


def _extended_tokens(self: Any, text: str | None = None, context: LexerContext | None = None) -> Iterator[tuple[int, Any, str]]:
    """``ExtendedRegexLexer.get_tokens_unprocessed``, with the search for a rule in one call (``_Dispatch.find``,
    written out here: this loop runs once per token)."""
    states: dict[str, _Dispatch] = self._dispatch
    if not context:
        ctx = LexerContext(text, 0)
        current = states["root"]
    else:
        ctx = context
        current = states[ctx.stack[-1]]
        text = ctx.text
    assert text is not None
    token_type = _TokenType
    while True:
        pos, end = ctx.pos, ctx.end
        if pos < end:
            code = ord(text[pos])
            steps = current.ascii[code] if code < 128 else current.other
        else:
            steps = current.end
        m: Any = None
        rule: Rule | None = None
        alone: Any
        table: Any
        for match, alone, table in steps:
            if match is None:
                m = alone[0](text, pos, end)
                if m:
                    rule = alone
                    break
            else:
                m = match(text, pos, end)
                if m:
                    rule = table[m.lastindex]
                    if type(rule[1]) is not token_type:  # a callback reads the rule's own groups
                        m = rule[0](text, pos, end)
                    break
        if rule is not None:
            _, action, new_state = rule
            if action is not None:
                if type(action) is token_type:
                    yield pos, action, m.group()
                    ctx.pos = m.end()
                else:
                    yield from action(self, m, ctx)
                    if not new_state:  # the callback may have changed the stack
                        current = states[ctx.stack[-1]]
            # a callback sets ctx.pos itself
            if new_state is not None:
                _pushed(ctx.stack, new_state)
                current = states[ctx.stack[-1]]
            continue
        if pos >= end or pos >= len(text):
            break
        if text[pos] == "\n":  # at the end of a line, back to "root"
            ctx.stack = ["root"]
            current = states["root"]
            yield pos, Text, "\n"
            ctx.pos += 1
            continue
        yield pos, Error, text[pos]
        ctx.pos += 1


_CLASSES: dict[type, type | None] = {}


def _faster_class(cls: type) -> type | None:
    if cls not in _CLASSES:
        _CLASSES[cls] = _make_class(cls)
    return _CLASSES[cls]


def _make_class(cls: type) -> type | None:
    loop = getattr(cls, "get_tokens_unprocessed", None)
    if loop is ExtendedRegexLexer.get_tokens_unprocessed:
        mine: Callable[..., Any] = _extended_tokens
    elif loop is RegexLexer.get_tokens_unprocessed:
        mine = _regex_tokens
    else:
        return None  # a lexer with a loop of its own
    tokens = cls.__dict__.get("_tokens")  # pygments builds them when the class is first instantiated
    if not isinstance(tokens, dict) or getattr(cls, "token_variants", False):  # variants: tokens per instance
        return None
    dispatch = {state: _Dispatch(rules) for state, rules in tokens.items()}
    return type(cls.__name__, (cls,), {"get_tokens_unprocessed": mine, "_tokens": tokens, "_dispatch": dispatch})


def faster(lexer: Lexer) -> Lexer:
    """The same lexer, finding each token with one regular-expression call (the same tokens), when
    it uses pygments' loop; otherwise ``lexer`` itself."""
    cls = _faster_class(type(lexer))
    if cls is None or "_tokens" in lexer.__dict__:
        return lexer
    fast: Lexer = object.__new__(cls)
    fast.__dict__.update(lexer.__dict__)  # its options (stripnl, tabsize, filters, ...)
    return fast
