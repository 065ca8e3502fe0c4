"""Debian's Chromium, headless, for the tests that look at a page as a browser lays it out: `launched` (conftest's
`browser` fixture, one launch a test module; a skip that says why without a browser or its driver) and `offline`, a
context that loads the page's own files and nothing from the network.
"""
from __future__ import annotations

import contextlib
import os

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@contextlib.contextmanager
def launched():
    if not (os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"no browser: {CHROMIUM} is missing (apt-get install chromium); the html.parser checks still ran")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        pytest.skip(f"no browser driver: playwright does not import ({error}); the html.parser checks still ran")
    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def offline(browser, asked: list[str] | None = None, **options):
    """A browser context (playwright's new_context `options`) that loads file: and data: URLs alone: it aborts every
    other request, its URL put in `asked`."""
    context = browser.new_context(**options)

    def only_files(route):
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            if asked is not None:
                asked.append(route.request.url)
            route.abort()

    context.route("**/*", only_files)
    return context
