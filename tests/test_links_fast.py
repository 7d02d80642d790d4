"""The cheap link and heading scan agrees with the parse on every text it accepts.

``outline.fast_outline`` and ``outline.fast_links`` read the common shape of skill Markdown
without the parser, and give up (None) on anything where a scan could be wrong. The property
tests generate Markdown from pieces chosen to hit every construct that changes what a line
means (links, images, reference definitions and uses, code spans, fenced and indented code,
raw HTML, autolinks, escapes, entities, nested brackets, angle-bracket destinations, titles,
setext and ATX headings, lists, quotes, tabs, CRs, NULs and Unicode spaces) and check that
whatever the scan returns is exactly what the full parse gives, positions included. The other
tests show the scan is not vacuous: it reads realistic skills, and `lint` and `catalog`
give the same output with and without it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import invoke, write_skill
from hypothesis import example, given, settings
from hypothesis import strategies as st
from skillgen import generate

from skillcheck.source import markdown, outline
from skillcheck.source.text import decode_text, lf_lines

INLINE = [
    # links and images, plain and not
    "[a](references/a.md)", "![i](assets/x.png)", "[](x.md)", "[a]()", "[a](x.md#frag)",
    "[a](https://e.com/x)", "[a](<b c.md>)", "[a](<>)", '[a](b.md "t")', "[a](b.md 't')",
    "[a](b.md (t))", "[a]( b.md )", "[a](a(1).md)", "[a](a\\_b.md)", "[a](a&amp;b.md)",
    "[a](a%20b.md)", "[a](b.md)(c)", "[a](\nb.md)", "[a\nb](c.md)", "[a](b.md\n)",
    "[a [b](c.md)](d.md)", "[![i](i.png)](l.md)", "[a]", "[x][y]", "[x][]", "[ ]", "![x]",
    "[", "]", "](z.md)", "[a]: ", "[y]", "!", "[a](b`c)", "[a `b](c.md) d`", "[`c`](c.md)",
    "[a `]` b](c.md)", "[a](b\x01c)", "[α](ü.md)", "[a](b.md)\\", "[a](x\ty)",
    # code spans
    "`code`", "`` a`b ``", "`[c](q.md)`", "`", "``", "` a `", "`  `", "`<b>`", "`\\`",
    "`# h`", "```", "``x``",
    # raw HTML, autolinks, comments
    '<a href="h.md">', "<img src='i.png'>", "<!-- c -->", "<!--", "-->", "<b>", "</b>",
    "<http://x.y>", "<m@x.y>", "a < b", "<5", '<a id="anc">',
    # escapes and entities
    "\\[a](b.md)", "\\", "\\_", "C:\\x\\y", "\\`", "\\\\", "&amp;", "&#91;", "&",
    # emphasis and text
    "*em*", "_u_", "snake_case", "**b**", "x", "a b", "#", "x#y", "~", "=", "-", ":",
    "\u00a0", "\u0085", "\u2028", "\x00", "\r", "\t",
]  # fmt: skip

LINE_PREFIX = [
    "", "", "", " ", "  ", "   ", "    ", "\t", " \t", "- ", "* ", "+ ", "1. ", "1) ", "10. ",
    "> ", ">", "> > ", "- - ", "  - ", "    - ", "-     ", ">     ", "> - ", "1986. ",
]  # fmt: skip

WHOLE_LINE = [
    "", "", "", "# H", "## A b", "### `code` x", "# H #", "# # x #", "#tag", "####### x",
    "# a_b c", "# *em*", "# [l](l.md)", "# x &amp;", "#", "# `a` `` b ``", "#\tTab",
    "# H ##  ", "  ## Indented", "---", "===", "***", "- - -", "-", "=", "  ---",
    "```", "```py", "~~~", "````", "``` a`b", "~~~ a`b", "   ```", "    ```", "- ```",
    "> ```", "``` ", "~~~~",
    "[d]: references/d.md", "[d]: <x y.md>", '[d]: x.md "t"', "[d]:", "  [e]: e.md",
    "[D]: d2.md", "[a]: a.md", "[f]: f.md 'x'", "[g]:\tg.md", "[ ]: x.md", "[h]: h\\_.md",
    '"title"', "(title)", "'t'", "<div>", "</div>", "<pre>", "</pre>", "<!-- x", "x -->",
    "    code [x](y.md)", "\t[t](t.md)", "> " * 20 + "[deep](deep.md)",
    "- " * 12 + "[deep](deep.md)", " " * 30 + "# far",
]  # fmt: skip

# the shapes the scan accepts, so that most documents built from them are compared in full
PLAIN_INLINE = [
    "[a](references/a.md)", "![i](assets/x.png)", "[](x.md)", "[a]()", "[a](x.md#frag)",
    "[a](https://e.com/x)", "[α](ü.md)", "[x]", "[x][y]", "![x]", "`code`", "`[c](q.md)`",
    "` a `", "``x` ``", "`a] [b`", "[a `]` b](c.md)", "[`c`](c.md)", "snake_case", "x", "a b",
    "#", "x#y", "*em*", "_u_", "!", "C:\\x", "a < b", ":", "-", "=", "[a](b.md)(c)", "\u00a0",
]  # fmt: skip
PLAIN_PREFIX = ["", "", "", " ", "  ", "   ", "- ", "* ", "1. ", "> ", "  - ", "> > "]
PLAIN_WHOLE = [
    "", "", "", "# H", "## A b", "### `code` x", "# H #", "#tag", "# a_b c", "```", "```py",
    "~~~", "[d]: references/d.md", "[a]: a.md", "---", "===", "***",
]  # fmt: skip


def _documents(inline: list[str], prefixes: list[str], whole: list[str]) -> st.SearchStrategy:
    line = st.one_of(
        st.sampled_from(whole),
        st.builds(
            lambda prefix, parts, sep: prefix + sep.join(parts),
            st.sampled_from(prefixes),
            st.lists(st.sampled_from(inline), max_size=4),
            st.sampled_from([" ", "", " x "]),
        ),
    )
    return st.lists(line, max_size=14).map("\n".join)


# mostly plain, sometimes anything
document = st.one_of(
    _documents(INLINE, LINE_PREFIX, WHOLE_LINE),
    _documents(PLAIN_INLINE, PLAIN_PREFIX, PLAIN_WHOLE),
    _documents(PLAIN_INLINE + INLINE[:40], PLAIN_PREFIX + LINE_PREFIX, PLAIN_WHOLE + WHOLE_LINE),
)


def _full(lines: list[str], first_line: int) -> outline.Outline:
    return outline.outline_of(markdown.parse(lines, first_line))


@settings(max_examples=1500, deadline=None)
@given(document, st.sampled_from([1, 7]))
def test_fast_outline_is_the_parse_whenever_it_answers(text: str, first_line: int) -> None:
    lines = lf_lines(text)
    fast = outline.fast_outline(lines, first_line)
    if fast is not None:
        assert fast == _full(lines, first_line)


@settings(max_examples=1500, deadline=None)
@given(document, st.sampled_from([1, 7]))
def test_fast_links_are_the_parse_whenever_they_answer(text: str, first_line: int) -> None:
    lines = lf_lines(text)
    fast = outline.fast_links(lines, first_line)
    if fast is not None:
        assert fast == markdown.parse(lines, first_line).links


# free text: any characters, with the Markdown punctuation made likely
WILD = st.text(
    st.one_of(st.sampled_from(list("[]()<>`!#*_\\&:;\"' \t\n-=>~|.0123456789")), st.characters()),
    max_size=120,
)


@settings(max_examples=1000, deadline=None)
@given(WILD)
@example("#\x0c")  # the parser reads a form feed after "#" as a space: an empty heading
@example("x\n##\x0bfoo")
def test_fast_outline_on_free_text(text: str) -> None:
    lines = lf_lines(text)
    fast = outline.fast_outline(lines, 1)
    if fast is not None:
        assert fast == _full(lines, 1)


@settings(max_examples=100, deadline=None)
@given(document)
def test_truncation_is_the_same(text: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markdown, "MAX_PARSE_CHARS", 60)
        lines = lf_lines(text)
        fast = outline.fast_outline(lines, 1)
        if fast is not None:
            assert fast == _full(lines, 1)


# --- the scan reads realistic skills --------------------------------------------------------

TYPICAL = """\
# PDF tools

