"""Deterministic generator of realistic Agent Skill documents, for tokenizer calibration.

Every word list, sentence and code template below was written for this project; nothing is
copied from an external corpus. A seed fully determines the output (only ``random.Random`` is
used), so a measurement made with one seed can be repeated exactly, and the estimator can be
calibrated on one seed and evaluated on another.

Documents look like what skillcheck reads: ``SKILL.md`` bodies with YAML frontmatter, and
reference files (``references/*.md``, scripts) that mix prose, fenced code in several languages,
Markdown tables, lists, URLs and numbers, and text in Chinese, Japanese, Russian, Arabic, Korean,
accented Latin scripts and emoji.

Usage as a script prints a summary, or one document::

    python bench/token_corpus.py --seed 1 --count 20
    python bench/token_corpus.py --seed 1 --show 3
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# Content kinds: each document has one dominant kind (used for the per-kind error breakdown).
KINDS: tuple[str, ...] = (
    "skill",  # SKILL.md: frontmatter + a mix of everything
    "prose",  # long explanations
    "code",  # reference file made mostly of fenced code blocks
    "script",  # a raw source file (no Markdown)
    "table",  # reference tables
    "list",  # checklists, steps, nested lists
    "data",  # URLs, versions, dates, hashes, JSON/YAML data
    "zh",  # Chinese skill
    "ja",  # Japanese skill
    "ru",  # Russian skill
    "ar",  # Arabic skill
    "emoji",  # English with heavy emoji use
    "mixed",  # everything, several languages in one file
)

MIN_BYTES = 200
MAX_BYTES = 40_000


@dataclass(frozen=True)
class Document:
    """One generated file: a pseudo path, its dominant content kind and its text."""

    name: str
    kind: str
    text: str


# --------------------------------------------------------------------------------------------
# Vocabulary (hand-written)
# --------------------------------------------------------------------------------------------

# the word lists are data, token_corpus_words.json, by name: everyday words, a wider, less
# common vocabulary (so calibration is not limited to everyday words), hand-written
# non-Latin sentence pools, and the English sentence templates (see ``render``)
_WORDS = json.loads(Path(__file__).with_name("token_corpus_words.json").read_text(encoding="utf-8"))
ACTIONS: list[str] = _WORDS["ACTIONS"]
THINGS: list[str] = _WORDS["THINGS"]
TOOLS: list[str] = _WORDS["TOOLS"]
NOUNS: list[str] = _WORDS["NOUNS"]
ADJECTIVES: list[str] = _WORDS["ADJECTIVES"]
ADVERBS: list[str] = _WORDS["ADVERBS"]
VERBS: list[str] = _WORDS["VERBS"]
PARTICIPLES: list[str] = _WORDS["PARTICIPLES"]
RARE_NOUNS: list[str] = _WORDS["RARE_NOUNS"]
RARE_ADJECTIVES: list[str] = _WORDS["RARE_ADJECTIVES"]
RARE_VERBS: list[str] = _WORDS["RARE_VERBS"]
PROPER: list[str] = _WORDS["PROPER"]
PEOPLE: list[str] = _WORDS["PEOPLE"]
CONDITIONS: list[str] = _WORDS["CONDITIONS"]
EDGE_CASES: list[str] = _WORDS["EDGE_CASES"]
OUTCOMES: list[str] = _WORDS["OUTCOMES"]
SKILL_NAMES: list[str] = _WORDS["SKILL_NAMES"]
LICENSES: list[str] = _WORDS["LICENSES"]
DOMAINS: list[str] = _WORDS["DOMAINS"]
PATH_WORDS: list[str] = _WORDS["PATH_WORDS"]
EMOJI: list[str] = _WORDS["EMOJI"]
SYMBOLS: list[str] = _WORDS["SYMBOLS"]
HEADINGS: list[str] = _WORDS["HEADINGS"]
ACCENTED: list[str] = _WORDS["ACCENTED"]
ZH: list[str] = _WORDS["ZH"]
ZH_HEADINGS: list[str] = _WORDS["ZH_HEADINGS"]
JA: list[str] = _WORDS["JA"]
JA_HEADINGS: list[str] = _WORDS["JA_HEADINGS"]
RU: list[str] = _WORDS["RU"]
RU_HEADINGS: list[str] = _WORDS["RU_HEADINGS"]
AR: list[str] = _WORDS["AR"]
AR_HEADINGS: list[str] = _WORDS["AR_HEADINGS"]
KO: list[str] = _WORDS["KO"]


def _bare(verb: str) -> str:
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if verb.endswith(("sses", "shes", "xes")) or (verb.endswith("ches") and verb != "caches"):
        return verb[:-2]
    return verb[:-1]


VERBS_BARE = [_bare(v) for v in VERBS]

LANG_POOLS: dict[str, tuple[list[str], list[str]]] = {
    "zh": (ZH, ZH_HEADINGS),
    "ja": (JA, JA_HEADINGS),
    "ru": (RU, RU_HEADINGS),
    "ar": (AR, AR_HEADINGS),
}


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def _num(rng: random.Random) -> str:
    return str(rng.choice([2, 3, 5, 10, 16, 20, 25, 30, 50, 64, 100, 128, 200, 500, 1000, 4096]))


def _version(rng: random.Random) -> str:
    return f"{rng.randint(0, 4)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}"


def _fill(rng: random.Random, template: str) -> str:
    return template.replace("{n}", _num(rng)).replace("{v}", _version(rng))


_IDENT_WORDS = [
    w.lower()
    for w in NOUNS + VERBS_BARE + ADJECTIVES + NOUNS + RARE_NOUNS[::3] + RARE_ADJECTIVES[::4]
    if " " not in w and "-" not in w
]


COMMON_ENV: list[str] = _WORDS["ENV_VARS"]


def env_var(rng: random.Random) -> str:
    """Half well-known variables, half project-specific ones."""
    if rng.random() < 0.5:
        return rng.choice(COMMON_ENV)
    return snake(rng).upper()


def _ident_words(rng: random.Random, k: int | None = None) -> list[str]:
    return [rng.choice(_IDENT_WORDS) for _ in range(k or rng.randint(1, 3))]


def snake(rng: random.Random, k: int | None = None) -> str:
    return "_".join(_ident_words(rng, k))


def camel(rng: random.Random, k: int | None = None) -> str:
    w = _ident_words(rng, k or rng.randint(2, 3))
    return w[0] + "".join(x.capitalize() for x in w[1:])


def pascal(rng: random.Random, k: int | None = None) -> str:
    return "".join(x.capitalize() for x in _ident_words(rng, k or rng.randint(1, 3)))


def kebab(rng: random.Random, k: int | None = None) -> str:
    return "-".join(_ident_words(rng, k))


def url(rng: random.Random) -> str:
    host = rng.choice(DOMAINS)
    parts = [rng.choice(PATH_WORDS) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.4:
        parts.append(kebab(rng) + rng.choice([".md", ".html", ".json", ".pdf", ""]))
    u = f"https://{host}/" + "/".join(parts)
    r = rng.random()
    if r < 0.2:
        u += f"?page={rng.randint(1, 40)}&per_page={rng.choice([20, 50, 100])}"
    elif r < 0.35:
        u += "#" + kebab(rng)
    return u


def rel_path(rng: random.Random) -> str:
    d = rng.choice(["scripts", "references", "assets", "templates", "examples"])
    ext = {
        "scripts": [".py", ".sh", ".js"],
        "references": [".md"],
        "assets": [".png", ".json"],
        "templates": [".docx", ".html", ".md"],
        "examples": [".csv", ".json", ".yaml"],
    }[d]
    return f"{d}/{snake(rng)}{rng.choice(ext)}"


def hexstr(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def date(rng: random.Random) -> str:
    return f"20{rng.randint(19, 26)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def inline_code(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.3:
        return f"`{rel_path(rng)}`"
    if r < 0.5:
        return f"`--{kebab(rng)}`"
    if r < 0.7:
        return f"`{snake(rng)}()`"
    if r < 0.85:
        return f"`{rng.choice(TOOLS)} {rng.choice(['--help', '--version', 'run', 'check', '-v'])}`"
    return f"`{camel(rng)}`"


# --------------------------------------------------------------------------------------------
# English prose
# --------------------------------------------------------------------------------------------

# the generators a sentence template's slots may name
_HELPERS: dict[str, Callable[..., object]] = {
    "env_var": env_var,
    "inline_code": inline_code,
    "kebab": kebab,
    "num": _num,
    "randint": lambda rng, a, b: rng.randint(a, b),
    "rel_path": rel_path,
    "url": url,
    "version": _version,
}
SENTENCES: list[str] = _WORDS["SENTENCES"]
SHOUTED: list[str] = _WORDS["SHOUTED"]  # emphasis by capitals, common in instructions


def render(rng: random.Random, template: str) -> str:
    """Fill a sentence template of the data file, slot by slot from the left (the order of
    ``rng`` calls is the output's identity). A slot is ``{LIST}`` (a random entry of a word
    list), ``{LIST.capitalize}`` / ``.lower`` / ``.fill`` (then a method or ``_fill``),
    ``{helper}`` or ``{randint A B}`` (a generator below), or ``{a|b|$helper}`` (every
    alternative rendered, then one chosen, as ``rng.choice([...])`` would)."""
    return _SLOT.sub(lambda m: _slot(rng, m.group(1)), template)


_SLOT = re.compile(r"\{([^{}]+)\}")


def _slot(rng: random.Random, slot: str) -> str:
    if "|" in slot:
        options = [_slot(rng, o[1:]) if o.startswith("$") else o for o in slot.split("|")]
        return rng.choice(options)
    name, _, method = slot.partition(".")
    if name.isupper():
        value: str = rng.choice(_WORDS[name])
        if method == "fill":
            return _fill(rng, value)
        return getattr(value, method)() if method else value
    helper, *args = name.split(" ")
    return str(_HELPERS[helper](rng, *map(int, args)))


def sentence(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.08:
        return rich_inline(rng)
    if r < 0.1:  # emphasis by capitals, common in instructions written for models
        return (
            rng.choice(SHOUTED)
            if rng.random() < 0.7
            else render(rng, rng.choice(SENTENCES)).upper()
        )
    return render(rng, rng.choice(SENTENCES))


def paragraph(rng: random.Random, lang: str = "en") -> str:
    k = rng.randint(2, 6)
    if lang == "en":
        return " ".join(sentence(rng) for _ in range(k))
    if lang == "accent":
        return " ".join(rng.choice(ACCENTED) for _ in range(k))
    if lang == "ko":
        return " ".join(_fill(rng, rng.choice(KO)) for _ in range(k))
    pool = LANG_POOLS[lang][0]
    sep = " " if lang in ("ru", "ar") else ""
    text = sep.join(_fill(rng, rng.choice(pool)) for _ in range(k))
    if rng.random() < 0.3:  # localized docs often keep English technical sentences
        text += " " + sentence(rng)
    return text


def heading(rng: random.Random, level: int = 2, lang: str = "en", emoji: float = 0.0) -> str:
    if lang in LANG_POOLS:
        title = rng.choice(LANG_POOLS[lang][1])
    elif rng.random() < 0.7:
        title = rng.choice(HEADINGS)
    else:
        title = f"{rng.choice(ACTIONS).capitalize()} {rng.choice(THINGS)}"
    if rng.random() < emoji:
        title = f"{rng.choice(EMOJI)} {title}"
    return "#" * level + " " + title


# --------------------------------------------------------------------------------------------
# Lists and tables
# --------------------------------------------------------------------------------------------


def short_item(rng: random.Random, lang: str = "en") -> str:
    if lang in LANG_POOLS:
        return _fill(rng, rng.choice(LANG_POOLS[lang][0]))
    r = rng.random()
    if r < 0.35:
        return sentence(rng)
    if r < 0.55:
        return f"**{rng.choice(NOUNS).capitalize()}**: {rng.choice(ADJECTIVES)} by default"
    if r < 0.7:
        return f"{inline_code(rng)} — {rng.choice(VERBS)} the {rng.choice(NOUNS)}"
    if r < 0.8:
        return f"{rng.choice(ACTIONS).capitalize()} {rng.choice(THINGS)}"
    if r < 0.9:
        return f"[{rng.choice(HEADINGS)}]({rel_path(rng)})"
    return rich_inline(rng)


def rich_inline(rng: random.Random) -> str:
    """Markdown inline syntax as people write it: nested emphasis, code in links, quotes."""
    return rng.choice(
        [
            f"**`{snake(rng)}`** ({rng.choice(ADJECTIVES)}, "
            f"{rng.choice(['optional', 'required'])})",
            f"See [`{rng.choice(TOOLS)}`]({url(rng)}) and [the {rng.choice(NOUNS)} guide]"
            f"({rel_path(rng)}#{kebab(rng)}).",
            f"Use \"{rng.choice(ADJECTIVES)}\" or '{rng.choice(ADJECTIVES)}' "
            f'(not "{rng.choice(NOUNS)}").',
            f"_{rng.choice(ADJECTIVES).capitalize()}_ {rng.choice(NOUNS)}s — e.g. `{camel(rng)}` "
            f"→ `{snake(rng)}`.",
            f"{rng.choice(THINGS)}[^{rng.randint(1, 9)}] ({rng.randint(1, 99)}%; "
            f"*{rng.choice(['n/a', 'tbd', 'est.'])}*)",
            f"<kbd>Ctrl</kbd>+<kbd>{rng.choice('ABCKPS')}</kbd> opens the {rng.choice(NOUNS)} "
            f"panel (`{rng.choice(['Cmd', 'Ctrl'])}+Shift+{rng.choice('PFX')}` on macOS).",
            f"[{rng.choice(PROPER)}'s {rng.choice(RARE_NOUNS)}]({url(rng)}) \u2014 "
            f"{rng.choice(RARE_ADJECTIVES)}.",
            f"`@{kebab(rng, 1)}/{kebab(rng)}@^{_version(rng)}` ({rng.choice(['peer', 'dev'])} "
            "dependency)",
            f"Paths like `~/{kebab(rng, 1)}/*.{{md,txt}}` or `${{{env_var(rng)}}}/bin` "
            "are expanded.",
        ]
    )


def bullet_list(rng: random.Random, lang: str = "en", emoji: float = 0.0) -> str:
    lines = []
    style = rng.choice(["-", "*", "1.", "- [ ]", "- [x]"])
    for i in range(rng.randint(3, 9)):
        marker = f"{i + 1}." if style == "1." else style
        item = short_item(rng, lang)
        if rng.random() < emoji:
            item = f"{rng.choice(EMOJI)} {item}"
        lines.append(f"{marker} {item}")
        if rng.random() < 0.2:
            indent = " " * (3 if style == "1." else 2)
            for _ in range(rng.randint(1, 3)):
                lines.append(f"{indent}- {short_item(rng, lang)}")
    return "\n".join(lines)


def table(rng: random.Random, lang: str = "en", emoji: float = 0.0) -> str:
    shape = rng.choice(["options", "status", "numbers", "mapping"])
    pad = rng.random() < 0.3  # aligned tables produce runs of spaces
    rows: list[list[str]]
    if shape == "options":
        head = ["Option", "Type", "Default", "Description"]
        rows = []
        for _ in range(rng.randint(3, 12)):
            desc = (
                short_item(rng, lang)
                if lang in LANG_POOLS
                else f"{rng.choice(VERBS).capitalize()} the {rng.choice(ADJECTIVES)} "
                f"{rng.choice(NOUNS)}"
            )
            rows.append(
                [
                    f"`--{kebab(rng)}`",
                    rng.choice(["string", "int", "bool", "path", "list[str]", "float", "enum"]),
                    rng.choice(["`none`", "`false`", "`true`", f"`{_num(rng)}`", '`"auto"`', "—"]),
                    desc,
                ]
            )
    elif shape == "status":
        head = ["Runtime", "Supported", "Notes"]
        runtimes = _WORDS["RUNTIMES"]
        rows = []
        for _ in range(rng.randint(3, 8)):
            ok = rng.random() < 0.6
            mark = (
                ("✅" if ok else "❌")
                if rng.random() < max(emoji, 0.4)
                else ("yes" if ok else "no")
            )
            rows.append([rng.choice(runtimes), mark, short_item(rng, lang)[:80]])
    elif shape == "numbers":
        head = ["Input", "Size", "Time (s)", "Tokens", "Change"]
        rows = [
            [
                f"`{snake(rng)}.{rng.choice(['pdf', 'csv', 'xlsx', 'json'])}`",
                f"{rng.uniform(0.1, 900):.1f} {rng.choice(['KB', 'MB'])}",
                f"{rng.uniform(0.01, 120):.2f}",
                f"{rng.randint(100, 250000):,}",
                f"{rng.uniform(-40, 40):+.1f}%",
            ]
            for _ in range(rng.randint(3, 14))
        ]
    else:
        head = ["Field", "Maps to", "Example"]
        rows = [
            [
                snake(rng),
                f"`{camel(rng)}`",
                rng.choice(
                    [
                        date(rng),
                        _version(rng),
                        f'"{rng.choice(NOUNS)}"',
                        str(rng.randint(0, 99999)),
                        url(rng),
                        hexstr(rng, 12),
                    ]
                ),
            ]
            for _ in range(rng.randint(3, 10))
        ]
    table_rows = [head, *rows]
    if pad:
        widths = [max(len(r[i]) for r in table_rows) for i in range(len(head))]
        fmt = [[c.ljust(w) for c, w in zip(r, widths, strict=True)] for r in table_rows]
        sep = ["-" * w for w in widths]
    else:
        fmt = table_rows
        sep = ["---"] * len(head)
    out = ["| " + " | ".join(fmt[0]) + " |", "| " + " | ".join(sep) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in fmt[1:]]
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# Code
# --------------------------------------------------------------------------------------------


def _py_stmt(rng: random.Random, ind: str) -> list[str]:
    v, w = snake(rng, rng.randint(1, 2)), snake(rng, 1)
    choices = [
        [f"{v} = {snake(rng)}({w}, {rng.choice(['timeout', 'retries', 'limit'])}={_num(rng)})"],
        [f"if not {v}:", f'{ind}    raise ValueError(f"{rng.choice(NOUNS)} is {{{v}!r}}")'],
        [f"for {w} in {v}:", f"    {snake(rng)}.append({w}.{snake(rng, 1)})"],
        [f'with open({v}, "{rng.choice(["rb", "r", "w"])}") as fh:', "    data = fh.read()"],
        [f'logger.info("{rng.choice(VERBS)} %d {rng.choice(NOUNS)}s", len({v}))'],
        [f'{v}["{snake(rng, 1)}"] = {rng.choice([_num(rng), "None", "True", repr(date(rng))])}'],
        [f"{v} = [x for x in {w} if x.{snake(rng, 1)} is not None]"],
        [f"# {sentence(rng)[:90]}"],
        [f"return {v}"],
        [
            "try:",
            f"    {v} = json.loads({w})",
            "except json.JSONDecodeError as exc:",
            f'{ind}    raise SystemExit(f"invalid JSON: {{exc}}") from exc',
        ],
        [
            f'{v} = subprocess.run(["{rng.choice(TOOLS)}", '
            f'"{rng.choice(["--json", "-q", "list"])}"],'
            " capture_output=True, text=True, check=True)"
        ],
    ]
    return [ind + line for line in rng.choice(choices)]


def python_code(rng: random.Random) -> str:
    lines: list[str] = []
    if rng.random() < 0.5:
        lines += [
            "import json",
            "import logging",
            "import subprocess",
            f"from pathlib import {rng.choice(['Path', 'PurePosixPath'])}",
            "",
            "logger = logging.getLogger(__name__)",
            "",
        ]
    for _ in range(rng.randint(1, 3)):
        name = snake(rng, rng.randint(2, 3))
        params = ", ".join(
            f"{snake(rng, 1)}: {rng.choice(['str', 'int', 'Path', 'dict', 'bool'])}"
            for _ in range(rng.randint(0, 3))
        )
        lines.append(f"def {name}({params}) -> {rng.choice(['None', 'dict', 'list[str]', 'int'])}:")
        lines.append(f'    """{sentence(rng)[:80]}"""')
        for _ in range(rng.randint(2, 7)):
            lines += _py_stmt(rng, "    ")
        lines.append("")
    if rng.random() < 0.4:
        lines += ['if __name__ == "__main__":', f"    {snake(rng, 2)}()"]
    return "\n".join(lines).rstrip()


def js_code(rng: random.Random) -> str:
    lines: list[str] = []
    ts = rng.random() < 0.5
    if rng.random() < 0.5:
        lines.append(f'import {{ {camel(rng)}, {camel(rng)} }} from "./{kebab(rng)}.js";')
        lines.append("")
    for _ in range(rng.randint(1, 3)):
        name = camel(rng)
        arg = camel(rng, 1)
        sig = (
            f"{arg}: {rng.choice(['string', 'number', 'Options', 'Record<string, unknown>'])}"
            if ts
            else arg
        )
        lines.append(f"export async function {name}({sig}) {{")
        for _ in range(rng.randint(2, 6)):
            v = camel(rng)
            lines.append(
                rng.choice(
                    [
                        f"  const {v} = await fetch(`{url(rng)}/${{{arg}}}`);",
                        f"  if (!{v}.ok) throw new Error("
                        f"`{rng.choice(NOUNS)} failed: ${{{v}.status}}`);",
                        f"  const {v} = {arg}.map((x) => x.{camel(rng, 1)}).filter(Boolean);",
                        f"  // {sentence(rng)[:80]}",
                        f'  console.log("{rng.choice(VERBS)}", {v}.length);',
                        f"  for (const item of {camel(rng)}) {{ {v}.push(item.{camel(rng, 1)}); }}",
                        f"  return {{ {camel(rng, 1)}: {v}, count: {rng.randint(0, 99)} }};",
                    ]
                )
            )
        lines.append("}")
        lines.append("")
    return "\n".join(lines).rstrip()


def bash_code(rng: random.Random) -> str:
    lines = ["#!/usr/bin/env bash", "set -euo pipefail", ""] if rng.random() < 0.4 else []
    for _ in range(rng.randint(2, 8)):
        lines.append(
            rng.choice(
                [
                    f"{rng.choice(TOOLS)} {kebab(rng, 1)} --{kebab(rng)} {rel_path(rng)}",
                    f"curl -fsSL {url(rng)} -o /tmp/{snake(rng)}.json",
                    f"jq -r '.{camel(rng, 1)}[] | .{camel(rng, 1)}' {snake(rng)}.json",
                    f'python {rel_path(rng)} --input "$1" --output out/ --{kebab(rng)}={_num(rng)}',
                    f'export {env_var(rng)}="{rng.choice(["1", "info", _num(rng)])}"',
                    f"for f in {rng.choice(['*.pdf', 'docs/*.md', 'data/*.csv'])}; "
                    'do echo "$f"; done',
                    f"if [ ! -f \"{rel_path(rng)}\" ]; then echo 'missing file' >&2; exit 1; fi",
                    f"# {sentence(rng)[:80]}",
                    f"git {rng.choice(['checkout -b', 'commit -m', 'push origin'])} {kebab(rng)}",
                    f'docker run --rm -v "$PWD":/work {kebab(rng)}:{_version(rng)} {kebab(rng, 1)}',
                ]
            )
        )
    return "\n".join(lines)


def json_code(rng: random.Random, depth: int = 0) -> str:
    ind = "  " * (depth + 1)
    items = []
    for _ in range(rng.randint(2, 6)):
        key = camel(rng, rng.randint(1, 2))
        r = rng.random()
        if r < 0.15 and depth < 2:
            val = json_code(rng, depth + 1)
        elif r < 0.35:
            val = str(rng.randint(0, 100000))
        elif r < 0.45:
            val = rng.choice(["true", "false", "null"])
        elif r < 0.6:
            val = f'"{url(rng)}"'
        elif r < 0.7:
            val = "[" + ", ".join(f'"{kebab(rng, 1)}"' for _ in range(rng.randint(1, 4))) + "]"
        elif r < 0.8:
            val = f'"{date(rng)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z"'
        else:
            val = f'"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}"'
        items.append(f'{ind}"{key}": {val}')
    return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"


def yaml_code(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(2, 5)):
        lines.append(f"{snake(rng, 1)}:")
        for _ in range(rng.randint(1, 5)):
            lines.append(
                rng.choice(
                    [
                        f"  {snake(rng)}: "
                        f"{rng.choice(['true', 'false', _num(rng), _version(rng)])}",
                        f'  {snake(rng, 1)}: "{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}"',
                        f"  - name: {kebab(rng)}\n    run: {rng.choice(TOOLS)} {kebab(rng, 1)}",
                        f"  {snake(rng, 1)}: {url(rng)}",
                        f"  {snake(rng, 1)}: [{', '.join(kebab(rng, 1) for _ in range(3))}]",
                    ]
                )
            )
    return "\n".join(lines)


def sql_code(rng: random.Random) -> str:
    t1, t2 = snake(rng, 1) + "s", snake(rng, 1) + "s"
    cols = [snake(rng, rng.randint(1, 2)) for _ in range(rng.randint(2, 6))]
    return rng.choice(
        [
            f"CREATE TABLE {t1} (\n  id BIGSERIAL PRIMARY KEY,\n"
            + ",\n".join(
                f"  {c} {rng.choice(['TEXT', 'INTEGER', 'TIMESTAMPTZ', 'BOOLEAN', 'JSONB'])}"
                f"{rng.choice(['', ' NOT NULL', ' DEFAULT now()'])}"
                for c in cols
            )
            + "\n);",
            f"SELECT {', '.join('t.' + c for c in cols)}, COUNT(*) AS total\nFROM {t1} AS t\n"
            f"JOIN {t2} AS u ON u.id = t.{snake(rng, 1)}_id\nWHERE t.created_at >= '{date(rng)}'\n"
            f"GROUP BY {', '.join('t.' + c for c in cols)}\nORDER BY total DESC\n"
            f"LIMIT {_num(rng)};",
            f"UPDATE {t1} SET {cols[0]} = {rng.randint(0, 9)} WHERE {cols[-1]} IS NULL;",
            f"ALTER TABLE {t1} ADD COLUMN {cols[0]} TEXT;\nCREATE INDEX idx_{t1}_{cols[0]} ON "
            f"{t1} ({cols[0]});",
        ]
    )


def go_code(rng: random.Random) -> str:
    name = pascal(rng, 2)
    lines = [
        f"func {name}(ctx context.Context, {camel(rng, 1)} string) ({pascal(rng, 1)}, error) {{"
    ]
    for _ in range(rng.randint(2, 6)):
        v = camel(rng, rng.randint(1, 2))
        lines.append(
            rng.choice(
                [
                    f"\t{v}, err := {camel(rng, 1)}.{pascal(rng, 2)}(ctx)",
                    "\tif err != nil {\n\t\treturn nil, "
                    f'fmt.Errorf("{rng.choice(VERBS)} {rng.choice(NOUNS)}: %w", err)\n\t}}',
                    f'\tfor _, {v} := range {camel(rng, 1)}s {{\n\t\tlog.Printf("%s", {v})\n\t}}',
                    f"\t// {sentence(rng)[:70]}",
                ]
            )
        )
    lines += ["\treturn nil, nil", "}"]
    return "\n".join(lines)


def rust_code(rng: random.Random) -> str:
    name = snake(rng, 2)
    lines = [
        f"pub fn {name}(path: &Path) -> Result<Vec<{pascal(rng, 1)}>, {pascal(rng, 1)}Error> {{"
    ]
    for _ in range(rng.randint(2, 6)):
        v = snake(rng, rng.randint(1, 2))
        lines.append(
            rng.choice(
                [
                    f"    let {v} = std::fs::read_to_string(path)?;",
                    f"    let {v}: Vec<_> = {snake(rng, 1)}.iter()"
                    f".filter(|x| x.{snake(rng, 1)}).collect();",
                    f"    if {v}.is_empty() {{\n"
                    f"        return Err({pascal(rng, 1)}Error::Empty);\n    }}",
                    f"    // {sentence(rng)[:70]}",
                    f'    println!("{{}} {rng.choice(NOUNS)}s", {v}.len());',
                ]
            )
        )
    lines += ["    Ok(Vec::new())", "}"]
    return "\n".join(lines)


def html_code(rng: random.Random) -> str:
    """HTML/JSX/templating: symbol-heavy markup."""
    comp = pascal(rng, 2)
    lines = [
        rng.choice(
            [
                f"export function {comp}({{ {camel(rng, 1)}, {camel(rng, 1)} }}) {{\n  return (",
                "<!-- " + sentence(rng)[:60] + " -->",
                f'<template id="{kebab(rng)}">',
            ]
        )
    ]
    for _ in range(rng.randint(3, 9)):
        tag = rng.choice(["div", "span", "a", "li", "p", "button", "section", "td", "img"])
        cls = " ".join(kebab(rng, 1) for _ in range(rng.randint(1, 3)))
        lines.append(
            rng.choice(
                [
                    f'    <{tag} className="{cls}">{{{camel(rng)}}}</{tag}>',
                    f'    <{tag} class="{cls}" data-{kebab(rng, 1)}='
                    f'"{{{{ .Values.{camel(rng, 1)} }}}}">'
                    f"{rng.choice(ADJECTIVES)}</{tag}>",
                    f'    <a href="{url(rng)}" target="_blank" '
                    f'rel="noopener">{rng.choice(HEADINGS)}</a>',
                    f"    {{{camel(rng)}.map(({camel(rng, 1)}) => "
                    f"<{comp} key={{{camel(rng, 1)}.id}} />)}}",
                    f'    <img src="./{rel_path(rng)}" '
                    f'alt="{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}" />',
                    f"    {{% if {snake(rng)} %}}"
                    f"{{{{ {snake(rng)} | default('{kebab(rng, 1)}') }}}}"
                    "{% endif %}",
                ]
            )
        )
    lines.append(rng.choice(["  );\n}", "</template>", ""]))
    return "\n".join(lines).rstrip()


def shell_pipeline(rng: random.Random) -> str:
    """One-liners with the punctuation shells are made of."""
    out = []
    for _ in range(rng.randint(2, 6)):
        out.append(
            rng.choice(
                [
                    f"find . -name '*.{rng.choice(['md', 'py', 'json'])}' "
                    "-print0 | xargs -0 grep -l "
                    f"'{snake(rng, 1)}' 2>/dev/null || true",
                    f'{env_var(rng)}="${{{env_var(rng)}:-{kebab(rng, 1)}}}"',
                    f"result=$({rng.choice(TOOLS)} {kebab(rng, 1)} --format=json | jq -r '.[] | "
                    f"select(.{camel(rng, 1)} != null) | .{camel(rng, 1)}')",
                    f'[[ -d "${{HOME}}/.{kebab(rng, 1)}" ]] && echo "ok" >> "$LOG"',
                    f"sed -E 's/^([a-z_]+)=(.*)$/\\1: \\2/' {snake(rng)}.env > {snake(rng)}.yaml",
                    f"grep -E '^(ERROR|WARN)\\b.*{snake(rng, 1)}' /var/log/{kebab(rng, 1)}.log | "
                    f"sort | uniq -c | sort -rn | head -{_num(rng)}",
                    f"awk -F',' 'NR>1 {{ sum += ${rng.randint(2, 9)} }} END {{ print sum }}' "
                    f"{snake(rng)}.csv",
                    f"printf '%s\\t%d\\n' \"${{{snake(rng, 1)}[@]}}\" {rng.randint(0, 99)}",
                ]
            )
        )
    return "\n".join(out)


CODE_GENERATORS: list[tuple[str, Callable[[random.Random], str]]] = [
    ("python", python_code),
    ("bash", bash_code),
    ("javascript", js_code),
    ("typescript", js_code),
    ("json", json_code),
    ("yaml", yaml_code),
    ("sql", sql_code),
    ("go", go_code),
    ("rust", rust_code),
    ("html", html_code),
    ("jsx", html_code),
    ("sh", shell_pipeline),
]


def code_block(rng: random.Random) -> str:
    lang, gen = rng.choice(CODE_GENERATORS)
    fence = rng.choice(["```", "```", "```", "~~~"])
    return f"{fence}{lang if rng.random() < 0.9 else ''}\n{gen(rng)}\n{fence}"


# --------------------------------------------------------------------------------------------
# Data-heavy blocks: URLs, numbers, versions, hashes
# --------------------------------------------------------------------------------------------


def data_block(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.25:
        return "\n".join(
            f"- [{rng.choice(HEADINGS)}]({url(rng)})" for _ in range(rng.randint(3, 10))
        )
    if r < 0.45:
        out = []
        for _ in range(rng.randint(2, 5)):
            out.append(f"### {_version(rng)} — {date(rng)}\n")
            out += [
                f"- {rng.choice(VERBS).capitalize()} {rng.choice(NOUNS)} handling "
                f"([#{rng.randint(10, 9999)}]({url(rng)}))"
                for _ in range(rng.randint(1, 4))
            ]
            out.append("")
        return "\n".join(out).rstrip()
    if r < 0.6:
        return "\n".join(
            f"{hexstr(rng, 64)}  {rel_path(rng)}"
            if rng.random() < 0.5
            else f"sha256:{hexstr(rng, 64)}"
            for _ in range(rng.randint(2, 6))
        )
    if r < 0.75:
        return "\n".join(
            rng.choice(
                [
                    f"- Host: `{rng.randint(10, 192)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}."
                    f"{rng.randint(1, 254)}:{rng.choice([22, 80, 443, 5432, 6379, 8080, 9000])}`",
                    f"- Request ID: `{hexstr(rng, 8)}-{hexstr(rng, 4)}-"
                    f"{hexstr(rng, 4)}-{hexstr(rng, 4)}-"
                    f"{hexstr(rng, 12)}`",
                    f"- Released {date(rng)} at "
                    f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} UTC, "
                    f"build {rng.randint(1000, 99999)}",
                    f"- Price: ${rng.randint(1, 999)}.{rng.randint(0, 99):02d} "
                    f"(≈ €{rng.randint(1, 999)}), "
                    f"tax {rng.randint(0, 25)}%",
                    f"- Limits: {rng.randint(1, 64)} GB RAM, {rng.randint(1, 32)} vCPU, "
                    f"{rng.randint(10, 5000)} req/s",
                ]
            )
            for _ in range(rng.randint(3, 8))
        )
    return "```json\n" + json_code(rng) + "\n```"


# --------------------------------------------------------------------------------------------
# Documents
# --------------------------------------------------------------------------------------------


def frontmatter(rng: random.Random, lang: str = "en") -> str:
    name = rng.choice(SKILL_NAMES)
    if lang in LANG_POOLS:
        desc = _fill(rng, rng.choice(LANG_POOLS[lang][0]))
    else:
        desc = (
            f"{rng.choice(ACTIONS).capitalize()} {rng.choice(THINGS)} and "
            f"{rng.choice(ACTIONS)} {rng.choice(THINGS)}. {sentence(rng)}"
        )
    lines = ["---", f"name: {name}"]
    if len(desc) > 90 and rng.random() < 0.4:
        lines.append("description: >-")
        words, cur = desc.split(" "), ""
        for w in words:
            if len(cur) + len(w) > 70:
                lines.append("  " + cur.rstrip())
                cur = ""
            cur += w + " "
        lines.append("  " + cur.rstrip())
    else:
        lines.append(f"description: {desc}")
    if rng.random() < 0.5:
        lines.append(f"license: {rng.choice(LICENSES)}")
    if rng.random() < 0.4:
        tools = " ".join(rng.sample(_WORDS["ALLOWED_TOOLS"], rng.randint(1, 4)))
        lines.append(f"allowed-tools: {tools}")
    if rng.random() < 0.4:
        lines += [
            "metadata:",
            f'  version: "{_version(rng)}"',
            f"  author: {rng.choice(['platform-team', 'docs@example.com', 'A. Nguyen'])}",
        ]
    lines.append("---")
    return "\n".join(lines)


# Weights of block types per dominant kind:
# (paragraph, list, table, code, data, heading-only spacer)
_MIX: dict[str, tuple[float, float, float, float, float]] = {
    "skill": (0.40, 0.22, 0.10, 0.20, 0.08),
    "prose": (0.85, 0.08, 0.02, 0.03, 0.02),
    "code": (0.15, 0.05, 0.02, 0.75, 0.03),
    "table": (0.12, 0.05, 0.75, 0.05, 0.03),
    "list": (0.15, 0.75, 0.03, 0.05, 0.02),
    "data": (0.10, 0.10, 0.10, 0.10, 0.60),
    "emoji": (0.35, 0.35, 0.15, 0.10, 0.05),
    "mixed": (0.40, 0.20, 0.12, 0.18, 0.10),
}
for _lang in ("zh", "ja", "ru", "ar"):
    _MIX[_lang] = (0.55, 0.20, 0.08, 0.12, 0.05)


def _block(rng: random.Random, kind: str, lang: str, emoji: float) -> str:
    weights = _MIX[kind]
    choice = rng.choices(range(5), weights=weights)[0]
    if choice == 0:
        return paragraph(rng, lang)
    if choice == 1:
        return bullet_list(rng, lang, emoji)
    if choice == 2:
        return table(rng, lang, emoji)
    if choice == 3:
        return code_block(rng)
    return data_block(rng)


def _script(rng: random.Random, target: int) -> tuple[str, str]:
    lang, gen = rng.choice(
        [
            ("py", python_code),
            ("sh", bash_code),
            ("js", js_code),
            ("go", go_code),
            ("rs", rust_code),
            ("sql", sql_code),
        ]
    )
    parts: list[str] = []
    size = 0
    while size < target:
        p = gen(rng)
        parts.append(p)
        size += len(p.encode()) + 2
    return lang, "\n\n".join(parts) + "\n"


def _emojify(rng: random.Random, text: str, rate: float) -> str:
    # Emoji at the end of some sentences, as in chatty docs.
    out = []
    for s in text.split(". "):
        out.append(s + (" " + rng.choice(EMOJI) if rng.random() < rate else ""))
    return ". ".join(out)


def make_document(rng: random.Random, kind: str, index: int) -> Document:
    """Build one document of about a log-uniform random size between MIN_BYTES and MAX_BYTES."""
    target = int(math.exp(rng.uniform(math.log(MIN_BYTES), math.log(MAX_BYTES))))
    if kind == "script":
        ext, text = _script(rng, target)
        return Document(
            f"skill-{index:04d}/scripts/{snake(rng, 2)}.{ext}", kind, _trim(text, target)
        )
    lang = kind if kind in LANG_POOLS else "en"
    emoji = 0.6 if kind == "emoji" else (0.05 if kind in ("skill", "list") else 0.0)
    is_skill = kind in ("skill", "zh", "ja", "ru", "ar", "emoji") or (
        kind == "mixed" and rng.random() < 0.5
    )
    parts: list[str] = []
    if is_skill:
        parts.append(frontmatter(rng, lang))
        parts.append("")
    title = (
        rng.choice(LANG_POOLS[lang][1])
        if lang in LANG_POOLS
        else rng.choice(SKILL_NAMES).replace("-", " ").title()
    )
    parts.append(f"# {title}")
    parts.append("")
    size = sum(len(p.encode()) + 1 for p in parts)
    while size < target:
        if rng.random() < 0.25:
            block = heading(rng, rng.choice([2, 2, 3]), lang, emoji)
        else:
            blang = lang
            if kind == "mixed":
                blang = rng.choice(["en", "en", "en", "zh", "ja", "ru", "ar", "ko", "accent"])
            elif lang == "en" and rng.random() < 0.03:
                blang = rng.choice(["accent", "ko"])
            block = _block(rng, kind, blang, emoji)
            if emoji > 0.2:
                block = _emojify(rng, block, emoji / 2)
        parts.append(block)
        parts.append("")
        size += len(block.encode()) + 2
    text = _trim("\n".join(parts), target)
    fname = "SKILL.md" if is_skill else f"references/{snake(rng, 2)}.md"
    return Document(f"skill-{index:04d}/{fname}", kind, text)


def _trim(text: str, target: int) -> str:
    """Cut to about ``target`` bytes at a line boundary (documents never end mid-line)."""
    data = text.encode()
    if len(data) <= target:
        return text if text.endswith("\n") else text + "\n"
    cut = data[:target].decode("utf-8", "ignore")
    nl = cut.rfind("\n")
    if nl > MIN_BYTES // 2:
        cut = cut[: nl + 1]
    return cut if cut.endswith("\n") else cut + "\n"


def generate_corpus(seed: int, count: int = 390) -> list[Document]:
    """Return ``count`` documents, cycling through KINDS, fully determined by ``seed``."""
    rng = random.Random(seed)
    return [make_document(rng, KINDS[i % len(KINDS)], i) for i in range(count)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=390)
    ap.add_argument("--show", type=int, help="print document number N")
    args = ap.parse_args()
    docs = generate_corpus(args.seed, args.count)
    if args.show is not None:
        print(f"== {docs[args.show].name} ({docs[args.show].kind})")
        print(docs[args.show].text)
        return
    total = sum(len(d.text.encode()) for d in docs)
    print(f"{len(docs)} documents, {total / 1e6:.2f} MB (seed {args.seed})")
    for kind in KINDS:
        ks = [d for d in docs if d.kind == kind]
        print(
            f"  {kind:<7} {len(ks):4d} docs {sum(len(d.text.encode()) for d in ks) / 1e3:9.1f} KB"
        )


if __name__ == "__main__":
    main()
