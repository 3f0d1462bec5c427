"""The neutral request surface: client tools, hosted tools and options.

Each shape's encoder translates these into its own wire definitions and
versions; a shape that cannot honor one reports it rather than dropping it.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import date
from typing import Any, Literal

import msgspec

from elelem.errors import DecodeError, UnsupportedError
from elelem.vocabulary.json import JSONValue, require_json
from elelem.vocabulary.registry import SHAPE_NAMES, is_shape_name


class ToolSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A client tool the model may call; ``parameters`` is a JSON Schema object.

    ``native`` holds per-provider fields that have no neutral meaning, keyed by
    the name of the shape they are for (Anthropic ``cache_control``,
    ``allowed_callers``, ``defer_loading``, ``input_examples``; OpenAI ``strict``;
    Gemini ``behavior``, ``responseJsonSchema``...).  When a request is encoded for
    shape X, only ``native[X]`` is merged into X's wire tool definition, after
    the fields elelem writes:

    - ``anthropic_messages``: the tool object (next to ``name``/``input_schema``);
    - ``openai_responses``: the function tool object (next to ``name``/``parameters``);
    - ``openai_chat`` and ``ollama_native``: the ``function`` object (where
      ``strict`` lives), not the outer ``{"type": "function"}`` wrapper;
    - ``gemini``: the function declaration;
    - ``bedrock_converse``: the ``toolSpec`` object (next to ``inputSchema``).

    Entries for other shapes are not sent and not reported as dropped: one
    ToolSpec serves every provider, each taking its own entry.  An entry under
    a key that is no registered shape's name (built-in or a plugin's:
    :data:`~elelem.vocabulary.registry.SHAPE_NAMES`) is an
    :class:`~elelem.errors.UnsupportedError` at encoding naming the key and
    the known shapes, so a misspelt shape name is never sent without its fields.
    A native field that names a field elelem writes itself (``name``,
    ``description``, ``input_schema``, ``parameters``, ``type``...) raises
    :class:`~elelem.errors.UnsupportedError` at encoding rather than override it.
    """

    name: str
    description: str = ""
    parameters: JSONValue = msgspec.field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    # Last, with a default, so requests stored before it existed still decode.
    native: dict[str, dict[str, JSONValue]] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        require_json(self.parameters, "$.parameters", f"tool {self.name!r} parameters")
        if self.native:
            require_json(self.native, "$.native", f"tool {self.name!r} native fields")
            for shape, fields in self.native.items():
                if not isinstance(fields, dict):
                    raise DecodeError(
                        f"tool {self.name!r} native fields for {shape!r} must be an object",
                        f"$.native.{shape}",
                    )

    def merge_native(
        self, shape: str, definition: dict[str, JSONValue], reserved: Collection[str]
    ) -> None:
        """Merge ``native[shape]`` into ``definition`` (``shape``'s wire definition
        of this tool, built by its encoder) after the fields already there.

        Every key of ``native`` must be a registered shape's name (built-in or
        a plugin's, :data:`~elelem.vocabulary.registry.SHAPE_NAMES`): another
        is a misspelt or missing shape, an
        :class:`~elelem.errors.UnsupportedError` naming the key and the known
        shapes.  ``reserved`` are the fields the encoder writes itself, whether
        or not this definition has them; naming one of those, or any field
        already in ``definition``, is an :class:`~elelem.errors.UnsupportedError`
        naming the tool and the field.  Both are raised before anything is merged.
        """
        for key in self.native:
            if key != shape and not is_shape_name(key):
                known = ", ".join(sorted({shape, *SHAPE_NAMES.members()}))
                raise UnsupportedError(
                    f"tool {self.name!r}: native fields keyed by {key!r}, "
                    f"which is no registered shape (known shapes: {known})"
                )
        fields = self.native.get(shape, {})
        for key in fields:
            if key in reserved or key in definition:
                taken = ", ".join(sorted({*reserved, *definition}))
                raise UnsupportedError(
                    f"tool {self.name!r}: native field {key!r} for {shape} is one elelem "
                    f"writes itself ({taken}) and is never overridden"
                )
        definition.update(fields)


