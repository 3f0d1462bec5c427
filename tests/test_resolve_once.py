"""One ``elelem ask`` loads the catalog once and resolves its model once.

The real command runs in-process against a loopback server; the catalog
loader, the resolver and the shape loader are wrapped to count their calls
(each still does its work)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import elelem.cli.safety
import elelem.client
import elelem.providers.catalog
from cli_helpers import KEY, MODEL, text_reply
from elelem.cli import main
from elelem.providers import Catalog
from elelem.testing.servers import LoopbackServer, replay


def test_ask_loads_the_catalog_once_and_resolves_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: Counter[str] = Counter()

    def counted(name: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return fn(*args, **kwargs)

        return wrapper

    for module in (elelem.cli.safety, elelem.client):
        monkeypatch.setattr(module, "load_catalog", counted("load_catalog", module.load_catalog))
    monkeypatch.setattr(Catalog, "__init__", counted("Catalog", Catalog.__init__))
    monkeypatch.setattr(Catalog, "resolve", counted("resolve", Catalog.resolve))
    monkeypatch.setattr(
        elelem.providers.catalog,
        "load_shape",
        counted("load_shape", elelem.providers.catalog.load_shape),
    )
    with LoopbackServer([replay(text_reply("Three hundred and thirty metres."))]) as server:
        env = {
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": KEY,
            "XDG_CONFIG_HOME": str(tmp_path / "config"),  # no config file there
            "ELELEM_HOME": str(tmp_path),
        }
        result = CliRunner().invoke(main, ["ask", "-m", MODEL, "How tall?"], env=env)
        assert len(server.requests) == 1
    assert result.exit_code == 0, result.output
    assert "Three hundred and thirty metres." in result.output
    assert calls == Counter(load_catalog=1, Catalog=1, resolve=1, load_shape=1)
