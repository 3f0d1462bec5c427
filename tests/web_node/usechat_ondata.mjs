// A stock useChat in Node: the `ai` package's own AbstractChat (what
// @ai-sdk/react's useChat wraps) with its DefaultChatTransport, sending one
// user message, then answering each approval it is asked for
// (addToolApprovalResponse, sent on by
// lastAssistantMessageIsCompleteWithApprovalResponses, as a page does).
// argv[2]: JSON {url, body, text, approved} (approved: the answer to every
// approval request); argv[3]: the package ("ai", ai 6; "ai7", ai 7 under
// Node 22).  Prints one JSON line: {messages, data, errors, finishes}:
// the messages the chat keeps, every part onData was given, in order.
const { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } =
  await import(process.argv[3] ?? "ai");

class State {
  constructor() {
    this.status = "ready";
    this.error = undefined;
    this.messages = [];
  }
  pushMessage(message) { this.messages = [...this.messages, message]; }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(index, message) {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  }
  snapshot(thing) { return structuredClone(thing); }
}

class NodeChat extends AbstractChat {
  constructor(options) { super({ ...options, state: new State() }); }
}

const { url, body, text, approved } = JSON.parse(process.argv[2]);
const data = [];
const errors = [];
let finishes = 0;
let finished = () => {};
const chat = new NodeChat({
  id: "chat-ondata",
  transport: new DefaultChatTransport({ api: url, body }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  onData: (part) => data.push(structuredClone(part)),
  onError: (e) => errors.push(String(e && e.message ? e.message : e)),
  onFinish: () => { finishes += 1; finished(); },
});
await chat.sendMessage({ text });
const asked = chat.messages.at(-1).parts.filter((p) => p.state === "approval-requested");
if (asked.length) {
  const resumed = new Promise((resolve) => { finished = resolve; });
  for (const part of asked) await chat.addToolApprovalResponse({ id: part.approval.id, approved });
  let timer;
  await Promise.race([resumed, new Promise((resolve) => { timer = setTimeout(resolve, 20000); })]);
  clearTimeout(timer); // else it holds the process open
}
process.stdout.write(JSON.stringify({ messages: chat.messages, data, errors, finishes }) + "\n");