class UserLocation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Approximate user location, to localize hosted search results."""

    city: str | None = None
    region: str | None = None
    country: str | None = None
    timezone: str | None = None


class WebSearch(
    msgspec.Struct, frozen=True, tag_field="type", tag="web_search", forbid_unknown_fields=True
):
    """Let the provider search the web on its own servers."""

    max_uses: int | None = None
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    user_location: UserLocation | None = None
    version: str | None = None
    """Pin a provider wire version (``web_search_20250305``); None picks the shape's default."""


class WebFetch(
    msgspec.Struct, frozen=True, tag_field="type", tag="web_fetch", forbid_unknown_fields=True
):
    """Let the provider fetch web pages and documents on its own servers."""

    max_uses: int | None = None
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()
    citations: bool = False
    max_content_tokens: int | None = None
    version: str | None = None


class Skill(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An Agent Skill loaded into the provider's code-execution container:
    ``skill_id`` a skill the provider ships (``builtin``: Anthropic's
    ``pptx``, ``xlsx``, ``docx``, ``pdf``) or one uploaded to its Skills API
    (``skill_01…``), ``version`` a version it names (None: the latest)."""

    skill_id: str
    version: str | None = None
    builtin: bool = False

    def __post_init__(self) -> None:
        if not self.skill_id or not self.skill_id.strip():
            raise DecodeError("a skill needs a skill_id", "$.skill_id")
        if self.version is not None and not self.version.strip():
            raise DecodeError(f"skill {self.skill_id!r}: an empty version", "$.version")


class CodeExecution(
    msgspec.Struct,
    frozen=True,
    tag_field="type",
    tag="code_execution",
    forbid_unknown_fields=True,
    omit_defaults=True,
):
    """Let the provider run code in its own sandbox; ``skills`` are loaded
    into its container (Anthropic's ``container.skills``)."""

    # omit_defaults: a value without skills keeps the bytes it had before
    # ``skills`` existed, so stored requests and older readers agree.

    version: str | None = None
    skills: tuple[Skill, ...] = ()


class FileSearch(
    msgspec.Struct, frozen=True, tag_field="type", tag="file_search", forbid_unknown_fields=True
):
    """Let the provider search files the caller uploaded to its stores.

    ``stores`` are the provider's store ids (OpenAI vector store ids, Gemini
    ``fileSearchStores/...`` names); ``max_results`` bounds the hits per search;
    ``filters`` is the provider's own metadata filter object (OpenAI's
    comparison/compound filter, Gemini's ``metadataFilter`` string), sent as given.
    """

    stores: tuple[str, ...]
    max_results: int | None = None
    filters: JSONValue = None
    version: str | None = None

    def __post_init__(self) -> None:
        if not self.stores:
            raise DecodeError("file search needs at least one store id", "$.stores")
        if self.max_results is not None and self.max_results < 1:
            raise DecodeError("file search max_results must be at least 1", "$.max_results")
        require_json(self.filters, "$.filters", "file search filters")


class ImageGeneration(
    msgspec.Struct,
    frozen=True,
    tag_field="type",
    tag="image_generation",
    forbid_unknown_fields=True,
):
    """Let the provider generate (or edit) images on its own servers.

    The named fields have the same meaning on every wire that has them
    (``size`` like ``1024x1024``, ``quality``, ``output_format`` like ``png``,
    ``background``); ``options`` holds further provider fields, merged into the
    tool definition after them (naming one of them is an error).
    """

    model: str | None = None
    size: str | None = None
    quality: str | None = None
    output_format: str | None = None
    background: str | None = None
    partial_images: int | None = None
    options: dict[str, JSONValue] = msgspec.field(default_factory=dict)
    version: str | None = None

    def __post_init__(self) -> None:
        require_json(self.options, "$.options", "image generation options")


ApprovalPolicy = Literal["always", "never"]
"""Whether a provider asks the caller before each hosted MCP call."""


class RemoteMCP(
    msgspec.Struct, frozen=True, tag_field="type", tag="remote_mcp", forbid_unknown_fields=True
):
    """An MCP server the *provider* calls on its own servers (Anthropic's MCP
    connector, the OpenAI Responses ``mcp`` tool); its calls are hosted
    activity, never client tool calls.

    ``name`` labels the server (the wire's ``name``/``server_label``);
    ``allowed_tools`` limits which of its tools the model may use (None: all);
    ``authorization`` is the bearer token the provider presents to the server.
    It is a secret: it goes into the request body only, and appears in no
    repr, log, drop record or stored event.  ``require_approval`` asks the
    provider to pause for the caller's approval before each call (``always``,
    where the wire can; the tool loop answers through its approval callback)
    or not (``never``); None takes the provider's default.
    """

    url: str
    name: str
    allowed_tools: tuple[str, ...] | None = None
    authorization: str | None = None
    require_approval: ApprovalPolicy | None = None
    description: str | None = None

    def __post_init__(self) -> None:
        if not self.url.startswith(("https://", "http://")):
            raise DecodeError("remote MCP url must be http(s)", "$.url")
        if not self.name:
            raise DecodeError("remote MCP server needs a name", "$.name")

    def __repr__(self) -> str:
        # The token is a secret: a repr names whether one is set, never its value.
        secret = "<set>" if self.authorization else None
        return (
            f"RemoteMCP(url={self.url!r}, name={self.name!r}, "
            f"allowed_tools={self.allowed_tools!r}, authorization={secret}, "
            f"require_approval={self.require_approval!r})"
        )

    __str__ = __repr__

    def __rich_repr__(self) -> list[tuple[str, Any]]:
        return [
            (f, "<set>" if f == "authorization" and self.authorization else getattr(self, f))
            for f in self.__struct_fields__
        ]


class Memory(
    msgspec.Struct, frozen=True, tag_field="type", tag="memory", forbid_unknown_fields=True
):
    """A memory directory the model reads and writes through the provider's
    memory tool (Anthropic ``memory_20250818``); the *client* executes each
    command (:class:`elelem.tools.MemoryTool`), in the same tool loop as a
    Python function.  ``name`` is the tool's name the calls carry."""

    name: str = "memory"
    version: str | None = None


class Shell(msgspec.Struct, frozen=True, tag_field="type", tag="shell", forbid_unknown_fields=True):
    """Shell commands the model asks the *client* to run (OpenAI Responses
    ``shell``, or ``local_shell`` when ``local``); executed by
    :class:`elelem.tools.ShellTool` in the tool loop, after approval.

    With ``hosted`` the provider runs them in a container of its own
    (OpenAI's hosted shell, ``container_auto``), its activity hosted, and
    ``skills`` are mounted there."""

    local: bool = False
    hosted: bool = False
    skills: tuple[Skill, ...] = ()

    def __post_init__(self) -> None:
        if self.local and self.hosted:
            raise DecodeError("a shell is local or hosted, not both", "$.hosted")
        if self.skills and not self.hosted:
            raise DecodeError("skills are mounted in a hosted shell's container only", "$.skills")


class ApplyPatch(
    msgspec.Struct, frozen=True, tag_field="type", tag="apply_patch", forbid_unknown_fields=True
):
    """File patches the model asks the *client* to apply (OpenAI Responses
    ``apply_patch``); executed by :class:`elelem.tools.ApplyPatchTool` in the
    tool loop, after approval."""


class ComputerUse(
    msgspec.Struct, frozen=True, tag_field="type", tag="computer_use", forbid_unknown_fields=True
):
    """A screen the model operates through the provider's computer-use tool
    (Anthropic ``computer_2025…``, OpenAI Responses ``computer``, Gemini
    ``computerUse`` and the Interactions API's ``computer_use``); the
    *client* performs each action and answers with a screenshot
    (:class:`elelem.tools.ComputerTool`), after approval.

    ``display_width``/``display_height`` are the screen's pixels,
    ``environment`` what it is (``browser``, ``mobile``, ``desktop``, or a
    desktop of one system: ``mac``, ``windows``, ``linux``, ``ubuntu``).
    OpenAI's ``computer_use_preview`` takes a browser or a named system,
    Gemini a browser, a mobile device or a desktop; Anthropic's tool is a
    desktop's (a browser goes as the desktop it is shown on) and OpenAI's
    ``computer`` a browser's or a desktop's, neither naming it.  What goes
    as another screen (a named system as a desktop where the wire names
    none) is sent, reported adjusted; a screen the wire has none for leaves
    the tool out, reported.  ``version`` pins a wire version
    (``computer_20250124``, ``computer_use_preview``)."""

    display_width: int = 1024
    display_height: int = 768
    environment: str = "browser"
    display_number: int | None = None
    version: str | None = None
    excluded_actions: tuple[str, ...] = ()
    """Predefined actions the model is not offered (Gemini's
    ``excludedPredefinedFunctions``: leave some out, or declare a function
    of the same name in ``tools`` that replaces it)."""


class ToolSearch(
    msgspec.Struct, frozen=True, tag_field="type", tag="tool_search", forbid_unknown_fields=True
):
    """Let the provider search the request's tools, so tools marked
    ``defer_loading`` (through :attr:`ToolSpec.native`) reach the model only
    when a search finds them (Anthropic's tool search tool, ``regex`` or
    ``bm25``; OpenAI Responses ``tool_search``, where ``mode`` has no
    meaning)."""

    mode: Literal["regex", "bm25"] = "regex"
    version: str | None = None


class XSearch(
    msgspec.Struct, frozen=True, tag_field="type", tag="x_search", forbid_unknown_fields=True
):
    """Let the provider search posts, users and threads on X (xAI's
    ``x_search`` Agent Tool, on its Responses API).

    ``allowed_handles``/``excluded_handles`` limit whose posts count (one
    of the two, at most 10 handles), ``from_date``/``to_date`` the days
    (``YYYY-MM-DD``, inclusive), and the two switches let the search read
    the images and videos of posts."""

    allowed_handles: tuple[str, ...] = ()
    excluded_handles: tuple[str, ...] = ()
    from_date: str | None = None
    to_date: str | None = None
    image_understanding: bool = False
    video_understanding: bool = False

    def __post_init__(self) -> None:
        if self.allowed_handles and self.excluded_handles:
            raise DecodeError(
                "X search takes allowed_handles or excluded_handles, not both", "$.excluded_handles"
            )
        for name in ("allowed_handles", "excluded_handles"):
            if len(getattr(self, name)) > 10:
                raise DecodeError(f"X search {name} holds at most 10 handles", f"$.{name}")
        for name in ("from_date", "to_date"):
            value = getattr(self, name)
            if value is not None and not _is_iso_date(value):
                raise DecodeError(f"X search {name} {value!r} is no YYYY-MM-DD date", f"$.{name}")


def _is_iso_date(value: object) -> bool:
    if not isinstance(value, str) or len(value) != 10:
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


HostedTool = (
    WebSearch
    | WebFetch
    | CodeExecution
    | FileSearch
    | ImageGeneration
    | RemoteMCP
    | Memory
    | Shell
    | ApplyPatch
    | ComputerUse
    | ToolSearch
    | XSearch
)

ReasoningDisplay = Literal["hidden", "summary", "full"]


class ReasoningOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How much the model should reason: an effort level or a token budget."""

    effort: str | None = None
    budget_tokens: int | None = None


CacheTTL = Literal["5m", "1h", "24h"]
"""How long a cached prompt prefix should at least stay warm between requests."""


class PromptCache(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Ask the provider to cache the prompt prefix for the next requests.

    Each shape maps this to its own spelling (Anthropic's top-level
    ``cache_control``, Bedrock ``cachePoint`` blocks, OpenAI's
    ``prompt_cache_key`` / ``prompt_cache_retention``...).  Providers that
    cache automatically need nothing; what a provider cannot honour (a
    ``ttl`` it cannot keep, a ``key`` it has no field for) is reported in
    :attr:`~elelem.wire.EncodedRequest.dropped`, never silently lost.
    """

    ttl: CacheTTL | None = None
    """The least lifetime wanted; None takes the provider's default (about 5 minutes).
    A provider that keeps prefixes for less (Anthropic and Bedrock: at most 1h)
    gets its longest and reports the shortfall."""
    key: str | None = None
    """A routing key grouping requests that share a prefix (OpenAI ``prompt_cache_key``)."""

    def __post_init__(self) -> None:
        if self.key is not None and not self.key:
            raise DecodeError("prompt cache key must not be empty", "$.key")


class JsonSchemaOutput(
    msgspec.Struct, frozen=True, tag_field="type", tag="json_schema", forbid_unknown_fields=True
):
    """Ask for a reply that is JSON matching ``schema`` (a JSON Schema object).

    ``name`` and ``description`` label the schema where a wire has room for
    them (OpenAI, Bedrock); ``strict`` asks the provider to enforce the schema
    rather than take it as guidance.  What a wire cannot carry is reported in
    :attr:`~elelem.wire.EncodedRequest.dropped`.
    """

    schema: dict[str, JSONValue]
    name: str = "output"
    strict: bool = True
    description: str = ""

    def __post_init__(self) -> None:
        # msgspec checks the type when decoding; a caller building one in code
        # gets the same typed error instead of a bad body at send time.
        if not isinstance(self.schema, dict):
            raise DecodeError(
                f"structured output schema must be a JSON object, not {type(self.schema).__name__}",
                "$.schema",
            )
        require_json(self.schema, "$.schema", "structured output schema")
        if not self.name:
            raise DecodeError("structured output name must not be empty", "$.name")


class JsonObjectOutput(
    msgspec.Struct, frozen=True, tag_field="type", tag="json_object", forbid_unknown_fields=True
):
    """Ask for a reply that is any JSON object ("JSON mode"), with no schema."""


OutputFormat = JsonSchemaOutput | JsonObjectOutput
"""A structured reply format: :class:`JsonSchemaOutput` or :class:`JsonObjectOutput`."""


class ClearToolUses(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Server-side clearing of old tool results (Anthropic's
    ``clear_tool_uses_20250919``); each None leaves the server's default."""

    trigger_input_tokens: int | None = None
    """Clear once the prompt exceeds this many input tokens."""
    keep_tool_uses: int | None = None
    """How many of the latest tool uses to keep."""
    clear_at_least_input_tokens: int | None = None
    """Clear at least this many tokens each time (so a cache break pays)."""
    exclude_tools: tuple[str, ...] = ()
    """Tool names whose uses are never cleared."""
    clear_tool_inputs: bool | None = None
    """Also clear the tool calls' arguments, not only their results."""


class ClearThinking(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Server-side clearing of earlier turns' reasoning (Anthropic's
    ``clear_thinking_20251015``): keep the last ``keep_turns`` turns' thinking,
    every turn's (``keep_all``, best for the prompt cache), or the server's
    default (neither)."""

    keep_turns: int | None = None
    keep_all: bool = False

    def __post_init__(self) -> None:
        if self.keep_all and self.keep_turns is not None:
            raise ValueError("ClearThinking: keep_turns and keep_all exclude each other")


class ContextEditing(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Context editing the provider applies to the prompt before the model
    reads it; the conversation log keeps everything (the edits are the
    server's, recorded with its response)."""

    clear_tool_uses: ClearToolUses | None = None
    clear_thinking: ClearThinking | None = None


class GenerationOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Sampling and length options.

    ``extra`` is merged into the wire body last, for provider options elelem
    does not model: a new top-level field is added and a value elelem wrote
    is replaced (a caller's own ``text`` or ``generationConfig`` wins), but a
    list elelem built (``tools``, ``messages``, ``input``, ``include``) is
    *extended* by an ``extra`` list, never replaced; anything but a list there
    is an :class:`~elelem.errors.UnsupportedError` naming the field.
    """

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    reasoning: ReasoningOptions | None = None
    tool_choice: str | None = None
    extra: dict[str, JSONValue] = msgspec.field(default_factory=dict)
    # Last, with a default, so options stored before it existed still decode.
    cache: PromptCache | None = None
    """Prompt caching, in neutral terms; see :class:`PromptCache`."""
    # Last, with a default, so options stored before it existed still decode.
    output: OutputFormat | None = None
    """Structured output (JSON, optionally to a schema); None is free text."""
    # Last, with a default, so options stored before it existed still decode.
    seed: int | None = None
    """A sampling seed, for providers that take one (Chat Completions, Gemini,
    Ollama); the others report it dropped."""
    # Last, with a default, so options stored before it existed still decode.
    context_editing: ContextEditing | None = None
    """Server-side context editing (Anthropic); the others report it dropped."""

    def __post_init__(self) -> None:
        if self.extra:
            require_json(self.extra, "$.extra", "generation option extra")


__all__ = [
    "ApplyPatch",
    "ApprovalPolicy",
    "CacheTTL",
    "ClearThinking",
    "ClearToolUses",
    "CodeExecution",
    "ComputerUse",
    "ContextEditing",
    "FileSearch",
    "GenerationOptions",
    "HostedTool",
    "ImageGeneration",
    "JsonObjectOutput",
    "JsonSchemaOutput",
    "Memory",
    "OutputFormat",
    "PromptCache",
    "ReasoningDisplay",
    "ReasoningOptions",
    "RemoteMCP",
    "Shell",
    "ToolSearch",
    "ToolSpec",
    "UserLocation",
    "WebFetch",
    "WebSearch",
]
