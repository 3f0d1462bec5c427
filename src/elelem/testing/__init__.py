"""elelem.testing (see docs/architecture.md §1): in-process models for testing an agent
(:class:`TestModel`, :class:`FunctionModel`), loopback servers, cassettes."""

from elelem.testing.models import NO_TOOL_CALLS, FunctionModel, Reply, TestModel, reply_chunks

__all__ = ["NO_TOOL_CALLS", "FunctionModel", "Reply", "TestModel", "reply_chunks"]
