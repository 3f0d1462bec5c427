// elelem serve: chat through the AI SDK UI message stream.  The page's only
// script, served from our origin (the policy allows no inline script).  It
// writes untrusted text with textContent only, never as HTML, and follows
// http(s) links only.  When the answer is complete, the stored conversation is
// shown as the server renders it.
"use strict";

(function () {
  const form = document.getElementById("chat-form");
  if (!form) return;
  const token = new URLSearchParams(location.search).get("token") || "";
  const meta = (name) => {
    const el = document.querySelector(`meta[name="${name}"]`);
    return el ? el.getAttribute("content") : "";
  };
  const modelInput = document.getElementById("chat-model");
  const textInput = document.getElementById("chat-text");
  const live = document.getElementById("live");
  const status = document.getElementById("chat-status");
  modelInput.value = meta("elelem-model");
  let conversation = meta("elelem-conversation");

  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };

  function view(id) {
    return `/c/${encodeURIComponent(id)}?token=${encodeURIComponent(token)}`;
  }

  async function send(text) {
    live.replaceChildren();
    status.textContent = "sending…";
    const answer = el("div", "answer");
    live.append(el("div", "user", text), answer);
    const parts = new Map();
    const sources = el("ol", "footnotes");
    const response = await fetch(`/api/chat?token=${encodeURIComponent(token)}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        text,
        model: modelInput.value,
        conversation: conversation || null,
        web_search: document.getElementById("chat-web-search").checked,
      }),
    });
    if (!response.ok) {
      status.textContent = `refused: ${await response.text()}`;
      return;
    }
    conversation = response.headers.get("x-elelem-conversation") || conversation;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let failed = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        for (const line of event.split("\n")) {
          if (!line.startsWith("data: ")) continue;
          const data = line.slice(6);
          if (data === "[DONE]") continue;
          failed = show(JSON.parse(data), answer, parts, sources) || failed;
        }
      }
    }
    if (sources.childElementCount) answer.append(sources);
    if (failed) return;
    status.textContent = "done";
    location.href = view(conversation);
  }

  function show(chunk, answer, parts, sources) {
    switch (chunk.type) {
      case "text-start": {
        const node = el("div", "text", "");
        parts.set(chunk.id, node);
        answer.append(node);
        break;
      }
      case "reasoning-start": {
        const details = el("details", "reasoning");
        details.append(el("summary", "", "reasoning"));
        const node = el("div", "reasoning-text", "");
        details.append(node);
        parts.set(chunk.id, node);
        answer.append(details);
        break;
      }
      case "text-delta":
      case "reasoning-delta": {
        const node = parts.get(chunk.id);
        if (node) node.textContent += chunk.delta;
        break;
      }
      case "data-hosted-activity": {
        let node = parts.get(`hosted:${chunk.id}`);
        if (!node) {
          node = el("div", "activity");
          parts.set(`hosted:${chunk.id}`, node);
          answer.append(node);
        }
        node.textContent = chunk.data.status;
        node.dataset.state = chunk.data.state;
        break;
      }
      case "tool-input-available":
        answer.append(el("div", "tool-call", `tool call ${chunk.toolName}`));
        break;
      case "source-url": {
        const item = el("li");
        const url = new URL(chunk.url);
        if (url.protocol === "https:" || url.protocol === "http:") {
          const a = el("a", "source", chunk.title || url.hostname);
          a.href = url.href;
          a.rel = "noopener noreferrer nofollow";
          a.target = "_blank";
          item.append(a);
        } else {
          item.textContent = chunk.title || "";
        }
        sources.append(item);
        break;
      }
      case "source-document":
        sources.append(el("li", "", chunk.title));
        break;
      case "error":
        status.textContent = chunk.errorText;
        return true;
    }
    return false;
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = textInput.value;
    if (!text.trim()) return;
    send(text).catch((error) => {
      status.textContent = `error: ${error}`;
    });
  });
})();
