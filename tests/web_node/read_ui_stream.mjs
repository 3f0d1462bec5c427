// Reads UI message streams with the `ai` package's own client path: the
// DefaultChatTransport useChat uses (POST, SSE parsing, chunk schema
// validation) feeding readUIMessageStream.  argv[2] is a JSON list of
// {url, body} requests; prints one JSON line per request:
// {message, chunks, errors, status}.
import { DefaultChatTransport, readUIMessageStream } from "ai";

async function read({ url, body }) {
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
      messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    const [forReader, forLog] = stream.tee();
    const logged = (async () => {
      for await (const chunk of forLog) chunks.push(chunk);
    })();
    for await (const snapshot of readUIMessageStream({
      stream: forReader,
      onError: (e) => errors.push(String(e && e.message ? e.message : e)),
    })) {
      message = snapshot;
    }
    await logged;
  } catch (e) {
    errors.push("thrown: " + String(e && e.message ? e.message : e));
  }
  return { message, chunks, errors, status };
}

const requests = JSON.parse(process.argv[2]);
for (const request of requests) {
  process.stdout.write(JSON.stringify(await read(request)) + "\n");
}
