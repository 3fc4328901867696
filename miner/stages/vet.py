"""Stage 2: vet the fixes: does a commit that says it fixes something repair behaviour?

The walk finds fix candidates by their words, and words overclaim: "fix typing of X", "fix the
docs link", "feat: ..., fixes a small bug along the way", a revert of a commit pushed by mistake.
A bug fixture made from such a "fix" punishes a reviewer for staying quiet on correct code, so
each candidate is vetted on two kinds of evidence, both pure functions:

- the message (``vet_message``): conventional-commit types and scopes (``feat``, ``refactor``,
  ``fix(types)``), where the fix word stands (the subject, not a passing mention in the body),
  subjects that say the change is cosmetic, about tests, docs, typing, style tools or speed, a
  subject that announces a feature and only closes an issue in its body, and, for a revert,
  whether the message says the reverted change was wrong;
- the diff (``vet_diff``): a fix that changes no source file (only tests, docs, examples,
  configuration), or changes source files only in layout, comments, type annotations or the text
  of messages, changes no behaviour.

A refused fix is counted under the ``vet`` stage with its reason; an accepted one carries the
reasons it was believed (``Evidence.fix_reasons``), among them ``with_test`` when it also
changes a test, which is stronger evidence that behaviour was wrong.
"""

from __future__ import annotations

import ast
import copy
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import cache, lru_cache
from itertools import zip_longest

from miner.core.classify import glob_regex as path_kind_glob
from miner.core.classify import has_fix_word, has_generated_marker, path_kind, reverted_shas, trailer_shas
from miner.core.config import Config, VetConfig
from miner.core.lexer import code_token_stream, code_tokens, python_long_string_lines
from miner.core.records import FileDiff, FixCommit

# "type(scope): ...", or a leading bracketed type ("[Fix] ...", "[Tests] ...", "[Dev Deps] ..."), as some projects write it
_CONVENTIONAL = re.compile(r"^\s*(?:\[(?P<tag>[A-Za-z][\w -]*)\]\s|(?P<type>[A-Za-z][\w-]*)(?:\((?P<scope>[^)]*)\))?!?:\s)")
_REVERT_BOILERPLATE = re.compile(
    r"^\s*(?:This reverts commit [0-9a-fA-F]+\.?|Revert\b.*|\(cherry picked from.*\)|"
    r"[\w-]+:\s.*)$",
    re.M,
)


@lru_cache(maxsize=16)
def _any(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.I) if patterns else None


def _search(patterns: list[str], text: str) -> bool:
    regex = _any(tuple(patterns))
    return regex is not None and regex.search(text) is not None


def conventional(subject: str) -> tuple[str, tuple[str, ...]] | None:
    """A conventional-commit subject's type and scopes (``fix(api,types): ...``), lower-cased; a leading
    bracketed tag is a type without scopes (``[Dev Deps] ...`` is ``dev-deps``)."""
    match = _CONVENTIONAL.match(subject)
    if not match:
        return None
    if match.group("tag"):
        return "-".join(match.group("tag").lower().split()), ()
    scopes = tuple(s.strip().lower() for s in re.split(r"[,/|\s]+", match.group("scope") or "") if s.strip())
    return match.group("type").lower(), scopes


def vet_message(fix: FixCommit, config: Config) -> tuple[str | None, tuple[str, ...]]:
    """(why the message says this is no behaviour fix, or None; the signals it gives for one)."""
    vet = config.vet
    meta = fix.meta
    subject = meta.subject
    signals: list[str] = [fix.link] if fix.link != "keyword" else []
    typed = conventional(subject)
    if typed is not None:
        kind, scopes = typed
        if kind in vet.non_fix_types:
            return "not_fix_type", ()
        if kind in vet.fix_types:
            if any(s in vet.non_fix_scopes for s in scopes):
                return "not_fix_scope", ()
            signals.append("conventional_fix")
    if fix.link == "revert" or reverted_shas(meta.message, config.fixes):
        why = _revert_reason(meta.message, vet)
        return (why, ()) if why else (None, tuple(signals + ["revert_explained"]))
    if _search(vet.non_behaviour_subjects, subject) and not _search(vet.bug_subjects, subject):
        return "non_behaviour_subject", ()
    if fix.link == "keyword" and not trailer_shas(meta.message, config.fixes):  # a trailer says "fix" itself
        if has_fix_word(subject, config.fixes):
            signals.append("subject_keyword")
        elif _statement(meta.message, vet):
            if _search(vet.feature_subjects, subject) and not _search(vet.bug_subjects, meta.message):
                return "feature_subject", ()  # the issue it closes asked for the feature
            signals.append("body_fix_statement")
        else:
            return "fix_word_in_body_only", ()
    return None, tuple(signals)


