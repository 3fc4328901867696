"""Which fix candidates repair behaviour: the message rules and the diff rules (no git)."""

from __future__ import annotations

import pytest

from miner.core.config import load_config
from miner.core.lexer import code_tokens
from miner.core.records import CommitMeta, FileDiff, FixCommit
from miner.stages.vet import _python_shapes, _whole_shape, conventional, vet_diff, vet_message

CONFIG = load_config()
SHA = "a" * 40


def fix(message: str, link: str = "keyword") -> FixCommit:
    meta = CommitMeta(
        sha=SHA,
        parents=("b" * 40,),
        author_name="Ann",
        author_email="ann@example.com",
        author_time=0,
        committer_time=0,
        message=message,
        files=(),
    )
    return FixCommit(meta=meta, link=link)


@pytest.mark.parametrize(
    "message,reason",
    [
        ("Fix crash when the list is empty", None),
        ("fix(parser): handle a trailing comma", None),
        ("feat: add paging\n\nAlso fixes a crash.", "not_fix_type"),
        ("refactor(core): split the module, fixing names", "not_fix_type"),
        ("fix(types): widen the value type", "not_fix_scope"),
        ("fix(ci): use the new runner", "not_fix_scope"),
        ("Fix clippy::needless_borrow warnings", "non_behaviour_subject"),
        ("Fix typing of the config loader", "non_behaviour_subject"),
        ("Fix the docs link in the README", "non_behaviour_subject"),
        ("Fix flaky date test", "non_behaviour_subject"),
        ("Fix some cosmetic issues raised on IRC yesterday", "non_behaviour_subject"),
        ("client: (cosmetic) align the option table", "non_behaviour_subject"),
        ("Fix code style in the loader", "non_behaviour_subject"),
        ("Apply coding standards to the router", "non_behaviour_subject"),
        ("PHP-CS-Fixer fixes to remove unused use statements", "non_behaviour_subject"),
        ("Fix RuboCop offenses", "non_behaviour_subject"),
        ("Fix leak of kmod_module and fix code style", None),  # the leak is named first: still a fix
        ("fixed Win32 prebuild section; fixed minor cosmetic bug.", None),  # cosmetic late in the subject
        ("fix PHPStan errors", "non_behaviour_subject"),
        ("Fix goimports", "non_behaviour_subject"),
        ("Run clang-format on src", "non_behaviour_subject"),
        ("fix: lint violations", "non_behaviour_subject"),
        ("fix unused variable warning", "non_behaviour_subject"),
        ("Fix CS", "non_behaviour_subject"),
        ("fix hlint hints", "non_behaviour_subject"),
        ("Fix hints and lints.", "non_behaviour_subject"),
        ("Enable and fix lints for collection literals", "non_behaviour_subject"),
        ("Fix CS pin toggling on reset", None),  # a chip-select line, not coding standards
        ("Fix deprecations", "non_behaviour_subject"),
        ("Undeprecate Utils#byte_ranges", "non_behaviour_subject"),
        ("Fix prettier-ignore in JSX attributes", None),  # a tool's own repository: its name alone is no reason
        ("Fix Rack::Lint error message for HTTP_CONTENT_TYPE", None),  # Lint is a module here
        ("Support case-insensitive search\n\nFixes #14", "feature_subject"),
        ("Add `-o/--only-matching` flag.\n\nCloses #34", "feature_subject"),
        ("Add missing null check in the loader\n\nFixes #14", None),  # adds what was missing
        ("Support: skip the probe on old browsers\n\nFixes #14", None),  # a module named Support
        ("Fix code formatting", "non_behaviour_subject"),
        ("Fixed some tab/spaces mixed issues", "non_behaviour_subject"),
        ("Fixed line endings.", "non_behaviour_subject"),
        ("Fix formatting of RGB hex codes", None),  # the program's output is formatted
        ("[man] Fix invalid exit status in man page", "non_behaviour_subject"),
        ("fix truncate_stream to match docs", None),  # the code is made to match the documentation
        ("Fix handling of standalone comments", None),  # a parser's comments are its input
        ("Fixed some licensing inconsistencies", "non_behaviour_subject"),
        ("[NFC] Fix the variable naming", "non_behaviour_subject"),
        ("Small formatting fixes...no functional changes.", "non_behaviour_subject"),
        ("nfc: fix a crash on tag removal", None),  # Near Field Communication, a subsystem
        ("Fix R CMD check notes", "non_behaviour_subject"),
        ("Fix the doc-string of magit-diff-visit-file", "non_behaviour_subject"),
        ("Now working on version 1.27.1\n\nFixes: https://github.com/libuv/libuv/issues/2213", "non_behaviour_subject"),
        ("rockspec: fix version number", "non_behaviour_subject"),
        ("libcxgb4: fix firmware version string", None),  # what the program prints
        ("[Tests] add `nvm_grep` to install script, fix tests", "not_fix_type"),  # a leading tag is a type
        ("[New] add `nvm -v`\n\nFixes #2112", "not_fix_type"),
        ("[Fix] `nvm_get_arch`: suppress error output if `/sbin` does not exist", None),
        ("Support empty keys\n\nThis fixes a crash on load.", None),  # the message names a failure
        ("Fixed two failures due to libfoo update", "non_behaviour_subject"),
        ("Remove the redundant check, fixing nothing", "non_behaviour_subject"),
        ("Fix performance regression in the crash handler", None),  # a crash named: not cosmetic
        ("Update the parser\n\n- Fixed compiling on old compilers", "fix_word_in_body_only"),
        ("Pass options through to send\n\nfixes #2017", None),
        ("ip fou: pass family attribute as u8\n\nThis fixes fou on big-endian systems.", None),
        ('Handle empty names\n\nFixes: 0123456789ab ("Add names")', None),  # a trailer says fix itself
    ],
)
def test_message_rules(message: str, reason: str | None) -> None:
    assert vet_message(fix(message), CONFIG)[0] == reason


