"""Recorded provider traffic: reading it, and playing it back (docs/architecture.md §2.7, §7).

- :mod:`elelem.recordings.containers` — the containers other projects
  publish recordings in (VCR cassettes, JSON wrappers, HAR files, raw
  AWS event-stream bodies), recognised by their bytes, and one budget of
  decoded bytes for all the bodies of a recording;
- :mod:`elelem.recordings.traces` — Go's ``httprr`` traces and the Azure
  SDK test-proxy's recordings;
- :mod:`elelem.recordings.cassettes` — a recording as interactions
  (request, response, framing), whatever its container;
- :mod:`elelem.recordings.loopback` — a loopback HTTP server that plays
  scripted replies;
- :mod:`elelem.recordings.replaying` — a recorded response through the real
  driver, parser and assembler.

``elelem demo`` and ``elelem inspect`` stand on this package; the test kit
(:mod:`elelem.testing`) builds on it, never the reverse.
"""