def _statement(message: str, vet: VetConfig) -> bool:
    """Whether a message's body says the commit fixes something (closes an issue, "this fixes ...")."""
    body = message.strip().split("\n", 1)[1] if "\n" in message.strip() else ""
    regex = _any(tuple(vet.body_fix_statements))
    return regex is not None and any(regex.search(line) for line in body.splitlines())


def _revert_reason(message: str, vet: VetConfig) -> str | None:
    """Why a revert is not a fix: it says it undoes a mistake or a choice, or gives no reason at all
    (a reason is a few words of its own, or the report of a bug it closes)."""
    if _search(vet.revert_not_defect, message):
        return "revert_not_defect"
    explanation = _REVERT_BOILERPLATE.sub("", message.strip().split("\n", 1)[1] if "\n" in message.strip() else "")
    if len(re.findall(r"[A-Za-z]{2,}", explanation)) < vet.revert_min_words and not _statement(message, vet):
        return "revert_without_reason"
    return None


def vet_fixes(fixes: Iterable[FixCommit], config: Config, dropped: Counter[str]) -> Iterator[tuple[FixCommit, tuple[str, ...]]]:
    """Stage contract: fix candidates in, those whose message may fix behaviour out (with their signals)."""
    for fix in fixes:
        reason, signals = vet_message(fix, config)
        if reason:
            dropped[reason] += 1
            continue
        yield fix, signals


# -- the diff ----------------------------------------------------------------------------------

Sides = Callable[[FileDiff], tuple[bytes | None, bytes | None]]


# The reasons a fix's diff is refused on its paths alone (no source file changed) begin so:
# fix_only_tests, fix_only_docs, fix_only_non_source, ...
NO_SOURCE = "fix_only_"


def vet_diff(diffs: list[FileDiff], sides: Sides, config: Config) -> tuple[str | None, tuple[str, ...]]:
    """(why the fix's diff changes no behaviour, or None; signals). ``sides`` reads a file's two
    versions (before, after); it is asked only for source files whose lines could all be layout."""
    kinds: Counter[str] = Counter()
    source: list[FileDiff] = []
    for diff in diffs:
        path = diff.new_path or diff.old_path or ""
        if diff.link:
            kinds["link"] += 1
            continue
        kind: str = path_kind(path, config.paths)
        if kind == "source" and diff.binary:
            kind = "binary"
        kinds[kind] += 1
        if kind == "source":
            source.append(diff)
    signals = ("with_test",) if kinds["tests"] else ()
    if source and (kinds["lockfile"] or any(_dependency(d, config) for d in diffs)):
        return "fix_with_dependency_change", ()
    if not source:
        others = sorted(k for k in kinds if kinds[k])
        return (f"{NO_SOURCE}{others[0]}" if len(others) == 1 else f"{NO_SOURCE}non_source"), ()
    how = neutral(source, sides, config)
    return (f"fix_{how}_only", ()) if how else (None, signals)


def neutral(files: list[FileDiff], sides: Sides, config: Config) -> str | None:
    """How changes to these code files leave behaviour alone, when every one of them does:
    ``types``, ``messages``, ``layout`` or ``generated``; None when one of them may change it."""
    found: Counter[str] = Counter()
    for diff in files:
        path = diff.new_path or ""
        if not _may_be_neutral(diff):
            return None
        before, after = sides(diff)
        if before is None or after is None:  # a file added or deleted is a change of behaviour
            return None
        if has_generated_marker(after, config.paths) or has_generated_marker(before, config.paths):
            found["generated"] += 1
            continue
        how = _neutral_change(path, before, after, diff)
        if how is None:
            return None
        found[how] += 1
    return next((how for how in ("types", "messages", "layout", "generated") if found[how]), None)


def _may_be_neutral(diff: FileDiff) -> bool:
    """A cheap look at the changed lines alone, so that most changes are never lexed whole: outside
    Python (whose annotations change tokens), a change whose removed and added lines hold different
    code words changes behaviour. Lines that may sit inside a block comment (they start as comment
    lines do) are left to the whole-file lexer, which knows where comments begin."""
    path = diff.new_path or diff.old_path or ""
    if path.endswith(_WHOLE_FILE) or diff.new_file or diff.deleted_file:
        return True
    if any(text.lstrip().startswith(_COMMENTISH) for _, text in (*diff.removed, *diff.added)):
        return True
    return _same_words(path, diff) is not False


