"""elelem.shapes: one package per wire shape, sans-IO, on one skeleton (DESIGN.md §1, §4).

Every shape is a value: its package's ``SHAPE`` is a
:class:`~elelem.shapes.base.ShapeSpec` (name, framing and four functions),
built from the same parts under the same names.  What every shape must do
the same way is decided once, outside the packages:

- :mod:`elelem.shapes.skeleton` — the parser skeleton every frame parser
  subclasses (frame counter, started/finished guards, fast-path fallback,
  unknown kept, EOF left to the driver, end marker without a reason
  finishes ``unknown``, one rule for a whole body that is not JSON);
- :mod:`elelem.shapes.classify` — the one error pipeline, driven by each
  shape's :class:`~elelem.shapes.classify.ErrorTable`;
- :mod:`elelem.shapes.common` — statuses, frame decoding, payload lookup.

The names, package by package (``—`` where the concept lives elsewhere, as
noted):

======================  ===============================  =========================================
concept                 module                           names
======================  ===============================  =========================================
the shape               ``__init__``                     ``SHAPE`` (a ``ShapeSpec``)
encoder                 ``encoder``                      ``encode_request(request, *, provider,
                                                         stream)``, ``assistant_wire(message,
                                                         provider)``
parser                  ``parser``                       the parser class (a ``ParserSkeleton``:
                                                         ``(provider, request=None)``),
                                                         ``parse_body(body, provider,
                                                         request=None)``
errors                  ``errors``                       ``ERRORS`` (an ``ErrorTable``),
                                                         ``classify_error(status, headers,
                                                         body)``, ``error_from_event(obj,
                                                         body=None)``
mapping                 ``mapping``                      finish reasons and usage (see below)
fast (hot typed frames) ``fast``                         the typed structs and their decoder
======================  ===============================  =========================================

Where a shape has not moved a concept into its own module yet:

======================  ==========  ==========  ==========  ==========  ==========  ==========
concept                 anthropic   responses   chat        gemini      bedrock     ollama
======================  ==========  ==========  ==========  ==========  ==========  ==========
``encoder``             encoder     encoder     encoder     encoder     encoder     encoder
parser                  parser      parser      parser      parser      parser      parser
``errors``              errors      errors      errors      errors      errors      errors
finish reasons, usage   mapping     _items      parser,     parser      parser      parser
                                                usage
``fast``                parser      parser      fast        fast        (none)      (none)
======================  ==========  ==========  ==========  ==========  ==========  ==========

Chat Completions keeps a class beside its spec values (``OpenAIChatShape``):
it carries the per-provider dialect configuration the catalog binds.
"""