@pytest.mark.parametrize(
    "message,reason",
    [
        ('Revert "Add X"\n\nThis reverts commit ' + "c" * 40 + ".\n\nIt broke the build on 32-bit hosts.", None),
        ('Revert "Add X"\n\nThis reverts commit ' + "c" * 40 + ".\n\nfixes #2133", None),
        ('Revert "Add X"\n\nThis reverts commit ' + "c" * 40 + ".", "revert_without_reason"),
        ('Revert "Add X"\n\nThis reverts commit ' + "c" * 40 + ".\n\nPushed to main by mistake.", "revert_not_defect"),
        (
            'Revert "Add X"\n\nThis reverts commit ' + "c" * 40 + ".\n\nInadvertently pushed v3 of this patch.",
            "revert_not_defect",
        ),
    ],
)
def test_reverts_need_a_reason(message: str, reason: str | None) -> None:
    assert vet_message(fix(message, "revert"), CONFIG)[0] == reason


def test_signals_say_why_a_fix_is_believed() -> None:
    assert vet_message(fix("fix(api): reject empty keys"), CONFIG)[1] == ("conventional_fix", "subject_keyword")
    assert vet_message(fix("Send errors to stderr\n\nfixes #12"), CONFIG)[1] == ("body_fix_statement",)
    assert conventional("fix(api,types)!: x") == ("fix", ("api", "types"))
    assert conventional("Fix: x") == ("fix", ())
    assert conventional("Update README") is None
    assert conventional("[Dev Deps] update `eslint`") == ("dev-deps", ())
    assert vet_message(fix("[Fix] `nvm ls`: list only 0.x.*"), CONFIG)[1] == ("conventional_fix", "subject_keyword")


def change(path: str, *, new: bool = False) -> FileDiff:
    return FileDiff(
        old_path=None if new else path, new_path=path, new_file=new, removed=() if new else ((1, "x"),), added=((1, "y"),)
    )


def sides(before: str, after: str):
    return lambda d: (None if d.new_file else before.encode(), after.encode())


