"""Hosted tools through tables: each shape's ``HOSTED_TOOLS``.

A shape spells the hosted tools of a request (web search, code execution,
…: :data:`elelem.vocabulary.HostedTool`) from one table, a
:class:`HostedTools`: the tool's tag (``web_search``) -> the row that writes
it into the request (:data:`HostedSpeller`).  The policy for a tool a wire
cannot send is decided here, once, the same on every shape: it is left out
and reported as one :class:`~elelem.vocabulary.Drop` (``where``
``hosted_tools[k]``, ``what`` its tag, ``why`` ``unsupported``), never an
error and never silence.  A row may itself leave out a field or the whole
tool (a dialect without web search) and report it the same way.

Adding a hosted tool is a struct in :mod:`elelem.vocabulary.request` (a
member of ``HostedTool``) and one row in the table of each shape that can
send it; every other shape reports it dropped with no change
(``tests/test_block_and_tool_tables.py`` walks every shape and tool).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, get_args

from elelem.errors import RegistryError
from elelem.shapes.common import Dropped
from elelem.vocabulary import ComputerUse, HostedTool
from elelem.vocabulary.drop import ADJUSTED, UNSUPPORTED

HOSTED_TOOL_TAGS: tuple[str, ...] = tuple(
    str(member.__struct_config__.tag) for member in get_args(HostedTool)
)
"""The tag of every hosted tool of the vocabulary, in declaration order."""


def hosted_tool_tag(tool: object) -> str:
    """The tag of a hosted tool (``web_search``), or its class name when it has none."""
    config = getattr(tool, "__struct_config__", None)
    tag = getattr(config, "tag", None)
    return tag if isinstance(tag, str) else type(tool).__name__


@dataclass
class HostedSite:
    """Where a row writes one hosted tool: the request ``body`` (a tool
    spelt as a body field, as Chat Completions' ``web_search_options``), the
    wire's ``tools`` list, ``where`` the tool stands (``hosted_tools[2]``),
    the encoding's ``dropped`` records, the ``provider``, and ``context``:
    what else the shape's rows share (its dialect, the betas and MCP servers
    a request collects)."""

    provider: str
    body: dict[str, Any]
    tools: list[Any]
    dropped: Dropped
    context: Any = None
    where: str = "hosted_tools"

    def drop(self, what: str, detail: str, *, field: str = "", why: str = UNSUPPORTED) -> None:
        """Report ``what`` (the tool's tag, or a ``field`` of it) as not sent
        (``why`` :data:`~elelem.vocabulary.drop.UNSUPPORTED`), or as sent
        changed (:data:`~elelem.vocabulary.drop.ADJUSTED`)."""
        where = f"{self.where}.{field}" if field else self.where
        self.dropped.add(where, field or what, why, detail)


def no_skills(tool: object, site: HostedSite, wire: str) -> None:
    """Report the skills of a code execution tool whose container on
    ``wire`` loads none (:class:`~elelem.vocabulary.Skill`)."""
    if getattr(tool, "skills", ()):
        site.drop("code_execution", f"{wire} code execution loads no skills", field="skills")


def no_excluded_actions(tool: object, site: HostedSite, wire: str) -> None:
    """Report the excluded actions of a computer-use tool ``wire`` offers all
    of its actions with (:attr:`~elelem.vocabulary.ComputerUse.excluded_actions`)."""
    if getattr(tool, "excluded_actions", ()):
        site.drop(
            "computer_use", f"{wire} computer use excludes no actions", field="excluded_actions"
        )


OPERATING_SYSTEMS = frozenset({"mac", "windows", "linux", "ubuntu"})
"""The neutral environments that are a desktop of one named system (OpenAI's)."""


@dataclass(frozen=True)
class ComputerScreens:
    """What one wire's computer-use tool operates, the one policy for an
    environment (:attr:`~elelem.vocabulary.ComputerUse.environment`) it
    cannot say: ``subject`` names the tool in drop records (``Gemini
    computer use``), ``operates`` lists its screens in words, ``screens``
    maps each neutral environment it can take to the screen it goes as
    (``mac`` -> ``desktop``); an environment missing from ``screens`` is one
    the wire's documentation names no screen for."""

    subject: str
    operates: str
    screens: Mapping[str, str]

    def screen(self, tool: ComputerUse, site: HostedSite, sent: Mapping[str, str]) -> str | None:
        """The screen ``tool``'s environment goes as; None with the tool
        reported left out (``unsupported``) when the wire has none for it;
        an environment that goes as another screen (a named system as a
        desktop, a browser shown as a desktop) reported ``adjusted``, with
        what went (``sent``: a screen -> its wire spelling)."""
        environment = tool.environment
        screen = self.screens.get(environment)
        if screen is None:
            site.drop(
                "computer_use", f"{self.subject} operates {self.operates}, not {environment!r}"
            )
            return None
        if screen != environment:
            unsaid = (
                "names no operating system"
                if environment in OPERATING_SYSTEMS
                else f"operates {self.operates}"
            )
            site.drop(
                "computer_use",
                f"{self.subject} {unsaid}: {environment!r} sent as {sent[screen]!r}",
                field="environment",
                why=ADJUSTED,
            )
        return screen


class DomainFiltered(Protocol):
    """A hosted tool that can be kept to some domains or off others (a web
    search, a web fetch)."""

    @property
    def allowed_domains(self) -> tuple[str, ...]: ...

    @property
    def blocked_domains(self) -> tuple[str, ...]: ...


def domain_lists(out: dict[str, Any], tool: DomainFiltered, blocked: str) -> None:
    """Write the domain lists of a web search or fetch into its wire ``out``,
    each only where it has one: ``allowed_domains``, then the blocked ones
    under the wire's name for them (``blocked`` is Anthropic's
    ``blocked_domains``, OpenRouter's and xAI's ``excluded_domains``)."""
    if tool.allowed_domains:
        out["allowed_domains"] = list(tool.allowed_domains)
    if tool.blocked_domains:
        out[blocked] = list(tool.blocked_domains)


HostedSpeller = Callable[[Any, HostedSite], None]
"""One row: writes ``tool`` into the site (or reports what it leaves out)."""


@dataclass(frozen=True)
class HostedTools:
    """A shape's hosted-tool table: ``wire`` names the wire in drop records
    (``Chat Completions``), ``rows`` maps a tool's tag to its row."""

    wire: str
    rows: Mapping[str, HostedSpeller] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.rows) - set(HOSTED_TOOL_TAGS))
        if unknown:
            raise RegistryError(f"{self.wire}: {unknown} are no hosted tools {HOSTED_TOOL_TAGS}")

    def spell(self, tools: Sequence[HostedTool], site: HostedSite) -> None:
        """Write every tool of ``tools`` through its row; a tool without a
        row is left out and reported (the one policy for every shape)."""
        for k, tool in enumerate(tools):
            site.where = f"hosted_tools[{k}]"
            tag = hosted_tool_tag(tool)
            row = self.rows.get(tag)
            if row is not None:
                row(tool, site)
                continue
            name = getattr(tool, "name", None)
            named = f"{name!r}: " if isinstance(name, str) and name else ""
            site.drop(tag, f"{named}{self.wire} has no hosted {tag}")

    def spell_tools(self, tools: Sequence[HostedTool], site: HostedSite) -> None:
        """:meth:`spell`, then the body's ``tools`` field set to the site's
        ``tools`` list (the function tools and the hosted ones) when it holds
        any: a wire that lists both in one ``tools`` field."""
        self.spell(tools, site)
        if site.tools:
            site.body["tools"] = site.tools


__all__ = [
    "HOSTED_TOOL_TAGS",
    "OPERATING_SYSTEMS",
    "ComputerScreens",
    "DomainFiltered",
    "HostedSite",
    "HostedSpeller",
    "HostedTools",
    "domain_lists",
    "hosted_tool_tag",
    "no_excluded_actions",
    "no_skills",
]
