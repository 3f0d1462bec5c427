"""Tools made from Python functions.

:func:`tool` (a decorator, or a plain call) turns a sync or async function into
a :class:`FunctionTool`: its name is the function's, its description the
docstring, its JSON Schema built by msgspec from the type hints (Structs,
dataclasses, TypedDict, Literal, Optional, ``Annotated[..., msgspec.Meta(description=...)]``).
The model's arguments are validated and decoded into those types before the
function runs; arguments that do not validate become an error result the model
sees (:class:`ToolOutcome` with ``is_error``), never an exception in the caller.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, overload

import msgspec

from elelem.tools.base import ToolOutcome, render_result
from elelem.vocabulary import JSONValue, ToolSpec
from elelem.vocabulary.json import decode_json

DEFAULT_TIMEOUT = 60.0
"""Seconds a tool call may run before the loop answers the model with a timeout error."""


class FunctionTool:
    """A client tool backed by a Python function (see :func:`tool`).

    ``spec`` is what the model is shown; :meth:`decode` validates the model's
    JSON arguments into the function's parameter types; :meth:`call` decodes
    and runs it.  ``idempotent`` tells the tool loop the call may safely run
    again after a crash (otherwise an interrupted call is answered with an
    "interrupted" error); ``timeout`` bounds one call in seconds (None: no bound).
    """

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        idempotent: bool = False,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> None:
        if not callable(function):
            raise TypeError(f"a tool needs a callable, not {type(function).__name__}")
        self.function = function
        self.name = name or getattr(function, "__name__", "")
        if not self.name or self.name == "<lambda>":
            raise TypeError("a tool made from a lambda or a nameless callable needs name=")
        self.arguments_type = arguments_struct(function, self.name)
        self.spec = ToolSpec(
            name=self.name,
            description=description if description is not None else _docstring(function),
            parameters=parameters_schema(self.arguments_type),
        )
        self.idempotent = idempotent
        self.timeout = timeout
        self.is_async = inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
            getattr(function, "__call__", None)  # noqa: B004 - an async __call__ counts
        )

    def decode(self, arguments: str) -> dict[str, Any]:
        """The keyword arguments of a call, decoded and validated from the
        model's JSON; raises :class:`msgspec.ValidationError` or
        :class:`msgspec.DecodeError` naming the bad field."""
        text = arguments if arguments.strip() else "{}"
        value = decode_json(text, type=self.arguments_type)
        return {f: getattr(value, f) for f in self.arguments_type.__struct_fields__}

    async def call(self, arguments: str) -> ToolOutcome:
        """Validate ``arguments`` and run the function (a sync one in a worker
        thread); invalid arguments are an error outcome naming the field."""
        try:
            kwargs = self.decode(arguments)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return ToolOutcome(f"invalid arguments for {self.name}: {exc}", is_error=True)
        if self.is_async:
            value = await self.function(**kwargs)
        else:
            import anyio.to_thread

            # Abandoned on cancellation, so a timeout answers the model at once
            # (the thread runs to its end on its own; Python cannot stop it).
            value = await anyio.to_thread.run_sync(
                lambda: self.function(**kwargs), abandon_on_cancel=True
            )
        return render_result(value)

    def __repr__(self) -> str:
        return f"FunctionTool({self.name!r})"


@overload
def tool(function: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    idempotent: bool = False,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    idempotent: bool = False,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a :class:`FunctionTool`: ``@tool``, ``@tool(idempotent=True)`` or
    ``tool(get_weather)``.  The result is still callable as the function."""

    def make(fn: Callable[..., Any]) -> FunctionTool:
        return _CallableTool(
            fn, name=name, description=description, idempotent=idempotent, timeout=timeout
        )

    return make(function) if function is not None else make


class _CallableTool(FunctionTool):
    # A decorated function stays usable as itself.
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)


def as_tool(value: Any) -> Any:
    """``value`` if it is already a tool (anything with ``spec`` and ``call``),
    else a :class:`FunctionTool` made from the function."""
    if hasattr(value, "spec") and hasattr(value, "call"):
        return value
    return FunctionTool(value)


def _docstring(function: Callable[..., Any]) -> str:
    return inspect.getdoc(function) or ""


