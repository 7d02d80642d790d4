"""The HTML report: its data and escaping (parsed here), and the page as a real headless
Chromium draws it (Debian's chromium and chromium-driver, driven by selenium; skipped with
the reason where they are missing: .ci/run installs them)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from conftest import FIXTURES, invoke, write_skill
from skillgen import generate

from skillcheck.report import html as html_report
from skillcheck.targets import LISTING_CAPS

TITLE = "skillcheck report"
# a skill's text that would run script if the page took it as markup
PAYLOAD = "window.pwned = 1; document.title = 'pwned'"
HOSTILE_DESCRIPTION = (
    f'Use when <a href="javascript:{PAYLOAD}">this</a> or <script>{PAYLOAD}</script> or'
    f' <img src=x onerror="{PAYLOAD}"> or </script><script>{PAYLOAD}</script><!-- appears'
)
HOSTILE_BODY = (
    "# Steps\n\n"
    f"[click me](javascript:{PAYLOAD})\n\n"
    f'<a href="javascript:{PAYLOAD}">or me</a>\n\n'
    f"<script>{PAYLOAD}</script>\n"
)


def _hostile(root: Path) -> Path:
    description = json.dumps(HOSTILE_DESCRIPTION)  # a YAML double-quoted string
    write_skill(
        root,
        "hostile-skill",
        frontmatter=f"name: hostile-skill\ndescription: {description}\n",
        body=HOSTILE_BODY,
    )
    write_skill(root, "plain-skill")
    return root


def _lint(cwd: Path, fmt: str, *paths: str, out: str | None = None) -> str:
    args = ["lint", "--isolated", "--target", "all", "--format", fmt, *paths]
    if out is not None:
        args += ["--output", out]
    result = invoke(*args, cwd=cwd)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


class _Page(HTMLParser):
    """The elements of a page, and the text of its script and style elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.raw: dict[str, list[str]] = {"script": [], "style": []}
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in self.raw:
            self._in = tag
            self.raw[tag].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            self.raw[self._in][-1] += data


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


# --- the page as written (no browser) -----------------------------------------------------


def test_a_skills_text_stays_data_in_the_page(tmp_path: Path) -> None:
    _hostile(tmp_path)
    text = _lint(tmp_path, "html", ".")
    page = _parse(text)
    scripts = [attrs for tag, attrs in page.tags if tag == "script"]
    # the page's own two: the data block and the script; nothing a skill wrote
    assert [a.get("type") for a in scripts] == ["application/json", None]
    data = json.loads(page.raw["script"][0])
    hostile = next(s for s in data["skills"] if s[0] == "hostile-skill")
    assert hostile[1] == "hostile-skill"
    assert any("Use when <a href=" in (f[7] or "") for f in data["findings"])
    assert "<" not in page.raw["script"][0]  # no </script> or <!-- can end the block
    assert not [a for _tag, a in page.tags if any(k.startswith("on") for k in a)]
    assert "javascript:" not in text.replace(page.raw["script"][0], "")  # only in the data


def test_the_policy_allows_only_the_pages_own_script_and_style(tmp_path: Path) -> None:
    write_skill(tmp_path, "plain-skill")
    page = _parse(_lint(tmp_path, "html", "."))
    csp = next(
        a["content"]
        for tag, a in page.tags
        if tag == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    )
    assert csp is not None
    policy = dict(part.strip().split(" ", 1) for part in csp.split(";"))
    assert policy["default-src"] == "'none'"
    assert policy["script-src"] == _sha256(page.raw["script"][1])
    assert policy["style-src"] == _sha256(page.raw["style"][0])
    # nothing to load from anywhere: no src, href or url() outside the page
    for _tag, attrs in page.tags:
        assert "src" not in attrs and "action" not in attrs
        assert (attrs.get("href") or "#").startswith("#")
    assert "url(" not in page.raw["style"][0] and "@import" not in page.raw["style"][0]


def test_the_script_never_writes_markup() -> None:
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in html_report.SCRIPT
    assert "Function(" not in html_report.SCRIPT and "setTimeout(" not in html_report.SCRIPT


def test_html_written_to_a_file_is_the_same_page(tmp_path: Path) -> None:
    write_skill(tmp_path, "plain-skill")
    stdout = _lint(tmp_path, "html", ".")
    _lint(tmp_path, "html", ".", out="report.html")
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == stdout


# --- the page in a browser ----------------------------------------------------------------

