"""The panel's files hold to what the server's CSP (`default-src 'self'`) and the unit allow:
no inline script or style, nothing from another origin, no token kept by the page, and every
element the script looks up is on the page. These run without a browser."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

STATIC = Path(__file__).parents[2] / "launcher" / "web" / "static"
PAGE = (STATIC / "index.html").read_text(encoding="utf-8")
SCRIPT = (STATIC / "panel.js").read_text(encoding="utf-8")
STYLE = (STATIC / "panel.css").read_text(encoding="utf-8")


class Page(HTMLParser):
    """What the page's tags ask for: element ids, asset URLs, and anything inline."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.urls: list[str] = []
        self.inline: list[str] = []
        self._tag = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag = tag
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"] or "")
        for key in ("src", "href"):
            if a.get(key):
                self.urls.append(a[key] or "")
        self.inline += [f"<{tag} {k}=...>" for k in a if k == "style" or k.startswith("on")]
        if tag == "script" and not a.get("src"):
            self.inline.append("<script> without src")
        if tag == "style":
            self.inline.append("<style>")

    def handle_data(self, data: str) -> None:
        if self._tag == "script" and data.strip():
            self.inline.append("script text")


def _page() -> Page:
    page = Page()
    page.feed(PAGE)
    return page


def test_nothing_inline_that_the_csp_would_block() -> None:
    assert _page().inline == []


def test_every_asset_is_the_units_own_and_is_there() -> None:
    urls = [u for u in _page().urls if not u.startswith("docs/")]
    assert urls, "the page names its assets"
    for url in urls:
        assert url.startswith("/static/"), url  # same origin, no CDN
        assert (STATIC / url.removeprefix("/static/")).is_file(), url
    for text in (PAGE, SCRIPT, STYLE):
        assert not re.search(r"\b(https?:)?//[\w.-]+\.\w", text.replace(
            "http://www.w3.org/2000/svg", "")), "a URL of another origin"
        assert "@import" not in text


def test_the_script_keeps_no_token() -> None:
    """The token is the HttpOnly cookie's alone; the page never stores one."""
    for store in ("localStorage", "sessionStorage", "document.cookie", "indexedDB"):
        assert store not in re.sub(r"//.*", "", SCRIPT), store


def test_every_element_the_script_looks_up_is_on_the_page() -> None:
    wanted = set(re.findall(r"\$\(\"([\w-]+)\"\)", SCRIPT))
    assert wanted, "the script looks elements up by id"
    assert wanted - _page().ids == set()


def test_state_changes_are_posts_to_the_api() -> None:
    """The press, every console line and the pairing go out as same-origin POSTs."""
    calls = re.findall(r"(?:api|fetch)\(\s*\"(GET|POST)\",\s*\"(/api/[\w/]+)\"", SCRIPT)
    calls += re.findall(r"fetch\(\"(/api/pair)\", \{ method: \"(POST)\"", SCRIPT)
    said = {(m, p) if m in ("GET", "POST") else (p, m) for m, p in calls}
    assert {("POST", "/api/press"), ("POST", "/api/command"), ("POST", "/api/pair")} <= said
    assert "credentials: \"same-origin\"" in SCRIPT
