"""The browser of the OAuth sign-in tests (``BROWSER="python THIS %s"``):
it opens the authorization URL elelem gives it, follows each redirect, and
submits the one form a page shows as the page filled it in (a sign-in page
with its demo user's name and password), until a page without a form: the
end of the redirect back to elelem's 127.0.0.1 callback.  What a user's
clicks would do, with nothing of any server's protocol in it."""

from __future__ import annotations

import sys
import urllib.request
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin


class PageForm(HTMLParser):
    """The action and the filled-in fields of a page's first form."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = {k: v or "" for k, v in attrs}
        if tag == "form" and self.action is None:
            self.action, self._inside = given.get("action", ""), True
        elif tag == "input" and self._inside and "name" in given:
            self.fields[given["name"]] = given.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._inside = False


def main(url: str) -> int:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    page = opener.open(url, timeout=30)
    for _ in range(5):
        form = PageForm()
        form.feed(page.read().decode("utf-8", "replace"))
        if form.action is None:
            return 0
        target = urljoin(page.geturl(), form.action)
        page = opener.open(target, data=urlencode(form.fields).encode(), timeout=30)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