# per the machine notes: without the background-networking flags Chromium tries the network
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1300,1600",
)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.skip(
            "needs Debian's chromium and chromium-driver (apt-get install chromium"
            " chromium-driver; .ci/run installs them)"
        )
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (test extra)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # the driver's path given: selenium runs it as it is and downloads nothing
    service = webdriver.ChromeService(executable_path=driver)
    session = webdriver.Chrome(options=options, service=service)
    session.set_page_load_timeout(120)  # a hang guard, not a measurement
    try:
        yield session
    finally:
        session.quit()


def _open(browser, path: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(path.as_uri())
    WebDriverWait(browser, 120).until(
        lambda b: b.execute_script("return document.getElementById('grid-status').textContent")
    )


def _wait(browser, selector: str) -> list:
    """The elements ``selector`` finds once there are any (a details element's toggle event,
    which draws its findings, comes after the click returns)."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, 60).until(
        lambda b: b.find_elements("css selector", selector) or False
    )


def _rows(browser) -> list[dict]:
    """The grid's rows as drawn: skill, marks per runtime, bars per tier."""
    return browser.execute_script(
        """
        return Array.from(document.querySelectorAll('#grid-body tr')).map(function (tr) {
          var cells = [], bars = {};
          tr.querySelectorAll('td[data-target]').forEach(function (td) {
            cells.push([td.dataset.target, td.dataset.outcome, td.textContent]);
          });
          tr.querySelectorAll('.bar').forEach(function (b) {
            bars[b.dataset.tier] = [Number(b.dataset.value), Number(b.dataset.limit),
              b.querySelector('.fill').classList.contains('over'),
              parseFloat(b.querySelector('.fill').style.width)];
          });
          return {skill: tr.querySelector('th').firstChild.textContent, cells: cells,
                  bars: bars};
        });
        """
    )


MARKS = {"ok": "ok", "degraded": "deg", "rejected": "REJ", "dropped": "DROP"}


def _check_rows(rows: list[dict], report: dict, skills: list[dict]) -> None:
    budgets = {"catalog": 200, "body": 5000, "reference": 10_000}
    assert [r["skill"] for r in rows] == [s["path"] for s in skills]
    for row, skill in zip(rows, skills, strict=True):
        assert row["cells"] == [[t, o, MARKS[o]] for t, o in skill["outcomes"].items()]
        tokens = skill["tokens"]
        figures = {
            "catalog": tokens["catalog"],
            "body": tokens["body"],
            "reference": tokens["largest_reference"],
        }
        for tier, value in figures.items():
            if value is None:
                assert tier not in row["bars"]
                continue
            limit = budgets[tier]
            drawn, drawn_limit, over, width = row["bars"][tier]
            assert (drawn, drawn_limit, over) == (value, limit, value > limit)
            assert width == pytest.approx(min(100.0, 100 * value / limit))
    for row in rows:
        assert [cell[0] for cell in row["cells"]] == report["targets"]


def _console_errors(browser) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


@pytest.mark.slow
def test_the_fixtures_report_in_a_browser(tmp_path: Path, browser) -> None:
    cwd = FIXTURES.parent
    report = json.loads(_lint(cwd, "json", "fixtures/invalid", "fixtures/valid"))
    out = tmp_path / "fixtures.html"
    _lint(cwd, "html", "fixtures/invalid", "fixtures/valid", out=str(out))
    _open(browser, out)
    total = len(report["skills"])
    status = browser.find_element("id", "grid-status").text
    assert status == f"Showing skills 1 to 100 of {total} ({total} in all)"
    _check_rows(_rows(browser), report, report["skills"][:100])
    # a filter: the skills Claude Code drops
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", "f-target")).select_by_visible_text("claude-code")
    Select(browser.find_element("id", "f-outcome")).select_by_visible_text("dropped")
    dropped = [s for s in report["skills"] if s["outcomes"]["claude-code"] == "dropped"]
    assert dropped
    _check_rows(_rows(browser), report, dropped[:100])
    # the totals table agrees with the JSON report
    cell = browser.find_element(
        "css selector", 'td[data-target="claude-code"][data-outcome="dropped"]'
    )
    assert cell.text == str(len(dropped))
    # findings: security first, grouped by rule, each rule with its docs
    groups = browser.execute_script(
        "return Array.from(document.querySelectorAll('#finding-groups > section'))"
        ".map(function (s) { return s.dataset.group; })"
    )
    assert groups[0] == "security" and groups[1:] == ["error", "warning", "info"]
    rule = browser.find_element("css selector", 'details.rule[data-code="SK207"] > summary')
    rule.click()
    items = _wait(browser, 'details.rule[data-code="SK207"] ol.items li')
    sk207 = [d for d in report["diagnostics"] if d["code"] == "SK207"]
    assert len(items) == min(len(sk207), 25)
    first = sk207[0]
    assert items[0].find_element("css selector", ".loc").text == (
        f"{first['path']}:{first['line']}:{first['column']}"
    )
    about = browser.find_element("css selector", 'details.rule[data-code="SK207"] details.about')
    about.find_element("css selector", "summary").click()
    assert "What it does" in about.text
    assert _console_errors(browser) == []
    browser.save_screenshot(str(tmp_path / "fixtures.png"))
    assert (tmp_path / "fixtures.png").stat().st_size > 0


def _listing_chars(root: Path) -> int:
    total = 0
    for skill_md in sorted(root.rglob("SKILL.md")):
        front = yaml.safe_load(skill_md.read_text(encoding="utf-8").split("---\n", 2)[1])
        total += len(front["name"]) + len(front["description"])
    return total


@pytest.mark.slow
def test_a_thousand_skills_page_by_page(tmp_path: Path, browser) -> None:
    generate(tmp_path / "skills", 1000, seed=7, findings=0.2)
    report = json.loads(_lint(tmp_path, "json", "skills"))
    out = tmp_path / "big.html"
    _lint(tmp_path, "html", "skills", out=str(out))
    _open(browser, out)
    assert browser.find_element("id", "page").text == "Page 1 of 10"
    # by keyboard alone: Tab from the top of the page reaches the next-page button
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    reached = []
    for _ in range(30):
        ActionChains(browser).send_keys(Keys.TAB).perform()
        reached.append(browser.execute_script("return document.activeElement.id"))
        if reached[-1] == "next":
            break
    assert reached[-1] == "next", reached
    assert {"f-text", "f-target", "f-outcome", "f-over"} <= set(reached)
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    assert browser.find_element("id", "grid-status").text.startswith(
        "Showing skills 101 to 200 of 1,000"
    )
    _check_rows(_rows(browser), report, report["skills"][100:200])
    # the catalog against Codex's listing cap: every name and description, in characters
    codex = browser.find_element("css selector", '#caps tr[data-runtime="codex"] .bar')
    assert int(codex.get_attribute("data-value")) == _listing_chars(tmp_path / "skills")
    assert int(codex.get_attribute("data-limit")) == LISTING_CAPS["codex"].total
    # the search filter
    field = browser.find_element("id", "f-text")
    name = report["skills"][500]["path"]
    field.send_keys(name)
    assert [r["skill"] for r in _rows(browser)] == [
        s["path"] for s in report["skills"] if name in s["path"]
    ]
    assert _console_errors(browser) == []
    browser.save_screenshot(str(tmp_path / "big.png"))


@pytest.mark.slow
def test_a_skill_with_script_and_javascript_links_runs_nothing(tmp_path: Path, browser) -> None:
    _hostile(tmp_path)
    out = tmp_path / "hostile.html"
    _lint(tmp_path, "html", ".", out=str(out))
    _open(browser, out)
    # every rule's findings and docs drawn
    rules = browser.find_elements("css selector", "details.rule > summary")
    for summary in rules:
        summary.click()
    assert len(_wait(browser, "details.rule ol.items")) == len(rules)
    for about in browser.find_elements("css selector", "details.about > summary"):
        about.click()
    state = browser.execute_script(
        """
        var all = Array.from(document.querySelectorAll('*'));
        return {
          pwned: window.pwned === undefined ? null : window.pwned,
          title: document.title,
          scripts: document.scripts.length,
          imgs: document.images.length,
          js: Array.from(document.querySelectorAll('a[href]')).filter(function (a) {
            return !/^#/.test(a.getAttribute('href')); }).length,
          handlers: all.filter(function (e) { return Array.from(e.attributes).some(
            function (a) { return /^on/i.test(a.name); }); }).length,
          text: document.body.textContent
        };
        """
    )
    assert state["pwned"] is None
    assert state["title"].startswith(TITLE)
    assert state["scripts"] == 2 and state["imgs"] == 0
    assert state["js"] == 0 and state["handlers"] == 0
    # the skill's text is shown, as text
    assert "<script>window.pwned" in state["text"]
    assert re.search(r"javascript:window\.pwned", state["text"]) is not None
    assert _console_errors(browser) == []  # not even a blocked attempt
    browser.save_screenshot(str(tmp_path / "hostile.png"))