@pytest.mark.parametrize(
    "paths,reason",
    [
        (["tests/test_a.py"], "fix_only_tests"),
        (["docs/usage.md", "README.md"], "fix_only_docs"),
        (["examples/demo.py"], "fix_only_docs"),
        ([".github/workflows/ci.yml"], "fix_only_config"),
        (["Makefile"], "fix_only_config"),
        (["docs/a.md", "tests/test_a.py"], "fix_only_non_source"),
        (["src/a.py", "package.json"], "fix_with_dependency_change"),
        (["src/a.py", "Cargo.lock"], "fix_with_dependency_change"),
        (["aeson.cabal"], "fix_only_config"),  # "Allow time 1.10"
    ],
)
def test_a_fix_that_changes_no_source_code_is_refused(paths: list[str], reason: str) -> None:
    code = "def f(x):\n    return x\n"
    assert vet_diff([change(p) for p in paths], sides(code, code.replace("x\n", "x + 1\n")), CONFIG)[0] == reason


def rewrite(path: str, before: str, after: str) -> FileDiff:
    """A diff that replaces every line of ``before`` with ``after``."""
    return FileDiff(
        old_path=path,
        new_path=path,
        removed=tuple(enumerate(before.splitlines(), 1)),
        added=tuple(enumerate(after.splitlines(), 1)),
    )


@pytest.mark.parametrize(
    "path,before,after,reason",
    [
        ("src/a.py", "def f(x):\n    return x\n", "def f(x: int) -> int:\n    return x\n", "fix_types_only"),
        ("src/a.py", "from typing import List\nx = 1\n", "x = 1\n", "fix_types_only"),
        ("src/a.py", "def f(x):\n    return x\n", "def f(x):\n    '''Doc.'''\n    return x  # note\n", "fix_layout_only"),
        ("src/a.py", "def f(x):\n    return x\n", "def f(x):\n    return x + 1\n", None),
        ("src/a.py", "x = u'a'\n", "x = 'a'\n", None),  # str and unicode differ on Python 2
        ("src/a.py", "x = b'a'\n", "x = 'a'\n", None),  # bytes and str differ
        # A block moved out of an `if`: the same tokens, but in Python indentation is behaviour.
        (
            "src/a.py",
            "def f(x):\n    if x:\n        y = 1\n        return y\n",
            "def f(x):\n    if x:\n        y = 1\n    return y\n",
            None,
        ),
        (
            "src/a.py",
            'if x:\n    die("could not open the file")\n    f()\n',
            'if x:\n    die("cannot open the file here")\nf()\n',
            None,
        ),
        (
            "src/a.py",
            'if x:\n    die("could not open the file")\n',
            'if x:\n    die("cannot open the file here")\n',
            "fix_messages_only",
        ),
        ("src/a.c", "int f(void) { return 1; }\n", "int f(void)\n{\n\treturn 1; /* one */\n}\n", "fix_layout_only"),
        ("src/a.c", "/*\n * Counts the items.\n */\nint n;\n", "/*\n * Counts the items left.\n */\nint n;\n", "fix_layout_only"),
        ("src/a.c", 'die("cannot open the file here");\n', 'die("could not open the file");\n', "fix_messages_only"),
        ("src/a.c", 'printf("%d items\\n", n);\n', 'printf("%u items\\n", n);\n', None),  # a format is behaviour
        ("src/a.js", "var s = 'attachment; filename=';\n", "var s = 'attachment; filename=\"';\n", None),
        ("src/a.rs", "use a::B;\nuse a::A;\nfn f() {}\n", "use a::A;\nuse a::B;\nfn f() {}\n", "fix_layout_only"),
        ("types/index.d.ts", "export type A = string;\n", "export type A = string | null;\n", "fix_types_only"),
    ],
)
def test_a_fix_that_changes_no_behaviour_is_refused(path: str, before: str, after: str, reason: str | None) -> None:
    assert vet_diff([rewrite(path, before, after)], sides(before, after), CONFIG)[0] == reason


ELIXIR = 'defmodule Shelf do\n  @moduledoc """\n  Keeps the stock of each item.\n  """\n\n  def count(x), do: x\nend\n'