def _same_words(path: str, diff: FileDiff) -> bool | None:
    """Whether the removed and the added lines, lexed alone, hold the same code words (strings left
    out), in any order; None when the language is not known."""
    old = code_tokens(path, "\n".join(text for _, text in diff.removed))
    new = code_tokens(path, "\n".join(text for _, text in diff.added))
    if old is None or new is None:
        return None
    words = [t for t in old if not _STRING.match(t)], [t for t in new if not _STRING.match(t)]
    return sorted(words[0]) == sorted(words[1])


_STRING = re.compile(r"S[a-z]{0,2}:")  # a string literal as code_tokens gives it
_COMMENTISH = ("*", "/*", "//", "#", "--", ";", "<!--", "%")
# Files the cheap look cannot judge: Python's annotations change tokens, declaration files are all
# types, and Elixir's and Julia's documentation is written in strings that run over many lines
# (`@doc """`), so a changed line of it, read alone, looks like code.
_WHOLE_FILE = (".py", ".pyi", ".d.ts", ".d.mts", ".d.cts", ".ex", ".exs", ".jl")


def _dependency(diff: FileDiff, config: Config) -> bool:
    path = diff.new_path or diff.old_path or ""
    return any(_glob_match(path, pattern) for pattern in config.vet.dependency_files)


def _glob_match(path: str, pattern: str) -> bool:
    return path_kind_glob(pattern).match(path) is not None


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _neutral_change(path: str, before: bytes, after: bytes, diff: FileDiff | None = None) -> str | None:
    """How a change to one source file leaves behaviour alone: ``layout`` (whitespace, comments,
    docstrings, quote style), ``types`` (type annotations only), ``messages`` (only the prose of
    strings), or None when it may change behaviour. ``diff``, the file's changed lines, spares
    lexing the whole files where the lines alone give the answer."""
    old, new = _text(before), _text(after)
    if path.endswith((".pyi", ".d.ts", ".d.mts", ".d.cts")):
        return "types"
    same = None if diff is None else _same_words(path, diff)
    if path.endswith(".py"):
        plain, typed = _python_shapes(old, new)
        if plain is None:
            return None
        if plain:
            return "layout"
        if typed:
            return "types"
        if same is False and diff is not None and _read_alone_as_in_files(diff, before, after, old, new):
            # Other code words, read as the files read them: the files' tokens differ, and not only
            # in their strings or in the order of their imports.
            return None
    a, b = code_token_stream(path, old), code_token_stream(path, new)
    if a is None or b is None:
        return None
    alike = _compared(a, b)

    # Tokens leave indentation out, which in Python is syntax: a block moved in or out of an `if` has
    # the same tokens. A Python file whose statements nest otherwise is no layout or message change.
    @cache
    def nested_alike() -> bool:
        if not path.endswith(".py"):
            return True
        nesting = _nesting(old)
        return nesting is not None and nesting == _nesting(new)

    # Reordered imports are looked for only where lines may have moved past import lines: the
    # change touches an import line, or its removed and added lines hold the same code words.
    imports = diff is None or same is not False or any(_IMPORT.match(text) for _, text in (*diff.removed, *diff.added))
    if (alike == "same" or (imports and _imports_reordered(path, old, new))) and nested_alike():
        return "layout"
    if alike != "other" and nested_alike():
        return "messages"
    return None


def _compared(a: Iterator[str], b: Iterator[str]) -> str:
    """How two versions' tokens compare: ``same``; ``prose``, when they differ, pair by pair, only in
    strings that read as messages for a person; ``other``. They are read only up to the first
    other difference: most changes differ at the change, and the rest of each file is never lexed."""
    found = "same"
    for x, y in zip_longest(a, b):
        if x == y:
            continue
        if x is None or y is None or not (_prose(x) and _prose(y)):
            return "other"
        found = "prose"
    return found


def _read_alone_as_in_files(diff: FileDiff, before: bytes, after: bytes, old: str, new: str) -> bool:
    """Whether a Python file's changed lines, lexed alone, give the tokens they give in the files:
    both versions are UTF-8 (as the diff's lines are read), and no changed line is part of a string
    that runs over several lines (which the line alone would read as code)."""
    try:
        before.decode("utf-8"), after.decode("utf-8")
    except UnicodeDecodeError:
        return False
    removed, added = {n for n, _ in diff.removed}, {n for n, _ in diff.added}
    return not (python_long_string_lines(old) & removed or python_long_string_lines(new) & added)


