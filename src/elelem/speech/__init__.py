"""Speech: text to speech and speech to text over OpenAI's audio endpoints.

- :mod:`elelem.speech.endpoints`: ``POST /audio/speech`` and ``POST
  /audio/transcriptions`` whole, each exchange a sequence of one-shot calls;
  an audio file read bounded;
- :mod:`elelem.speech.streamed_speech`: streamed ``audio/speech``, its
  sans-IO parser (raw and SSE forms), the request as a shape for the one
  driver, the async and blocking readers of audio bytes;
- :mod:`elelem.speech.streamed_transcription`: streamed
  ``audio/transcriptions``, its sans-IO parser, the request as a shape, the
  async and blocking readers of text.

The clients' ``speak``, ``speak_stream``, ``transcribe`` and
``transcribe_stream`` are the way in (:mod:`elelem.client`).
"""
