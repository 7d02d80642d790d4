"""SK5xx links and references, SK407 path fields: what users see in lint results.

Positions are checked against the file's own text (``line.index(dest)``), never against
what skillcheck computed elsewhere. The fast path (files whose raw text shows nothing
suspect are not parsed) is checked against the full parse on generated skills.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import invoke, write_skill
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from skillcheck.analysis import links
from skillcheck.engine.lint import lint
from skillcheck.rules import mentions
from skillcheck.settings import Settings
from skillcheck.source import markdown, outline
from skillcheck.source.anchors import QuickAnchors, slugify
from skillcheck.source.text import lf_lines

GOOD_FM = (
    "name: {name}\ndescription: Extracts text from PDF files. Use when the user asks about PDFs.\n"
)


def without_shortcuts(patch: pytest.MonkeyPatch) -> None:
    """Every filter answers "don't know" and the scan gives up: each file is read by the
    parse, and every link of every file is checked."""
    patch.setattr(outline, "fast_links", lambda lines, first_line=1: None)
    patch.setattr(outline, "fast_outline", lambda lines, first_line=1: None)
    patch.setattr(QuickAnchors, "has", lambda self, anchor: False)
    patch.setattr(markdown, "may_have_links", lambda text: True)
    patch.setattr(links, "_plainly_fine", lambda skill, items, known: False)
    patch.setattr(mentions, "_clear_unparsed", lambda *args: False)


def skill(root: Path, body: str, files: dict[str, str] | None = None, name: str = "pdf-tools"):
    return write_skill(root, name, frontmatter=GOOD_FM.format(name=name), body=body, files=files)


def diagnostics(path: Path, select: str = "SK5", **options) -> list[tuple[str, int, int, str]]:
    """(path relative to ``path``, line, column, code) of every finding, via the lint API."""
    from skillcheck.rules import resolve_selector

    codes = frozenset(r.code for part in select.split(",") for r in resolve_selector(part))
    result = lint([path], Settings(select=codes, options=options))
    out = []
    for d in result.diagnostics:
        rel = d.path.relative_to(path).as_posix() if d.path != path else "."
        out.append((rel, d.line, d.column, d.code))
    return sorted(out)


def messages(path: Path, select: str = "SK5", **options) -> list[str]:
    from skillcheck.rules import resolve_selector

    codes = frozenset(r.code for part in select.split(",") for r in resolve_selector(part))
    return [d.message for d in lint([path], Settings(select=codes, options=options)).diagnostics]


def where(text: str, needle: str, nth: int = 1) -> tuple[int, int]:
    """Line and column (1-based) of the nth occurrence of ``needle`` in ``text``."""
    index = -1
    for _ in range(nth):
        index = text.index(needle, index + 1)
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


# --- positions ------------------------------------------------------------------------------

PREFIXES = ["", "> ", "- ", "1. ", "> - ", "* > ", "10) ", "   ", "| ", "  - "]
PROSE = st.text(
    alphabet=st.sampled_from(list("ab xyz中文字表格🧾👍🏽👨‍👩‍👧éë—「」・")), max_size=10
).map(str.lstrip)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(PREFIXES), PROSE, st.booleans(), PROSE, st.booleans()),
        min_size=1,
        max_size=6,
    )
)
def test_broken_link_points_at_its_destination_in_any_container(tmp_path_factory, rows):
    root = tmp_path_factory.mktemp("pos")
    lines = ["", "# PDF tools", ""]
    for i, (prefix, before, image, after, blank) in enumerate(rows):
        link = f"{'!' if image else ''}[t{i}](references/missing-{i}.md)"
        lines.append(f"{prefix}{before}{link}{after}")
        if blank:
            lines.append("")
    body = "\n".join(lines) + "\n"
    # references/ exists: links into a missing folder would be one finding (fold_repeats)
    path = skill(root, body, files={"references/kept.md": "kept\n"})
    text = (path / "SKILL.md").read_text(encoding="utf-8")
    expected = sorted(
        ("SKILL.md", *where(text, f"references/missing-{i}.md"), "SK501") for i in range(len(rows))
    )
    assert diagnostics(path, "SK501") == expected


def test_positions_in_tables_lists_quotes_and_after_wide_characters(tmp_path):
    body = (
        "\n# PDF tools\n\n"
        "| Step | Where |\n|---|---|\n| Extract \\| split | [x](scripts/gone.py) |\n\n"
        "> 注意：请先阅读 🧾👨‍👩‍👧 [表格](references/表格.md)。\n\n"
        '1. First\n   - nested ![diagram](<assets/my flow.png> "title")\n\n'
        "[ref]:\n  references/defined-later.md\n"
    )
    path = skill(tmp_path, body)
    text = (path / "SKILL.md").read_text(encoding="utf-8")
    assert diagnostics(path, "SK501") == sorted(
        [
            ("SKILL.md", *where(text, "scripts/gone.py"), "SK501"),
            ("SKILL.md", *where(text, "references/表格.md"), "SK501"),
            ("SKILL.md", *where(text, "assets/my flow.png"), "SK501"),
            ("SKILL.md", *where(text, "references/defined-later.md"), "SK501"),
        ]
    )


def test_positions_of_repeated_definitions_split_links_and_deep_nests(tmp_path):
    # the parser reports only the first definition of a label: a repeated one (dead text to
    # a renderer, but still a definition) is found by its line; one in code is code
    body = (
        "\n# PDF tools\n\n"
        "[guide]: references/first-gone.md\n[GUIDE]: references/second-gone.md\n\n"
        "See [the guide][] and [the guide][guide].\n\n"
        "```\n[guide]: references/in-code.md\n```\n\n"
        "> A quote with [a split link](\n> references/split-gone.md) in it.\n\n"
        + "> " * 30
        + "- " * 30
        + "[deep](references/deep-gone.md) ünïcödé\n"
    )
    path = skill(tmp_path, body, files={"references/kept.md": "kept\n"})
    text = (path / "SKILL.md").read_text(encoding="utf-8")
    assert diagnostics(path, "SK501") == sorted(
        [
            ("SKILL.md", *where(text, "references/first-gone.md"), "SK501"),
            ("SKILL.md", *where(text, "references/second-gone.md"), "SK501"),
            ("SKILL.md", *where(text, "references/split-gone.md"), "SK501"),
            ("SKILL.md", *where(text, "references/deep-gone.md"), "SK501"),
        ]
    )


def test_links_in_other_markdown_files_resolve_from_that_file(tmp_path):
    path = skill(
        tmp_path,
        "\n# PDF\n\nSee [the guide](references/guide.md).\n",
        files={
            "references/guide.md": "# Guide\n\n[back](../SKILL.md), [forms](forms.md),"
            " [scripts](../scripts/run.py) and [bad](scripts/run.py).\n",
            "references/forms.md": "# Forms\n",
            "scripts/run.py": "print(1)\n",
        },
    )
    guide = (path / "references/guide.md").read_text(encoding="utf-8")
    assert diagnostics(path, "SK501") == [
        ("references/guide.md", *where(guide, "scripts/run.py", 2), "SK501")
    ]


def test_code_urls_and_good_links_are_not_reported(tmp_path):
    body = (
        "\n# PDF tools\n\n"
        "[site](https://example.com/missing.md) [mail](mailto:a@b.c) <https://x.y/z.md>\n"
        "![pixel](data:image/png;base64,AAAA) [proto](//cdn.example.com/a.js)\n"
        "`[not a link](docs/none.md)`\n\n"
        "```\n[not a link](references/none.md)\n```\n\n"
        "    [indented code](references/none.md)\n\n"
        "[spaces](references/my%20notes.md) [angle](<references/my notes.md>)"
        " [dir](references/) [here](#pdf-tools) [query](references/my%20notes.md?raw=1)\n"
    )
    path = skill(tmp_path, body, files={"references/my notes.md": "# Notes\n"})
    assert diagnostics(path, "SK5") == []


def test_outside_absolute_and_case_links(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "style.md").write_text("# Style\n", encoding="utf-8")
    body = (
        "\n# PDF\n\n[a](../shared/style.md) [b](/etc/hosts) [c](C:\\docs\\x.md) [d](~/notes.md)\n"
        "[e](references/../../shared/style.md) [f](References/Forms.md)"
        " [g](references/forms.md) [h](scripts\\run.py)\n"
    )
    path = skill(
        tmp_path, body, files={"references/forms.md": "# Forms\n", "scripts/run.py": "print(1)\n"}
    )
    text = (path / "SKILL.md").read_text(encoding="utf-8")
    at = lambda needle, code: ("SKILL.md", *where(text, needle), code)  # noqa: E731
    assert diagnostics(path, "SK501,SK502,SK503") == sorted(
        [
            at("../shared/style.md", "SK502"),
            at("/etc/hosts", "SK502"),
            at("C:\\docs", "SK502"),
            at("~/notes.md", "SK502"),
            at("references/../../shared", "SK502"),
            at("References/Forms.md", "SK503"),
            at("scripts\\run.py", "SK501"),
        ]
    )
    found = messages(path, "SK503")
    assert found == [
        "link 'References/Forms.md' differs in case from the file on disk ('References' is"
        " 'references'): it works on macOS and Windows but breaks on Linux and in packages;"
        " write 'references/forms.md'"
    ]


# --- anchors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Hello World", "hello-world"),
        ("C++ & co", "c--co"),
        ("`code` and *em*", "code-and-em"),
        ("Ünïcode 中文 🎉", "ünïcode-中文-"),
        ("snake_case-Name", "snake_case-name"),
        ("What's new? (v2.0)", "whats-new-v20"),
    ],
)
def test_github_heading_anchors(heading, slug):
    md = markdown.parse(["", f"## {heading}", "", f"## {heading}"])
    assert [h.slug for h in md.headings] == [slug, f"{slug}-1"]
    assert md.headings[0].span.start.line == 2


def test_broken_anchors_in_the_same_file_and_in_another(tmp_path):
    body = (
        "\n# PDF tools\n\n## Usage\n\n## Usage\n\n"
        "[ok](#usage-1) [bad](#usage-2) [ok](references/guide.md#Installation)"
        " [bad](references/guide.md#instalation) [html](#custom) [script](scripts/run.py#L3)\n"
        '<a id="custom"></a>\n'
    )
    path = skill(
        tmp_path,
        body,
        files={"references/guide.md": "# Guide\n\n## Installation\n", "scripts/run.py": "x\n"},
    )
    text = (path / "SKILL.md").read_text(encoding="utf-8")
    assert diagnostics(path, "SK504") == [
        ("SKILL.md", *where(text, "#usage-2"), "SK504"),
        ("SKILL.md", *where(text, "references/guide.md#instalation"), "SK504"),
    ]
    assert "did you mean #installation?" in messages(path, "SK504")[1]


HEADING_PIECES = [
    "# A", "## B b", "```", "~~~~", "- ```", "> # q", "    # code", "# A", "text", "",
    "  # C", "#nospace", "### `code`", "1. ```x", "para ``` x", "#  D  ##", "> - ~~~",
    "<div>", "<!-- c", "-->", "<pre>", "</pre>", "- <b>", "# <i>x</i>", "\t# tab", "  ```",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(HEADING_PIECES), max_size=14))
# a fence opened in a list item hides the heading-like line after it, with raw HTML around
# (the scan must give up there, not read on): random pieces rarely line these up
@example(["<div>", "", "- ```", "  # C", "  ```"])
@example(["<pre>", "</pre>", "> - ~~~", "> # q"])
def test_quick_anchor_filter_never_claims_a_heading_the_parser_does_not_see(pieces):
    text = "\n".join(pieces)
    parsed = {h.slug for h in markdown.parse(lf_lines(text)).headings}
    # every slug the pieces can make, asked in both orders (``has`` reads lazily)
    candidates = sorted({slugify(p.strip("#>-1. ~`")) for p in HEADING_PIECES} | parsed)
    for order in (candidates, candidates[::-1]):
        quick = QuickAnchors(text)
        claimed = {slug for slug in order if quick.has(slug)}
        assert claimed <= parsed
    # not vacuous: a plain heading at the top of a text without HTML is found unparsed
    if pieces and pieces[0] in ("# A", "## B b") and "<" not in text:
        assert QuickAnchors(text).has(slugify(pieces[0].lstrip("# ")))


# --- chains, unreferenced files, mentions -----------------------------------------------------


def test_reference_chain_and_unreferenced_files(tmp_path):
    path = skill(
        tmp_path,
        "\n# PDF\n\nSee [advanced](references/advanced.md). Run"
        " `python ${CLAUDE_SKILL_DIR}/scripts/extract.py`; templates are in `assets/templates/`.\n",
        files={
            "references/advanced.md": "# Advanced\n\nMore in [notes](notes.md).\n",
            "references/notes.md": "# Notes\n",
            "scripts/extract.py": "from helpers import pages\n",
            "scripts/helpers.py": "def pages(p):\n    return [p]\n",
            "scripts/__init__.py": "",
            "scripts/orphan.sh": "echo hi\n",
            "assets/templates/a.md": "# A\n",
            "assets/logo.png": "png",
            "assets/.gitkeep": "",
        },
    )
    advanced = (path / "references/advanced.md").read_text(encoding="utf-8")
    assert diagnostics(path, "SK505,SK506") == [
        ("assets/logo.png", 1, 1, "SK506"),
        ("references/advanced.md", *where(advanced, "notes.md"), "SK505"),
        ("scripts/orphan.sh", 1, 1, "SK506"),
    ]


def test_mentions_by_file_name_or_in_another_case_count(tmp_path):
    path = skill(
        tmp_path,
        "\n# PDF\n\nPackage with package_skill.py; to fill forms read FORMS.md.\n",
        files={
            "scripts/package_skill.py": "print(1)\n",
            "references/forms.md": "# Forms\n\nRun `python scripts/fill.py`.\n",
            "scripts/fill.py": "print(2)\n",
            "scripts/test_fill.py": "import fill\n",
        },
    )
    found = diagnostics(path, "SK506")
    assert found == [("scripts/test_fill.py", 1, 1, "SK506")]
    assert "looks like a test" in messages(path, "SK506")[0]


def test_missing_path_mentions_and_non_portable_paths(tmp_path):
    body = (
        "\n# PDF\n\n"
        "**Examples**: `references/finance.md` for schemas, e.g. `assets/logo.png`.\n"
        "Run `python scripts/extract_text.py` or ./scripts/extract.py; see references/forms.md.\n"
        "Save to `assets/<name>.pdf`, glob `scripts/*.py`, `myscripts/x.py`.\n"
        "On Windows: `scripts\\extract.py`, `C:\\Users\\alice\\in.pdf`, \\\\server\\share\\f.pdf.\n"
        "Output goes to /Users/alice/out or /home/bob/out; a regex `\\d+\\.\\d+` and file\\_name"
        " are fine, so is https://example.com/home/x and [a link](scripts/extract.py).\n\n"
        "```\npython scripts/not-checked.py C:\\in\\code\\block.txt\n```\n"
    )
    path = skill(tmp_path, body, files={"scripts/extract.py": "print(1)\n"})
    text = (path / "SKILL.md").read_text(encoding="utf-8")
    at = lambda needle, code: ("SKILL.md", *where(text, needle), code)  # noqa: E731
    assert diagnostics(path, "SK507,SK508") == sorted(
        [
            at("scripts/extract_text.py", "SK507"),
            at("references/forms.md", "SK507"),
            at("scripts\\extract.py", "SK508"),
            at("C:\\Users", "SK508"),
            # `\\\\server\\share` shows the syntax of a share: not one machine's path
            at("/Users/alice", "SK508"),
            at("/home/bob", "SK508"),
        ]
    )


# --- SK407 ------------------------------------------------------------------------------------


def test_path_fields_with_lists_and_nested_keys(tmp_path):
    frontmatter = (
        "name: pdf-tools\n"
        "description: Extracts text from PDF files. Use when the user asks about PDFs.\n"
        "license: LICENSE.txt\n"
        "resource_configs:\n"
        "  - file: assets/db.yaml\n"
        "  - file: assets/missing.yaml\n"
        "  - file: https://example.com/x.yaml\n"
        "metadata:\n"
        "  icon: ../icon.png\n"
    )
    path = write_skill(
        tmp_path, "pdf-tools", frontmatter=frontmatter, files={"assets/db.yaml": "a: 1\n"}
    )
    text = (path / "SKILL.md").read_text(encoding="utf-8")
    options = {"path-fields": ["license", "resource_configs[].file", "metadata.icon", "nope.x"]}
    assert diagnostics(path, "SK407", **options) == sorted(
        [
            ("SKILL.md", *where(text, "LICENSE.txt"), "SK407"),
            ("SKILL.md", *where(text, "assets/missing.yaml"), "SK407"),
            ("SKILL.md", *where(text, "https://"), "SK407"),
            ("SKILL.md", *where(text, "../icon.png"), "SK407"),
        ]
    )
    assert diagnostics(path, "SK407") == []  # nothing configured, nothing checked


def test_path_fields_from_the_config_file_on_the_command_line(tmp_path):
    path = write_skill(
        tmp_path,
        "pdf-tools",
        frontmatter=GOOD_FM.format(name="pdf-tools") + "license: LICENSE.txt\n",
    )
    config = tmp_path / "skillcheck.toml"
    config.write_text('path-fields = ["license"]\n', encoding="utf-8")
    result = invoke("lint", "--config", str(config), "--format", "json", str(path))
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    assert [(d["code"], d["line"], d["column"]) for d in report["diagnostics"]] == [
        ("SK407", 4, 10)
    ]
    assert "'LICENSE.txt' is not in the skill" in report["diagnostics"][0]["message"]


# --- suppression, parse-once, fast path ------------------------------------------------------


def test_inline_suppression_silences_one_link(tmp_path):
    body = (
        "\n# PDF\n\n<!-- skillcheck-disable-next-line SK501 -->\n[a](references/a.md)\n"
        "[b](references/b.md)\n"
    )
    path = skill(tmp_path, body)
    text = (path / "SKILL.md").read_text(encoding="utf-8")
    assert diagnostics(path, "SK501,SK120") == [
        ("SKILL.md", *where(text, "references/b.md"), "SK501")
    ]


def test_each_markdown_file_is_parsed_at_most_once(tmp_path, monkeypatch):
    path = skill(
        tmp_path,
        "\n# PDF\n\n[a](references/a.md#x) [b](#nope) `scripts/none.py` C:\\x\\y.txt\n",
        files={
            "references/a.md": "# A\n\n[b](b.md) [c](c.md#y) scripts/gone.py /home/lucas/x\n",
            "references/b.md": "# B\n",
        },
    )
    calls: list[int] = []
    real = markdown.parse

    def counting(lines, first_line=1):
        calls.append(len(lines))
        return real(lines, first_line)

    monkeypatch.setattr(markdown, "parse", counting)
    found = diagnostics(path, "ALL")
    assert {code for *_, code in found} >= {"SK501", "SK504", "SK505", "SK507", "SK508"}
    assert len(calls) == 2  # SKILL.md's body and references/a.md, once each (b.md: no need)


LINK_PIECES = [
    "[ok](references/a.md)", "[miss](references/zz.md)", "[case](References/A.md)",
    "[anchor](references/a.md#part-two)", "[bad anchor](references/a.md#part-3)",
    "[self](#pdf)", "[self bad](#nowhere)", "[esc](references/a\\_b.md)",
    "[ent](references/a&#46;md)", "[angle](<references/a b.md>)", "![img](assets/x.png)",
    "[up](../outside.md)", "[abs](/etc/hosts)", "[win](scripts\\run.py)",
    "[def][d1]", "[d1]: references/a.md", "[d2]: references/nope.md#x", "`[code](references/q.md)`",
    "```", "<img src=\"assets/y.png\">", "<!-- [c](references/c.md) -->",
    "see scripts/run.py", "see scripts/gone.py", "`references/a.md`", "C:\\Users\\me\\f.txt",
    "/home/me/x", "scripts\\run.py", "- item", "> quote", "# Part two", "## Part two", "",
    "[chain](references/b.md)", "[paren](references/a(1).md)", "[sp](references/a%20b.md)",
]  # fmt: skip
REFERENCE_PIECES = ["[back](../SKILL.md)", "[deep](b.md)", "[gone](c.md)", "[a](a.md#pdf)", ""]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.lists(st.sampled_from(LINK_PIECES), max_size=12),
    ref=st.lists(st.sampled_from(REFERENCE_PIECES), max_size=4),
)
def test_shortcuts_never_hide_a_finding(tmp_path_factory, monkeypatch, body, ref):
    root = tmp_path_factory.mktemp("fast")
    path = skill(
        root,
        "\n# PDF\n\n" + "\n".join(body) + "\n",
        files={
            "references/a.md": "# A\n\n## Part two\n\n" + "\n".join(ref) + "\n",
            "references/a b.md": "# AB\n",
            "references/b.md": "# B\n",
            "scripts/run.py": "print(1)\n",
            "assets/x.png": "png",
        },
    )
    fast = diagnostics(path, "ALL")
    with monkeypatch.context() as patch:
        without_shortcuts(patch)
        slow = diagnostics(path, "ALL")
    assert fast == slow


def test_a_nested_skill_is_checked_once_by_itself(tmp_path):
    outer = skill(tmp_path, "\n# Outer\n\nSee [the inner skill](inner/SKILL.md).\n", name="outer")
    write_skill(
        outer,
        "inner",
        frontmatter=GOOD_FM.format(name="inner"),
        body="\n# Inner\n\n[gone](references/gone.md)\n",
        files={"scripts/orphan.py": "print(1)\n"},
    )
    text = (outer / "inner" / "SKILL.md").read_text(encoding="utf-8")
    assert diagnostics(tmp_path, "SK5") == [
        ("outer/inner/SKILL.md", *where(text, "references/gone.md"), "SK501"),
        ("outer/inner/scripts/orphan.py", 1, 1, "SK506"),
    ]


def test_site_relative_links_and_slash_commands(tmp_path):
    """`/docs/x` copied from a web page is one warning per file; `/commit` is a command;
    machine paths still leave the skill."""
    body = (
        "\n# PDF\n\nSee [scopes](/docs/oauth), [api](/api/ref.md) and [more](/docs/more).\n"
        "Then run [/commit](/commit) or [/pdf:fill](/pdf:fill). Not [hosts](/etc/hosts).\n"
    )
    path = skill(tmp_path, body)
    text = (path / "SKILL.md").read_text(encoding="utf-8")
    assert diagnostics(path, "SK502,SK512") == [
        ("SKILL.md", *where(text, "/docs/oauth"), "SK512"),
        ("SKILL.md", *where(text, "/etc/hosts"), "SK502"),
    ]
    [message] = messages(path, "SK512")
    assert "'/docs/oauth' (2 more in this file) is relative to a web site" in message