def _nesting(text: str) -> list[tuple[int, str]] | None:
    """Each statement of a Python source, in order, with how deep it is nested in other statements;
    None when the source does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
        return None
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, depth: int) -> None:
        for _, value in ast.iter_fields(node):
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, ast.stmt):
                    found.append((depth, type(item).__name__))
                    visit(item, depth + 1)
                elif isinstance(item, (ast.excepthandler, ast.match_case)):
                    visit(item, depth)

    try:
        visit(tree, 0)
    except RecursionError:
        return None
    return found


_IMPORT = re.compile(r"^\s*(use\s|import\s|from\s+\S+\s+import\s|#\s*include\s|(const|let|var)\s+\w+\s*=\s*require\()")


def _imports_reordered(path: str, old: str, new: str) -> bool:
    """Whether two versions differ only in the order of their import lines (a formatter sorting them)."""

    def imports(text: str) -> list[str]:
        return sorted("".join(line.split()) for line in text.split("\n") if _IMPORT.match(line))

    def rest(text: str) -> list[str] | None:
        return code_tokens(path, "\n".join(line for line in text.split("\n") if not _IMPORT.match(line)))

    # The import lines first: they are cheap to compare, and most changes fail there before lexing.
    ia = imports(old)
    if not ia or ia != imports(new):
        return False
    a = rest(old)
    return a is not None and a == rest(new)


def _prose(token: str) -> bool:
    """A string literal that reads as a sentence for a person (a message), not a key or a format."""
    if not token.startswith("S:"):
        return False
    body = re.sub(r"\\\n\s*", " ", token[2:])  # a line continuation inside the literal
    return len(re.findall(r"[A-Za-z]{2,}", body)) >= 3 and " " in body and not _FORMAT.search(body) and not _QUERY.search(body)


# What makes a string more than a message: a format conversion or placeholder, an escape other than a
# line break or tab, or the words of a query.
_FORMAT = re.compile(r"%[-+ 0#]*[\d*]*(?:\.[\d*]+)?[hlLqjzt]*[diouxXeEfFgGcsp%]|\{[\w.:!]*\}|\$\{|\\[^nt]")
_QUERY = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|FROM|WHERE|CREATE|ALTER|DROP|JOIN)\b")


def _python_shapes(old: str, new: str) -> tuple[bool | None, bool | None]:
    """Whether two versions of a Python file have the same syntax tree once docstrings are left out,
    and (asked only when they have not) once type annotations are too; (None, None) when either does
    not parse.

    Each answer is that of comparing the two whole trees, with ``_Shape`` applied, by ``ast.dump``
    (``_whole_shape``), but only the statements that differ are compared so: a statement written the
    same in both (the same lines, decorators included) has the same tree, so the statements the
    versions begin and end with alike are passed over, in a module's body and in each class's and
    function's (``_same_body``). The files are parsed once for both answers."""
    if "\r" in old or "\r" in new:  # the parser also ends lines at a lone \r: compare the whole trees
        plain = _whole_shape(old, new, strip_types=False)
        return plain, None if plain is None or plain else _whole_shape(old, new, strip_types=True)
    try:
        trees = [ast.parse(text) for text in (old, new)]
    except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):  # SystemError: CPython 3.11 can
        # fail an AST build with a recursion-depth check when threads parse at once (Dask in one process)
        return None, None
    lines = (old.split("\n"), new.split("\n"))
    try:
        plain = _same_body(trees[0].body, trees[1].body, lines, False, keep=True)
    except RecursionError:
        return None, None
    if plain:
        return plain, None
    try:
        return plain, _same_body(trees[0].body, trees[1].body, lines, True, keep=False)
    except RecursionError:
        return plain, None


def _whole_shape(old: str, new: str, strip_types: bool) -> bool | None:
    """Whether two versions of a Python file have the same syntax tree (docstrings left out, and
    with ``strip_types`` type annotations too), their whole trees dumped; None when either does not parse."""
    try:
        trees = [ast.parse(text) for text in (old, new)]
    except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
        return None
    try:
        dumps = [ast.dump(_Shape(strip_types).visit(tree)) for tree in trees]
    except RecursionError:
        return None
    return dumps[0] == dumps[1]


