// A stock useChat page with no framework: ai 7's own AbstractChat (what
// @ai-sdk/react's useChat wraps) with its DefaultChatTransport, and
// lastAssistantMessageIsCompleteWithApprovalResponses to send the approvals
// back, over a tiny state that draws every part into #usechat.  Bundled by
// esbuild for tests/test_web_usechat_browser.py, which injects it into a page
// of `elelem serve` (same origin) and calls window.elelemUseChat(api).
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
} from "ai7";

class PageState {
  constructor(draw) {
    this.draw = draw;
    this._status = "ready";
    this._error = undefined;
    this.messages = [];
  }
  get status() { return this._status; }
  set status(value) { this._status = value; this.draw(); }
  get error() { return this._error; }
  set error(value) { this._error = value; this.draw(); }
  pushMessage(message) { this.messages = [...this.messages, message]; this.draw(); }
  popMessage() { this.messages = this.messages.slice(0, -1); this.draw(); }
  replaceMessage(index, message) {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
    this.draw();
  }
  snapshot(thing) { return structuredClone(thing); }
}

class PageChat extends AbstractChat {
  constructor(options, state) { super({ ...options, state }); }
}

window.elelemUseChat = (api) => {
  const root = document.createElement("section");
  root.id = "usechat";
  document.body.prepend(root);
  let chat = null;
  const draw = () => {
    if (chat === null) return;
    root.replaceChildren();
    root.dataset.status = chat.status;
    if (chat.error) root.dataset.error = chat.error.message;
    for (const message of chat.messages) {
      for (const part of message.parts) {
        const item = document.createElement("div");
        item.className = "part";
        item.dataset.role = message.role;
        item.dataset.type = part.type;
        if (part.state) item.dataset.state = part.state;
        if (part.type === "text") item.textContent = part.text;
        if (part.toolCallId) item.textContent = JSON.stringify(part.output ?? part.input);
        if (part.state === "approval-requested") {
          const approve = document.createElement("button");
          approve.className = "approve";
          approve.textContent = "Approve";
          approve.addEventListener("click", () =>
            chat.addToolApprovalResponse({ id: part.approval.id, approved: true }),
          );
          item.append(approve);
        }
        root.append(item);
      }
    }
  };
  const state = new PageState(draw);
  chat = new PageChat(
    {
      transport: new DefaultChatTransport({ api }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onError: (error) => { root.dataset.error = String(error && error.message); },
    },
    state,
  );
  window.elelemChat = chat;
  draw();
  return true;
};