def arguments_struct(function: Callable[..., Any], name: str) -> type[msgspec.Struct]:
    """A msgspec Struct type with one field per parameter of ``function``
    (defaults kept, unknown fields refused), to validate a call's arguments."""
    hints = _parameter_hints(function, name)
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for param in inspect.signature(function).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {name!r}: *{param.name} parameters cannot be described")
        if param.kind is param.POSITIONAL_ONLY:
            raise TypeError(f"tool {name!r}: positional-only parameter {param.name!r}")
        hint = hints.get(param.name, Any)
        if param.default is param.empty:
            fields.append((param.name, hint))
        else:
            fields.append((param.name, hint, param.default))
    try:
        return msgspec.defstruct(name, fields, kw_only=True, forbid_unknown_fields=True)
    except TypeError as exc:
        raise TypeError(f"tool {name!r}: {exc}") from exc


def _parameter_hints(function: Callable[..., Any], name: str) -> dict[str, Any]:
    # The parameters' hints only: the return annotation describes nothing the
    # model sends, and need not even resolve.
    raw = dict(inspect.get_annotations(function))
    raw.pop("return", None)
    scope = getattr(inspect.unwrap(function), "__globals__", {})
    hints: dict[str, Any] = {}
    for key, hint in raw.items():
        if isinstance(hint, str):
            try:
                hint = eval(hint, scope)  # what inspect.get_annotations(eval_str=True) does
            except (NameError, SyntaxError, TypeError) as exc:
                raise TypeError(
                    f"tool {name!r}: cannot resolve the hint of {key!r}: {exc}"
                ) from exc
        hints[key] = hint
    return hints


def parameters_schema(arguments: type[msgspec.Struct]) -> JSONValue:
    """The JSON Schema object of a call's arguments: msgspec's schema with the
    top-level object and every non-recursive ``$ref`` inlined, so the schema is
    self-contained on wires that do not resolve references."""
    try:
        document = msgspec.json.schema(arguments)
    except TypeError as exc:
        raise TypeError(f"tool {arguments.__name__!r}: {exc}") from exc
    defs: dict[str, Any] = document.get("$defs", {})
    top = copy.deepcopy(defs[arguments.__name__])
    top.pop("title", None)
    recursive: set[str] = set()
    inlined = _inline(top, defs, (arguments.__name__,), recursive)
    if recursive:
        # A recursive type cannot be inlined: its definitions stay referenced.
        inlined["$defs"] = {k: v for k, v in defs.items() if k != arguments.__name__}
    result: JSONValue = inlined
    return result


def _inline(node: Any, defs: dict[str, Any], path: tuple[str, ...], recursive: set[str]) -> Any:
    if isinstance(node, list):
        return [_inline(v, defs, path, recursive) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and len(node) == 1:
        target = ref[len("#/$defs/") :]
        if target in path:
            recursive.add(target)
            return node
        return _inline(copy.deepcopy(defs[target]), defs, (*path, target), recursive)
    return {k: _inline(v, defs, path, recursive) for k, v in node.items()}


ToolFunction = Callable[..., Any] | Callable[..., Awaitable[Any]]


class ExternalTool:
    """A tool whose calls the caller runs elsewhere (a browser, a queue
    worker, a person): the model sees ``spec``; a call of it ends the run in
    state ``awaiting-results``, and :func:`elelem.resume` continues it with
    the results (see ``docs/tools.md``, "Deferred approvals").  ``of(fn)``
    takes the name, description and schema of a typed Python function
    without running it."""

    idempotent = False
    timeout: float | None = None
    external = True

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.spec.name

    @classmethod
    def of(cls, function: object) -> ExternalTool:
        """The external tool shaped like ``function`` (its hints and docstring)."""
        return cls(as_tool(function).spec)

    async def call(self, arguments: str) -> ToolOutcome:
        """Never run in-process: the loop defers its calls."""
        raise RuntimeError(f"{self.name} is an external tool: its results come through resume")

    def __repr__(self) -> str:
        return f"ExternalTool({self.name!r})"


__all__ = [
    "DEFAULT_TIMEOUT",
    "ExternalTool",
    "FunctionTool",
    "ToolFunction",
    "arguments_struct",
    "as_tool",
    "parameters_schema",
    "tool",
]