_Lines = tuple[list[str], list[str]]
_SCOPES = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _written(node: ast.stmt, lines: list[str]) -> tuple[int | None, int | None, str]:
    """A statement as written: its columns and its lines, from its first decorator on."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    return node.col_offset, node.end_col_offset, "\n".join(lines[first - 1 : node.end_lineno])


def _same_body(a: list[ast.stmt], b: list[ast.stmt], lines: _Lines, strip_types: bool, keep: bool = False) -> bool:
    """Whether two statement lists are alike once ``_Shape`` is applied to the node that holds them:
    the statements both begin and end with, written alike, are; of the rest, each pair of classes
    or functions is compared by its header and its own body, every other pair by its dump.
    ``keep``: the trees are left as they are (what is dumped is a copy), to be compared again."""
    wa = [_written(node, lines[0]) for node in a]
    wb = [_written(node, lines[1]) for node in b]
    head = 0
    while head < min(len(a), len(b)) and wa[head] == wb[head]:
        head += 1
    # A body's first statement stays in the compared stretch of both: whether it is dropped as a
    # docstring depends on where it stands, not only on how it is written.
    tail, room = 0, min(len(a), len(b)) - max(head, 1)
    while tail < room and wa[len(a) - 1 - tail] == wb[len(b) - 1 - tail]:
        tail += 1
    shape = _Shape(strip_types)
    mine: Callable[[ast.stmt], ast.stmt] = copy.deepcopy if keep else lambda node: node
    rest = [_kept(body[head : len(body) - tail], head == 0, shape) for body in (a, b)]
    if len(rest[0]) != len(rest[1]):
        return False
    for x, y in zip(*rest):
        if type(x) is type(y) and isinstance(x, _SCOPES):
            if not _same_header(x, y, shape) or not _same_body(x.body, y.body, lines, strip_types, keep):
                return False
        elif ast.dump(shape.visit(mine(x))) != ast.dump(shape.visit(mine(y))):
            return False
    return True


def _kept(body: list[ast.stmt], first: bool, shape: _Shape) -> list[ast.stmt]:
    """The statements of a stretch of a body that ``_Shape`` keeps (``first``: the stretch opens the
    body, whose docstring it drops)."""
    if first:
        body = shape._body(body)
    return [node for node in body if not shape.drops(node)]


def _same_header(a: ast.stmt, b: ast.stmt, shape: _Shape) -> bool:
    """Whether a class or function is alike in all but its body, once ``_Shape`` is applied."""
    heads = []
    for node in (a, b):
        bare = copy.copy(node)
        bare.body = []  # type: ignore[attr-defined]
        heads.append(ast.dump(shape.visit(copy.deepcopy(bare))))
    return heads[0] == heads[1]


_TYPING_MODULES = ("typing", "typing_extensions", "__future__", "collections.abc")


class _Shape(ast.NodeTransformer):
    """Takes out what does not change how a Python module behaves: docstrings and, when asked,
    type annotations, typing-only imports and ``if TYPE_CHECKING:`` blocks, and ``cast``."""

    def __init__(self, strip_types: bool) -> None:
        self.strip_types = strip_types

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body = body[1:]
        return body

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if hasattr(node, "body") and isinstance(node.body, list):
            node.body = self._body(node.body)
        return super().generic_visit(node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        if self.strip_types:
            node.annotation = None
        return node

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        if self.strip_types:
            node.returns = None
            node.type_comment = None
        return self.generic_visit(node)

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | None:
        if not self.strip_types:
            return self.generic_visit(node)
        if node.value is None:  # what drops() says of it
            return None
        return self.generic_visit(ast.Assign(targets=[node.target], value=node.value, lineno=node.lineno))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST | None:
        return None if self.drops(node) else node

    def visit_If(self, node: ast.If) -> ast.AST | None:
        if self.drops(node):
            return None
        return self.generic_visit(node)

    def drops(self, node: ast.AST) -> bool:
        """Whether visiting this statement gives None: it is left out of the body that holds it."""
        if not self.strip_types:
            return False
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            return name == "TYPE_CHECKING"
        if isinstance(node, ast.ImportFrom):
            return node.module in _TYPING_MODULES
        return isinstance(node, ast.AnnAssign) and node.value is None

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if self.strip_types and name == "cast" and len(node.args) == 2:
            return self.visit(node.args[1])
        return self.generic_visit(node)


def vet_fix(
    fix: FixCommit, diffs: list[FileDiff], read: Callable[[str, str], bytes | None], config: Config
) -> tuple[FixCommit | None, str | None]:
    """The fix with the signals its diff adds, or None and why its diff changes no behaviour."""
    if not fix.meta.parents:
        return fix, None
    refused, signals = vet_diff(diffs, sides_reader(read, fix.meta.parents[0], fix.meta.sha), config)
    if refused:
        return None, refused
    return fix.model_copy(update={"reasons": fix.reasons + signals}), None


def sides_reader(read: Callable[[str, str], bytes | None], parent: str, sha: str) -> Sides:
    """``sides`` for ``vet_diff`` from a blob reader ``read(commit, path)``."""

    def sides(diff: FileDiff) -> tuple[bytes | None, bytes | None]:
        before = read(parent, diff.old_path) if diff.old_path else None
        after = read(sha, diff.new_path) if diff.new_path else None
        return before, after

    return sides