@pytest.mark.parametrize(
    "line,text,reason",
    [
        (3, "  Keeps the stock level of every item.", "fix_messages_only"),  # inside the @moduledoc heredoc
        (6, "  def count(x), do: x + 1", None),
    ],
)
def test_a_line_of_elixir_documentation_is_read_in_its_file(line: int, text: str, reason: str | None) -> None:
    lines = ELIXIR.splitlines()
    after = "\n".join(text if n == line else old for n, old in enumerate(lines, 1)) + "\n"
    diff = FileDiff(old_path="lib/shelf.ex", new_path="lib/shelf.ex", removed=((line, lines[line - 1]),), added=((line, text),))
    assert vet_diff([diff], sides(ELIXIR, after), CONFIG)[0] == reason


def test_a_new_file_is_a_change_of_behaviour_and_tests_beside_it_are_a_signal() -> None:
    refused, signals = vet_diff([change("src/new.py", new=True), change("tests/test_new.py")], sides("", "x = 1\n"), CONFIG)
    assert (refused, signals) == (None, ("with_test",))


def test_code_tokens_ignore_layout_comments_and_quote_style() -> None:
    assert code_tokens("a.py", "x = {'a': 1}  # c\n") == code_tokens("a.py", 'x = {\n    "a": 1\n}\n')
    assert code_tokens("a.c", "int x = 1; // one\n") == ["int", "x", "=", "1", ";"]
    assert code_tokens("a.js", "f('a', `b`)") == ["f", "(", "S:a", ",", "S:b", ")"]
    assert code_tokens("a.unknownlang", "x") is None


def test_a_line_inside_a_block_comment_is_read_with_the_whole_file() -> None:
    before, after = "/*\n * Counts the items.\n */\nint n;\n", "/*\n * Counts the items left.\n */\nint n;\n"
    middle = FileDiff(
        old_path="src/a.c", new_path="src/a.c", removed=((2, " * Counts the items."),), added=((2, " * Counts the items left."),)
    )
    assert vet_diff([middle], sides(before, after), CONFIG)[0] == "fix_layout_only"


_INCLUDES = "#include <a.h>\n#include <b.h>\n"


def test_reordered_imports_are_looked_for_only_where_lines_may_have_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    """The imports' order is compared only when the change touches an import line or its removed and
    added lines hold the same words: a line moved past the includes is still found to be layout, as
    is a change inside a block comment whose lines do not start as comment lines do."""
    from miner.stages import vet

    moved = FileDiff(old_path="src/a.c", new_path="src/a.c", removed=((3, "#define N 1"),), added=((1, "#define N 1"),))
    assert vet_diff([moved], sides(f"{_INCLUDES}#define N 1\n", f"#define N 1\n{_INCLUDES}"), CONFIG)[0] == "fix_layout_only"
    before, after = f"/*{{\n#define N 1\n}}*/\n{_INCLUDES}", f"/*{{\n#define N 2\n}}*/\n{_INCLUDES}"
    commented = FileDiff(old_path="src/a.c", new_path="src/a.c", removed=((2, "#define N 1"),), added=((2, "#define N 2"),))
    assert vet_diff([commented], sides(before, after), CONFIG)[0] == "fix_layout_only"
    imports, in_order = "import b\nimport a\n", "import a\nimport b\n"
    assert vet_diff([rewrite("src/a.py", imports, in_order)], sides(imports, in_order), CONFIG)[0] == "fix_layout_only"
    code = FileDiff(
        old_path="src/a.c",
        new_path="src/a.c",
        removed=((4, " * one"), (6, "int n = f(1);")),
        added=((4, " * two"), (6, "int n = g(1);")),
    )
    before, after = f"{_INCLUDES}/*\n * one\n */\nint n = f(1);\n", f"{_INCLUDES}/*\n * two\n */\nint n = g(1);\n"
    monkeypatch.setattr(vet, "_imports_reordered", lambda *a: pytest.fail("imports were compared"))
    assert vet_diff([code], sides(before, after), CONFIG)[0] is None


