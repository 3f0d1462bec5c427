// elelem serve: the chat, reading elelem's UI message stream (the AI SDK
// protocol).  The page's only script, served from our origin (the policy
// allows no inline script).  Untrusted text is written with textContent
// only; the one HTML it inserts is the server's rendering of an answer's
// Markdown (/api/render, the viewer's own safe renderer), once a text block
// is complete.  Links are followed for http(s) URLs only.
//
// Enter sends, Shift+Enter breaks the line; Stop cancels the stream (the
// server keeps what arrived, as the CLI does); Retry and Edit resend a turn
// (the server rewinds the old one with an overlay); files come by the
// Attach button or dropped on the box.  When an answer is complete the
// stored conversation is shown as the server renders it (one renderer).
// Tool calls are folded as they stream, one status line each (the tool,
// its state, how long it ran), as the server folds them; an error and a
// Stop are written where they happened in the answer, not only beside Send.
"use strict";

(function () {
  const form = document.getElementById("chat-form");
  if (!form) return;
  const token = new URLSearchParams(location.search).get("token") || "";
  const meta = (name) => {
    const node = document.querySelector(`meta[name="${name}"]`);
    return node ? node.getAttribute("content") : "";
  };
  const $ = (id) => document.getElementById(id);
  const modelInput = $("chat-model");
  const textInput = $("chat-text");
  const live = $("live");
  const status = $("chat-status");
  const sendButton = $("chat-send");
  const stopButton = $("chat-stop");
  const fileInput = $("chat-attach");
  const fileList = $("chat-files");
  modelInput.value = meta("elelem-model");
  let conversation = meta("elelem-conversation");
  let files = [];
  let editing = null;
  let running = null;

  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const safeLink = (url, text) => {
    let parsed = null;
    try {
      parsed = new URL(url);
    } catch (_) {
      return el("span", "", text);
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
      return el("span", "", text);
    }
    const a = el("a", "source", text);
    a.href = parsed.href;
    a.rel = "noopener noreferrer nofollow";
    a.target = "_blank";
    return a;
  };
  const say = (text, isError) => {
    status.textContent = text;
    status.classList.toggle("error", Boolean(isError));
  };
  const view = (id) => `/c/${encodeURIComponent(id)}?token=${encodeURIComponent(token)}`;

  // -- attachments ---------------------------------------------------------

  function showFiles() {
    fileList.replaceChildren();
    files.forEach((file, i) => {
      const item = el("li");
      if (file.data !== null && file.media_type.startsWith("image/")) {
        const img = el("img");
        img.src = `data:${file.media_type};base64,${file.data}`;
        img.alt = "";
        item.append(img);
      }
      item.append(el("span", "name", file.name));
      const remove = el("button", "remove", "×");
      remove.type = "button";
      remove.setAttribute("aria-label", `Remove ${file.name}`);
      remove.addEventListener("click", () => {
        files.splice(i, 1);
        showFiles();
      });
      item.append(remove);
      fileList.append(item);
    });
  }

  function addFiles(list) {
    for (const file of list) {
      // In the order chosen, whichever is read first.
      const entry = { name: file.name, media_type: file.type || "application/octet-stream" };
      entry.data = null;
      files.push(entry);
      const reader = new FileReader();
      reader.addEventListener("load", () => {
        const url = String(reader.result);
        entry.data = url.slice(url.indexOf(",") + 1);
        showFiles();
      });
      reader.addEventListener("error", () => {
        files.splice(files.indexOf(entry), 1);
        showFiles();
        say(`could not read ${file.name}`, true);
      });
      reader.readAsDataURL(file);
    }
  }

  fileInput.addEventListener("change", () => {
    addFiles(fileInput.files);
    fileInput.value = "";
  });
  form.addEventListener("dragover", (event) => {
    event.preventDefault();
    form.classList.add("dragging");
  });
  form.addEventListener("dragleave", () => form.classList.remove("dragging"));
  form.addEventListener("drop", (event) => {
    event.preventDefault();
    form.classList.remove("dragging");
    if (event.dataTransfer && event.dataTransfer.files.length) addFiles(event.dataTransfer.files);
  });

  // -- the stream ----------------------------------------------------------

  function setRunning(controller) {
    running = controller;
    stopButton.hidden = !controller;
    sendButton.hidden = Boolean(controller);
    for (const button of document.querySelectorAll(".turn-actions button, #pending-form button")) {
      button.disabled = Boolean(controller);
    }
  }

  function send(request, shownText) {
    return post(
      "/api/chat",
      {
        model: modelInput.value,
        conversation: conversation || null,
        web_search: $("chat-web-search").checked,
        ...request,
      },
      shownText,
    );
  }

  // After Stop the page stays (what arrived is on it), but the stored
  // conversation is what the heading and the sidebar now name: both are
  // taken from its page, parsed inert (DOMParser runs no script), and the
  // next message goes on in it.
  async function refreshFrame(id) {
    const response = await fetch(view(id));
    if (!response.ok) return;
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const sidebar = page.querySelector(".sidebar");
    const current = document.querySelector(".sidebar");
    if (sidebar && current) current.replaceWith(document.importNode(sidebar, true));
    const heading = page.querySelector("main h1");
    const shown = document.querySelector("main h1");
    if (heading && shown) shown.textContent = heading.textContent;
    document.title = page.title || document.title;
  }

  // A chat turn or a resumed run: the body posted to `path`, the answer
  // streamed into the live region, then the stored conversation shown.
  async function post(path, body, shownText) {
    live.replaceChildren();
    say("sending…");
    const answer = el("div", "answer");
    if (shownText !== null) live.append(el("div", "user", shownText));
    live.append(answer);
    const state = {
      parts: new Map(),
      tools: new Map(),
      sources: el("ol", "footnotes"),
      failed: false,
      run: null,
    };
    const controller = new AbortController();
    setRunning(controller);
    try {
      const response = await fetch(`${path}?token=${encodeURIComponent(token)}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      if (!response.ok) {
        // Refused before anything ran: the reason under the message it refuses.
        inPlace(answer, "error", await response.text());
        say("not sent", true);
        return;
      }
      conversation = response.headers.get("x-elelem-conversation") || conversation;
      history.replaceState(null, "", view(conversation));
      say("answering…");
      await read(response, answer, state);
    } catch (error) {
      if (error.name === "AbortError") {
        if (state.run) render(state.run);
        settle(state, "stopped");
        if (state.sources.childElementCount) answer.append(state.sources);
        inPlace(answer, "warn", "stopped: kept what arrived");
        say("stopped: kept what arrived");
        if (conversation) refreshFrame(conversation);
        return;
      }
      settle(state, "stopped");
      inPlace(answer, "error", `failed: ${error.message}`);
      say("failed", true);
      return;
    } finally {
      setRunning(null);
    }
    if (state.sources.childElementCount) answer.append(state.sources);
    if (state.failed) {
      // The failed turn is stored: the heading and sidebar name it.
      if (conversation) refreshFrame(conversation);
      return;
    }
    say("done");
    location.href = view(conversation);
  }

  // A notice written where it happened: after what arrived before it.
  function inPlace(answer, kind, text) {
    answer.append(el("p", `notice in-place ${kind}`, text));
  }

  // -- tool calls, folded ----------------------------------------------------

  const took = (ms) =>
    ms < 1000 ? `${Math.round(ms)} ms` : ms < 60000 ? `${(ms / 1000).toFixed(1)} s` :
      `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
  const TONES = { failed: "bad", stopped: "bad", refused: "wait", "awaiting approval": "wait" };

  // The page's own fold of a call (a resumed run answers a call stored
  // above): updated where it is.
  function storedFold(id) {
    for (const details of document.querySelectorAll("details.tool[data-call]")) {
      if (details.dataset.call !== id || details.closest("#live")) continue;
      const summary = details.querySelector("summary");
      const detail = details.querySelector(".tool-detail");
      return { details, summary, detail, name: details.dataset.tool, started: null, state: "" };
    }
    return null;
  }

  function toolFold(answer, state, id, name) {
    let fold = state.tools.get(id);
    if (!fold && (fold = storedFold(id))) state.tools.set(id, fold);
    if (!fold) {
      const details = el("details", "tool");
      details.dataset.call = id;
      const summary = el("summary");
      const detail = el("div", "tool-detail");
      details.append(summary, detail);
      answer.append(details);
      fold = { details, summary, detail, name: name || "tool", started: null, state: "" };
      state.tools.set(id, fold);
      setTool(fold, "running");
    }
    return fold;
  }

  function setTool(fold, words, ended) {
    fold.state = words;
    const parts = [`tool ${fold.name}`, words];
    if (ended && fold.started !== null) parts.push(took(performance.now() - fold.started));
    fold.summary.textContent = parts.join(" · ");
    fold.details.dataset.state = words.replace(/ /g, "-");
    fold.details.className = `tool ${TONES[words] || ""}`.trim();
  }

  function toolDetail(fold, label, value, className) {
    fold.detail.append(el("p", "tool-label", label));
    const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
    fold.detail.append(el("pre", className || "", text));
  }

  // A step's results come together: a call's own time is known only when
  // it was the one call running.
  const alone = (state) =>
    [...state.tools.values()].filter((f) => f.state === "running").length === 1;

  // Calls still running when the answer ends (stopped, failed) say so.
  function settle(state, words) {
    for (const fold of state.tools.values()) {
      if (fold.state === "running") setTool(fold, words, true);
    }
  }

  async function read(response, answer, state) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        for (const line of event.split("\n")) {
          if (!line.startsWith("data: ")) continue;
          const data = line.slice(6);
          if (data !== "[DONE]") show(JSON.parse(data), answer, state);
        }
      }
    }
  }

  // Parts shown between text blocks: the Markdown run ends before them.
  const BREAKS = new Set([
    "reasoning-start",
    "data-hosted-activity",
    "tool-input-start",
    "tool-input-available",
    "tool-output-available",
    "tool-output-error",
    "file",
    "data-block",
  ]);

  async function render(run) {
    const text = run.text;
    const response = await fetch(`/api/render?token=${encodeURIComponent(token)}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text }),
    });
    // Rendered only if no delta came meanwhile (the next text-end renders it).
    if (response.ok && run.text === text) {
      run.node.innerHTML = await response.text();
      run.node.classList.add("rendered");
    }
  }

  function show(chunk, answer, state) {
    const parts = state.parts;
    if (BREAKS.has(chunk.type)) state.run = null;
    switch (chunk.type) {
      case "text-start": {
        // Consecutive text blocks are one Markdown run (Anthropic splits an
        // answer in a block per citation), shown raw while it streams.
        if (!state.run) {
          state.run = { node: el("div", "text", ""), text: "" };
          answer.append(state.run.node);
        }
        parts.set(chunk.id, state.run);
        break;
      }
      case "text-end": {
        const run = parts.get(chunk.id);
        if (run) render(run);
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
      case "text-delta": {
        const run = parts.get(chunk.id);
        if (run) {
          run.text += chunk.delta;
          run.node.textContent = run.text;
        }
        break;
      }
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
        node.replaceChildren(el("span", "", chunk.data.status));
        node.dataset.state = chunk.data.state;
        // Google's search suggestions, which must be shown with the answer.
        for (const s of chunk.data.searchSuggestions || []) {
          const chip = el("div", "suggestion", "Google Search: ");
          chip.append(s.url ? safeLink(s.url, s.terms) : el("span", "", s.terms));
          node.append(chip);
        }
        break;
      }
      case "tool-input-start":
        toolFold(answer, state, chunk.toolCallId, chunk.toolName);
        break;
      case "tool-input-available": {
        const fold = toolFold(answer, state, chunk.toolCallId, chunk.toolName);
        toolDetail(fold, "arguments", chunk.input);
        fold.started = performance.now();
        break;
      }
      case "tool-input-error": {
        const fold = toolFold(answer, state, chunk.toolCallId, chunk.toolName);
        toolDetail(fold, "arguments", chunk.input === undefined ? "" : chunk.input);
        toolDetail(fold, "error", chunk.errorText, "tool-error");
        setTool(fold, "failed");
        break;
      }
      case "tool-approval-request":
        setTool(toolFold(answer, state, chunk.toolCallId), "awaiting approval");
        break;
      case "tool-output-available": {
        const fold = toolFold(answer, state, chunk.toolCallId);
        toolDetail(fold, "result", chunk.output, "tool-output");
        setTool(fold, "done", alone(state));
        break;
      }
      case "tool-output-error": {
        const fold = toolFold(answer, state, chunk.toolCallId);
        toolDetail(fold, "result", chunk.errorText, "tool-error");
        setTool(fold, "failed", alone(state));
        break;
      }
      case "tool-output-denied":
        setTool(toolFold(answer, state, chunk.toolCallId), "refused", true);
        break;
      case "source-url": {
        const item = el("li");
        item.append(safeLink(chunk.url, chunk.title || chunk.url));
        state.sources.append(item);
        break;
      }
      case "source-document":
        state.sources.append(el("li", "", chunk.title));
        break;
      case "abort":
        // The run was stopped on the server's side: said where it stopped.
        state.run = null;
        settle(state, "stopped");
        inPlace(answer, "warn", "stopped: kept what arrived");
        break;
      case "error":
        // Where it happened: after what arrived, before what did not.
        state.failed = true;
        state.run = null;
        settle(state, "stopped");
        inPlace(answer, "error", `failed: ${chunk.errorText}`);
        say("failed", true);
        break;
    }
  }

  // -- sending -------------------------------------------------------------

  function submit() {
    if (running) return;
    const text = textInput.value;
    if (!text.trim() && !files.length) return;
    if (files.some((f) => f.data === null)) {
      say("reading the attachments…");
      return;
    }
    const request = { text, files };
    if (editing !== null) request.edit_turn = editing;
    const shown = files.length ? `${text}\n[${files.map((f) => f.name).join(", ")}]` : text;
    textInput.value = "";
    files = [];
    editing = null;
    showFiles();
    send(request, shown);
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });
  textInput.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    } else if (event.key === "Escape" && editing !== null) {
      editing = null;
      textInput.value = "";
      say("");
    }
  });
  stopButton.addEventListener("click", () => {
    if (running) running.abort();
  });

  for (const button of document.querySelectorAll(".turn-actions button")) {
    const turn = Number(button.dataset.turn);
    const asked = document.querySelector(`#turn-${turn} .user`);
    const text = asked ? asked.textContent : "";
    button.addEventListener("click", () => {
      if (running) return;
      if (button.classList.contains("retry")) {
        send({ retry: true }, text);
      } else {
        editing = turn;
        textInput.value = text;
        textInput.focus();
        say(`editing turn ${turn}: Enter sends it in place of the old one, Esc cancels`);
      }
    });
  }

  // -- a stopped run's pending calls -----------------------------------------

  const pendingForm = $("pending-form");
  if (pendingForm) {
    const decided = new Map();
    const resumeRun = () => {
      if (running) return;
      const approvals = {};
      for (const group of pendingForm.querySelectorAll(".choice")) {
        const id = group.querySelector("button").dataset.call;
        if (!decided.has(id)) {
          say("approve or deny every call first", true);
          group.querySelector("button").focus();
          return;
        }
        approvals[id] = decided.get(id);
      }
      const results = {};
      for (const box of pendingForm.querySelectorAll("textarea.result")) {
        results[box.dataset.call] = box.value;
      }
      post("/api/resume", { conversation, approvals, results }, null);
    };
    for (const button of pendingForm.querySelectorAll(".choice button")) {
      button.addEventListener("click", () => {
        const yes = button.classList.contains("approve");
        decided.set(button.dataset.call, yes);
        for (const other of button.parentElement.querySelectorAll("button")) {
          other.setAttribute("aria-pressed", String(other === button));
        }
        if (pendingForm.dataset.direct === "yes") resumeRun();
      });
    }
    pendingForm.addEventListener("submit", (event) => {
      event.preventDefault();
      resumeRun();
    });
  }
})();
