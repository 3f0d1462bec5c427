"""elelem.shapes: one package per wire shape, sans-IO, on one skeleton (docs/architecture.md §1, §2).

Every shape is a value: its package's ``SHAPE`` is a
:class:`~elelem.shapes.base.ShapeSpec` (name, framing and four functions;
Chat Completions' per-provider dialects as a table on it), built from the
same parts under the same names.  No shape has a class beside its spec.
What every shape must do the same way is decided once, outside the packages:

- :mod:`elelem.shapes.skeleton` — the parser skeleton every frame parser
  subclasses (frame counter, started/finished guards, fast-path fallback,
  unknown kept, EOF left to the driver, end marker without a reason
  finishes ``unknown``, one rule for a whole body that is not JSON);
- :mod:`elelem.shapes.classify` — the one error pipeline, driven by each
  shape's :class:`~elelem.shapes.classify.ErrorTable`;
- :mod:`elelem.shapes.options` — generation options and ``tool_choice``
  spelled from each encoder's key tables;
- :mod:`elelem.shapes.block_tables` — a message's parts spelled from each
  encoder's block tables (block class -> row; the registered mapping, or a
  drop record, for any other);
- :mod:`elelem.shapes.common` — statuses, frame decoding, payload lookup;
- :mod:`elelem.shapes.counting` — a counting endpoint beside the sending one;
- :mod:`elelem.shapes.listing` — OpenAI's model list, reported limits;
- :mod:`elelem.shapes.embeddings` — reading vectors, the OpenAI-style body;
- :mod:`elelem.shapes.batch` — reading batch answers, ids in paths, the
  results URL kept to the endpoint's origin;
- :mod:`elelem.shapes.multipart` — the ``multipart/form-data`` body of an upload.

Every package — ``anthropic_messages``, ``openai_responses``,
``openai_chat``, ``gemini``, ``bedrock_converse``, ``ollama_native`` — has
the same modules with the same names:

======================  ===========  =================================================
concept                 module       names
======================  ===========  =================================================
the shape               ``__init__`` ``SHAPE`` (a ``ShapeSpec``)
encoder                 ``encoder``  ``encode_request(request, *, provider, stream)``,
                                     ``assistant_wire(message, provider)``,
                                     ``ACCEPTS`` (what a portable message keeps),
                                     ``BLOCK_TABLES`` (place -> its block table),
                                     ``OPTION_KEYS`` and ``TOOL_CHOICE`` (Chat
                                     Completions: ``option_keys(dialect)``)
parser                  ``parser``   the parser class (a ``ParserSkeleton``:
                                     ``(provider, request=None)``),
                                     ``parse_body(body, provider, request=None)``
errors                  ``errors``   ``ERRORS`` (an ``ErrorTable``),
                                     ``classify_error(status, headers, body)``,
                                     ``error_from_event(obj, body=None)``
finish reasons, usage   ``mapping``  ``FINISH_REASONS`` (wire value -> neutral finish
                                     reason), ``finish_reason(raw, ...)`` (the table
                                     and the shape's rule: a tool call, a refusal),
                                     ``map_usage(raw, ...)`` -> ``Usage``
hot typed frames        ``fast``     ``Hot...`` structs and ``hot_decoder(...)``, the
                                     typed decoder the parser's ``fast`` hook uses
                                     (a frame it cannot decode goes to the dict path)
images and documents    ``media``    ``LIMITS`` (the provider's documented size
                                     limits), ``encode_media(block, …)`` (the wire's
                                     spelling of an image or a document, or None
                                     with the drop reported), and the wire's own
                                     citations into documents where it has them
======================  ===========  =================================================

The other kinds of exchange are modules of the kind's name, in every package
whose wire has the kind, each holding the same names; the kind's contract is
in the seam (:mod:`elelem.wire`) and the ``ShapeSpec`` carries the value:

======================  ============  ================================================
kind                    module        names
======================  ============  ================================================
token counting          ``counting``  ``COUNTER`` (a ``TokenCounter``: the counting
                                      request rewritten from the sending one, the
                                      count read from the answer); ``SHAPE.counting``
                                      (Anthropic, Responses, Gemini)
model listing           ``listing``   ``LISTING`` (a ``ModelListing``: path, query,
                                      headers, the page reader); ``SHAPE.listing``
                                      (all but Bedrock's and Interactions')
speech                  ``speech``    ``SPEECH`` (a ``SpeechWire``: the request, the
                                      parser of its streamed answers);
                                      ``SHAPE.speech`` (Responses, Chat Completions)
transcription           ``transcr…``  ``TRANSCRIPTION`` (a ``TranscriptionWire``);
                                      ``SHAPE.transcription`` (the same two)
embeddings              ``embeddi…``  ``EMBEDDINGS`` (an ``EmbeddingWires``: the
                                      wires by name, the one chosen for a model);
                                      ``SHAPE.embeddings`` (all but Anthropic's
                                      and Interactions')
batches                 ``batch``     ``BATCH`` (a ``BatchWire``: the submit,
                                      status and results flows); ``SHAPE.batch``
                                      (Anthropic, Responses, Chat Completions,
                                      Gemini)
======================  ============  ================================================

What the wires share about images and documents (limit checks, data URLs,
the documents of a request as providers number them, drop reports) is in
:mod:`elelem.shapes.media`; nothing of one wire is.

A package may hold more modules for what only its wire has: Chat
Completions' ``dialects``, ``citations`` and ``merging``; Gemini's
``grounding`` and ``partial_args``; Responses' ``_items`` (what each output
item becomes).

``gemini_interactions`` is the seventh shape (Gemini's Interactions API,
the catalog's ``google-interactions``), with the same modules and names.
What history a provider keeps and a request continues
(``previous_response_id``, ``conversation``, ``previous_interaction_id``)
is :mod:`elelem.shapes.provider_state`.
"""
