"""A real headless Chromium for the page tests: Debian's ``chromium`` driven by Playwright.

Playwright's own browser download cannot work here, so the browser is the system one
(``executable_path``); ``.ci/setup-debian.sh`` installs chromium and the README test command the browser extra. The fixture skips, with the reason,
when either is missing. Every page is opened from ``file://`` with the network blocked, and every
console error or page error is collected so a test can assert there were none.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]  # fmt: skip
SHOTS = Path(__file__).resolve().parent.parent / "docs" / "assets" / "screenshots"


@dataclass
class Opened:
    """A page loaded from a file, and what it reported on the console."""

    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install '.[browser]')"
    )
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium browser: apt-get install chromium (CI: .ci/setup-debian.sh)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def open_file(browser: Any, path: Path, width: int = 1280, height: int = 900) -> Opened:
    """Load ``path`` from file://, recording console errors and any request that is not file://."""
    page = browser.new_page(viewport={"width": width, "height": height})
    opened = Opened(page)
    page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    page.on(
        "request", lambda r: None if r.url.startswith(("file:", "data:")) else opened.requests.append(r.url)
    )
    page.goto(path.resolve().as_uri())
    page.wait_for_load_state("load")
    return opened
