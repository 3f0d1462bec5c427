// Reads UI message streams with the `ai` package's own client path: the
// DefaultChatTransport useChat uses (POST, SSE parsing, chunk schema
// validation) feeding readUIMessageStream, and the final message checked by
// validateUIMessages.  argv[2] is a JSON list of {url, body, messages?}
// requests (messages: the history posted, by default one user message);
// argv[3] the package to read with ("ai", ai 6; "ai7", ai 7 under Node 22).
// Prints one JSON line per request: {message, chunks, errors, status,
// invalid} (invalid: what validateUIMessages said of [message], or null).
const { DefaultChatTransport, readUIMessageStream, validateUIMessages } = await import(
  process.argv[3] ?? "ai"
);

async function read({ url, body, messages }) {
  const errors = [];
  const chunks = [];
  let status = null;
  const transport = new DefaultChatTransport({
    api: url,
    body,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      status = {
        code: response.status,
        header: response.headers.get("x-vercel-ai-ui-message-stream"),
        contentType: response.headers.get("content-type"),
      };
      return response;
    },
  });
  let message = null;
  try {
    const stream = await transport.sendMessages({
      chatId: "chat-1",
      messages: messages ?? [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    const [forReader, forLog] = stream.tee();
    const logged = (async () => {
      for await (const chunk of forLog) chunks.push(chunk);
    })();
    // A history ending with the assistant's message (an approval answered)
    // is continued, as useChat does.
    const last = messages ? messages[messages.length - 1] : undefined;
    for await (const snapshot of readUIMessageStream({
      message: last && last.role === "assistant" ? structuredClone(last) : undefined,
      stream: forReader,
      onError: (e) => errors.push(String(e && e.message ? e.message : e)),
    })) {
      message = snapshot;
    }
    await logged;
  } catch (e) {
    errors.push("thrown: " + String(e && e.message ? e.message : e));
  }
  let invalid = null;
  if (message !== null) {
    try {
      await validateUIMessages({ messages: [message] });
    } catch (e) {
      invalid = String(e && e.message ? e.message : e);
    }
  }
  return { message, chunks, errors, status, invalid };
}

const requests = JSON.parse(process.argv[2]);
for (const request of requests) {
  process.stdout.write(JSON.stringify(await read(request)) + "\n");
}
