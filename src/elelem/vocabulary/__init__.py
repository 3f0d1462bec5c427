"""The provider-neutral vocabulary: pure data, importing nothing else of elelem
but its errors.

Content blocks, attributions, provider payloads, hosted activity, usage, and
the registries of open sets.
"""

from elelem.vocabulary.activity import (
    HOSTED_ACTIVITY_NAMES,
    PROVIDER_ACTIVITY_NAMES,
    TERMINAL_STATES,
    ActivityState,
    HostedActivity,
    neutral_activity_name,
)
from elelem.vocabulary.attribution import Attribution, Source
from elelem.vocabulary.blocks import (
    Block,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
)
from elelem.vocabulary.ids import (
    ActivityId,
    CallId,
    ConversationId,
    EventId,
    ProviderId,
    ResponseId,
)
from elelem.vocabulary.json import JSONValue, check_json
from elelem.vocabulary.message import Message, Part, Role
from elelem.vocabulary.payload import ProviderPayload
from elelem.vocabulary.registry import (
    FINISH_REASONS,
    MESSAGE_SOURCES,
    TURN_END_REASONS,
    TURN_TRIGGERS,
    OpenSet,
    block_tags,
    block_type,
    load_plugins,
    register_block_type,
    register_finish_reason,
    register_message_source,
    register_turn_end_reason,
    register_turn_trigger,
)
from elelem.vocabulary.request import (
    CacheTTL,
    CodeExecution,
    GenerationOptions,
    HostedTool,
    JsonObjectOutput,
    JsonSchemaOutput,
    OutputFormat,
    PromptCache,
    ReasoningDisplay,
    ReasoningOptions,
    ToolSpec,
    UserLocation,
    WebFetch,
    WebSearch,
)
from elelem.vocabulary.usage import Usage, hosted_counter_name, hosted_counts

__all__ = [
    "FINISH_REASONS",
    "HOSTED_ACTIVITY_NAMES",
    "MESSAGE_SOURCES",
    "PROVIDER_ACTIVITY_NAMES",
    "TERMINAL_STATES",
    "TURN_END_REASONS",
    "TURN_TRIGGERS",
    "ActivityId",
    "ActivityState",
    "Attribution",
    "Block",
    "CacheTTL",
    "CallId",
    "CodeExecution",
    "ConversationId",
    "EventId",
    "GenerationOptions",
    "HostedActivity",
    "HostedTool",
    "JSONValue",
    "JsonObjectOutput",
    "JsonSchemaOutput",
    "Message",
    "OpenSet",
    "OutputFormat",
    "Part",
    "PromptCache",
    "ProviderId",
    "ProviderPayload",
    "ReasoningBlock",
    "ReasoningDisplay",
    "ReasoningOptions",
    "ResponseId",
    "Role",
    "Source",
    "TextBlock",
    "ToolCallBlock",
    "ToolResultBlock",
    "ToolSpec",
    "UnknownBlock",
    "Usage",
    "UserLocation",
    "WebFetch",
    "WebSearch",
    "block_tags",
    "block_type",
    "check_json",
    "hosted_counter_name",
    "hosted_counts",
    "load_plugins",
    "neutral_activity_name",
    "register_block_type",
    "register_finish_reason",
    "register_message_source",
    "register_turn_end_reason",
    "register_turn_trigger",
]