def test_python_lines_of_other_code_words_change_behaviour_without_lexing_the_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the trees differ, a Python change whose lines hold other code words changes behaviour,
    and the files are not lexed to say so; but a line inside a string over several lines is not read
    alone (there its words are a message's)."""
    from miner.stages import vet

    help_before, help_after = (
        'HELP = """\nCould not open the file\n"""\nf()\n',
        'HELP = """\nCannot open the file here\n"""\nf()\n',
    )
    message = FileDiff(
        old_path="src/a.py",
        new_path="src/a.py",
        removed=((2, "Could not open the file"),),
        added=((2, "Cannot open the file here"),),
    )
    assert vet_diff([message], sides(help_before, help_after), CONFIG)[0] == "fix_messages_only"
    lexed: list[str] = []
    tokens = vet.code_tokens

    def recorded(path: str, text: str) -> list[str] | None:
        lexed.append(text)
        return tokens(path, text)

    monkeypatch.setattr(vet, "code_tokens", recorded)
    before, after = "import os\n\n\ndef f(x):\n    return x\n", "import os\n\n\ndef f(x):\n    return x + 1\n"
    code = FileDiff(old_path="src/a.py", new_path="src/a.py", removed=((5, "    return x"),), added=((5, "    return x + 1"),))
    assert vet_diff([code], sides(before, after), CONFIG)[0] is None
    assert lexed and before not in lexed and after not in lexed


def _whole_tree_shapes(old: str, new: str) -> tuple[bool | None, bool | None]:
    """What ``_python_shapes`` must answer: the two whole trees, transformed, compared by their dumps."""
    plain = _whole_shape(old, new, strip_types=False)
    return plain, None if plain is None or plain else _whole_shape(old, new, strip_types=True)


_CLASS = '''"""The module."""
import os


class Box:
    """A box."""

    size = 1

    @property
    def area(self) -> int:
        return self.size * self.size

    def grow(self, by: int) -> None:
        self.size += by
'''


@pytest.mark.parametrize(
    "new",
    [
        _CLASS.replace("self.size += by", "self.size += by  # more"),  # a comment: the same tree
        _CLASS.replace("self.size += by", "self.size = self.size + by"),  # a change deep in a class
        _CLASS.replace("    @property\n", "    @staticmethod\n"),  # only a decorator differs
        _CLASS.replace("    @property\n", ""),
        _CLASS.replace('"""A box."""', '"""A box, square."""'),  # a docstring
        _CLASS.replace('    """A box."""\n\n', ""),  # the docstring taken out: `size = 1` opens the body
        _CLASS.replace('    """A box."""\n', '    """A box."""\n    "a second string"\n'),
        _CLASS.replace("by: int) -> None", "by)"),  # annotations only
        _CLASS.replace("import os\n", "import os\nfrom typing import Any\n"),
        _CLASS.replace("    size = 1\n", "    size: int = 1\n    name: str\n"),
        _CLASS.replace("return self.size * self.size", "return cast(int, self.size * self.size)"),
        _CLASS + "\nif TYPE_CHECKING:\n    import sys\n",
        _CLASS.replace("import os\n", "import os; import re\n"),
        _CLASS.replace("\n", "\r\n"),
        _CLASS.replace("self.size += by", "self.size += (by"),  # does not parse
    ],
)
def test_python_shapes_are_those_of_the_whole_trees(new: str) -> None:
    assert _python_shapes(_CLASS, new) == _whole_tree_shapes(_CLASS, new)
    assert _python_shapes(new, _CLASS) == _whole_tree_shapes(new, _CLASS)


def test_a_first_string_is_dropped_where_it_stands_not_where_its_twin_stands() -> None:
    """The second version's docstring is the first version's second string: the same text at the
    end of both bodies, dropped in one of them only."""
    old = '"""one"""\n"""two"""\nx = 1\n'
    new = '"""two"""\nx = 1\n'
    assert _whole_tree_shapes(old, new) == (False, False)
    assert _python_shapes(old, new) == (False, False)