## Quick start

Run `python scripts/extract.py --pages 1-3 [--ocr]` and read
[the API reference](references/api.md#options), or see ![the logo](assets/logo.png).

```bash
python scripts/extract.py input.pdf > out.txt   # [not](a-link.md)
```

- Step one: see [forms](references/forms.md).
  - Nested: [details](references/details.md "not plain: a title").
> Note: `arr[0]` is the first page; [quotes](references/q.md) work too.

| option | meaning |
|---|---|
| `--ocr` | enables [OCR](references/ocr.md) |

## Reference `api` and snake_case

[spec]: references/spec.md
"""


def test_the_scan_reads_typical_skill_markdown() -> None:
    lines = lf_lines(TYPICAL)
    # one link has a title: the scan gives up on the whole text...
    assert outline.fast_links(lines) is None
    # ...and reads it once the title is gone, with everything else in place
    plain = lf_lines(TYPICAL.replace(' "not plain: a title"', ""))
    fast = outline.fast_outline(plain, 3)
    assert fast is not None
    assert fast == _full(plain, 3)
    assert [link.dest for link in fast.links] == [
        "references/api.md#options", "assets/logo.png", "references/forms.md",
        "references/details.md", "references/q.md", "references/ocr.md", "references/spec.md",
    ]  # fmt: skip
    assert [h.slug for h in fast.headings] == [
        "pdf-tools",
        "quick-start",
        "reference-api-and-snake_case",
    ]


def test_the_scan_reads_every_file_of_generated_skills(tmp_path: Path) -> None:
    for root in generate(tmp_path, 12, seed=3, findings=0.5):
        for path in sorted(root.rglob("*.md")):
            lines = lf_lines(decode_text(path.read_bytes()))
            first = 1
            if path.name == "SKILL.md":  # the body, as lint reads it
                first = lines.index("---", 1) + 2
                lines = lines[first - 1 :]
            fast = outline.fast_outline(lines, first)
            assert fast is not None, path
            assert fast == _full(lines, first)


# --- users see the same results ---------------------------------------------------------------

BODY = """
# Tools

See [the API](references/api.md), ![logo](assets/logo.png) and the spec.
Not a link: `[code](references/code.md)`.

```
[fenced](references/fenced.md)
```

[s]: references/spec.md
"""
WITH_HTML = BODY.replace("the spec.", "[the spec][s].") + '<a href="references/html.md">h</a>\n'


@pytest.mark.parametrize(
    ("body", "scanned", "html"),
    [
        (BODY, True, False),
        (WITH_HTML, False, True),
        (WITH_HTML.replace("<a href", "<span data-href"), False, False),
    ],
)
def test_catalog_references_are_the_same_with_and_without_the_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, scanned: bool, html: bool
) -> None:
    assert (outline.fast_links(lf_lines(body)) is not None) is scanned
    files = {f"references/{n}.md": f"# {n}\n" for n in ("api", "code", "fenced", "spec", "html")}
    files["assets/logo.png"] = "png"
    write_skill(
        tmp_path / "skills",
        "tools",
        frontmatter="name: tools\ndescription: Does tool things. Use when asked for tools.\n",
        body=body,
        files=files,
    )

    def catalog(name: str) -> list[str]:
        out = tmp_path / name
        result = invoke("catalog", "--isolated", "-o", str(out), str(tmp_path / "skills"))
        assert result.exit_code == 0, result.output
        return json.loads(out.read_text(encoding="utf-8"))["skills"][0]["references"]

    fast = catalog("fast.json")
    monkeypatch.setattr(outline, "fast_links", lambda lines, first_line=1: None)
    monkeypatch.setattr(markdown, "may_have_links", lambda text: True)
    assert catalog("slow.json") == fast
    expected = ["assets/logo.png", "references/api.md", "references/spec.md"]
    assert fast == sorted([*expected, "references/html.md"] if html else expected)


# --- segments cut only where a path could be -------------------------------------------------

MARKED = st.lists(
    st.sampled_from(
        ["scripts/run.py", "`references/r.md`", "/home/u/x", "file:///x", "C:\\x", "a\\b",
         "scripts\\/x", "scripts&#47;x", "assets/", "**references/**", "<b>scripts/</b>"]
    )
    | st.sampled_from(INLINE),
    max_size=4,
).map(" ".join)  # fmt: skip
MARKS = [("scripts/", "references/", "assets/"), ("\\", "/Users/", "/home/", "/root/", "file:/")]


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(LINE_PREFIX), MARKED), max_size=10),
    st.sampled_from(MARKS),
)
def test_segments_holding_a_mark_are_all_cut(lines: list[tuple[str, str]], marks) -> None:
    # the path rules read segments_holding(marks) instead of segments: every segment whose
    # text holds a mark must be among them, in the same order, and nothing else may appear
    text = "\n".join(prefix + rest for prefix, rest in lines)
    every = markdown.parse(lf_lines(text), 1).segments
    some = markdown.parse(lf_lines(text), 1).segments_holding(marks)
    rest = iter(every)
    assert all(any(s == t for t in rest) for s in some)  # a subsequence of the segments
    assert all(s in some for s in every if any(m in s.text for m in marks))
