"""axe-core, the accessibility checker, run in a page a browser test opened: a page anyone can read has no critical
and no serious violation (issue 31: WCAG 2.1 AA, and axe's best practices, in Chromium).

axe-core is pinned in tests/package.json and tests/package-lock.json; `make test` installs it with `npm ci` into
tests/node_modules. Without it the check skips, saying so, as the browser tests skip without a browser.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("critical", "serious")  # the impacts a page may not have; moderate and minor ones are printed


def axe_results(page) -> dict:
    """axe-core's whole run over the page as it is now: its violations (rule, impact, help, elements)."""
    if not AXE.is_file():
        pytest.skip(f"no accessibility checker: {AXE} is missing (npm ci --prefix tests, which make test runs)")
    # Evaluated through the driver, not as a <script>: no page's Content-Security-Policy stands in its way.
    page.evaluate(AXE.read_text())
    return page.evaluate("""async () => {
        const results = await axe.run(document, {resultTypes: ['violations']});
        return {violations: results.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map(n => ({target: n.target.join(' '), summary: n.failureSummary}))}))};
    }""")


def blocking_violations(page, name: str) -> list[dict]:
    """The page's critical and serious axe-core violations (their first three elements); every violation is
    printed, the rest too."""
    violations = axe_results(page)["violations"]
    for v in violations:
        print(f"[axe] {name}: {v['impact']} {v['id']} ({len(v['nodes'])}): {v['help']}")
    return [{**v, "nodes": v["nodes"][:3]} for v in violations if v["impact"] in BLOCKING]


def assert_readable(page, name: str) -> None:
    """No critical or serious axe-core violation on the page."""
    blocking = blocking_violations(page, name)
    assert not blocking, f"{name}: " + json.dumps(blocking, indent=1)


def assert_page_readable(browser, url: str, name: str, login: str = "", clicks: tuple[str, ...] = (),
                         ready: str = "") -> None:
    """Open `url` in a fresh context (after `login`); once its requests are done and its tables drawn, click
    `clicks` (selectors: a dialog, a folding panel), wait until `ready` (a JavaScript expression) holds, and
    `assert_readable` the page."""
    context = browser.new_context()
    page = context.new_page()
    try:
        if login:
            page.goto(login, wait_until="load", timeout=30000)
        page.goto(url, wait_until="networkidle", timeout=30000)
        # the formgrader's tables say "Loading, please wait..." until its API answers and they are drawn
        page.wait_for_function("!document.body.innerText.includes('Loading, please wait')", timeout=20000)
        for selector in clicks:
            page.locator(selector).first.click()
        if ready:
            page.wait_for_function(ready, timeout=30000)
        assert_readable(page, name)
    finally:
        context.close()
