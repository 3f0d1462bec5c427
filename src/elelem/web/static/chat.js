// elelem serve: the chat, reading elelem's UI message stream (the AI SDK
// protocol).  One of the page's two scripts (after chat-parts.js), served
// from our origin (the policy allows no inline script).  Untrusted text is
// written with textContent only; the one HTML it inserts is the server's
// rendering of an answer's Markdown (/api/render, the viewer's own safe
// renderer), once a text block is complete.  Links are followed for http(s)
// URLs only.
//
// Enter sends, Shift+Enter breaks the line; Stop cancels the stream (the
// server keeps what arrived, as the CLI does); Retry and Edit resend a turn
// (the server rewinds the old one with an overlay); files come by the
// Attach button or dropped on the box.  When an answer is complete the
// stored conversation is shown as the server renders it (one renderer).
// Tool calls are folded as they stream, one status line each (the tool,
// its state, how long it ran, the images it returned, as thumbnails), and
// hosted activity (a search, code run by the provider) one fold per run
// of activities, as the server folds them (chat-parts.js draws them); a
// call waiting for approval gets its Approve and Deny under the answer; an
// error, a Stop and a stream cut short are written where they happened in
// the answer, not only beside Send.  What the stream shows is what the
// stored page shows after a reload.
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

  // The parts of an answer, drawn as the stored page draws them (chat-parts.js).
  const { el, safeLink, count, toolFold, setTool, toolDetail, argumentNodes, settle } =
    window.elelemParts;
  const { toolTime, responseLine, hostedActivity, toolMedia, approvalForm, otherPart } =
    window.elelemParts;

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
  // next message goes on in it.  A Stop of the page's own (`answer` given)
  // ended the stream before the log's line for the answer: the stored
  // turn's line is taken too, once the server has stored it.
  async function refreshFrame(id, answer) {
    let page = null;
    for (let tries = 0; tries < 20; tries += 1) {
      if (tries) await new Promise((wake) => setTimeout(wake, 250));
      const response = await fetch(view(id));
      if (!response.ok) return;
      page = new DOMParser().parseFromString(await response.text(), "text/html");
      if (!answer || storedLine(page)) break;
    }
    const line = answer ? storedLine(page) : null;
    if (line && !answer.querySelector(":scope > p.response")) {
      answer.append(document.importNode(line, true));
    }
    const sidebar = page.querySelector(".sidebar");
    const current = document.querySelector(".sidebar");
    if (sidebar && current) current.replaceWith(document.importNode(sidebar, true));
    const heading = page.querySelector("main h1");
    const shown = document.querySelector("main h1");
    if (heading && shown) shown.textContent = heading.textContent;
    document.title = page.title || document.title;
  }

  // The line under the last turn's answer on a stored page (its last
  // response's, the one a Stop ended), if it is stored yet.
  function storedLine(page) {
    const turns = page.querySelectorAll("section.turn");
    const last = turns.length ? turns[turns.length - 1] : null;
    const lines = last ? last.querySelectorAll(":scope > p.response") : [];
    return lines.length ? lines[lines.length - 1] : null;
  }

  // A chat turn or a resumed run: the body posted to `path`, the answer
  // streamed into the live region, then the stored conversation shown.
  // A run resumed from the live page (`going`: its answer and state) goes on
  // in the same answer, where its calls' folds are.
  async function post(path, body, shownText, going) {
    say("sending…");
    let answer;
    let state;
    if (going) {
      ({ answer, state } = going);
      state.failed = state.stopped = false;
      state.waiting = [];
    } else {
      live.replaceChildren();
      answer = el("div", "answer");
      if (shownText !== null) live.append(el("div", "user", shownText));
      live.append(answer);
      state = {
        parts: new Map(),
        tools: new Map(),
        sources: el("ol", "footnotes"),
        failed: false,
        stopped: false,
        run: null,
        hosted: null,
        waiting: [],
        step: 0,
        given: new Map(),
        provided: new Map(),
      };
    }
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
        // A new turn's line only: a resumed one's stored turn holds the
        // lines of the run before, which the live answer may not show.
        if (conversation) refreshFrame(conversation, shownText !== null ? answer : null);
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
    if (state.failed || state.stopped) {
      // The failed or stopped turn is stored: the heading and sidebar name it.
      if (conversation) refreshFrame(conversation);
      return;
    }
    if (state.waiting.length) {
      // The run waits for the page: Approve and Deny here, under the answer.
      const calls = state.waiting.length;
      answer.append(el("p", "notice awaiting", `awaiting approval of ${count(calls, "call")}`));
      const section = approvalForm(state.waiting);
      const going = { answer, state };
      wirePending(section.querySelector("form"), (body) => {
        section.remove();
        return post("/api/resume", body, null, going);
      });
      live.append(section);
      say("waiting for approval");
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
    "custom",
  ]);

  const KEEPS_HOSTED = new Set([
    "data-hosted-activity",
    "start",
    "start-step",
    "message-metadata",
    "data-retry",
    "data-response-line", // drawn in a call's fold, when the log has stored it
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
    // Any part but hosted activity, and a response's end, close the run of
    // activities one fold holds (as the stored page closes it).
    if (!KEEPS_HOSTED.has(chunk.type)) state.hosted = null;
    switch (chunk.type) {
      case "start-step":
        state.step += 1;
        break;
      case "text-start": {
        // Consecutive text blocks are one Markdown run (Anthropic splits an
        // answer in a block per citation), shown raw while it streams.
        if (!state.run) {
          state.run = { node: el("div", "text", ""), text: "" };
          answer.append(state.run.node);
        }
        state.run.open = true;
        parts.set(chunk.id, state.run);
        break;
      }
      case "text-end": {
        const run = parts.get(chunk.id);
        if (run) {
          run.open = false;
          render(run);
        }
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
      case "data-hosted-activity":
        state.given.set(chunk.data.id, chunk.data.input);
        hostedActivity(answer, state, chunk.data, conversation);
        break;
      case "tool-input-start":
        toolFold(answer, state, chunk.toolCallId, chunk.toolName);
        break;
      case "tool-input-available": {
        if (chunk.providerExecuted) {
          // A provider's request to run its hosted tool: already shown in
          // its activity fold; asked under the answer when its approval is.
          state.provided.set(chunk.toolCallId, { name: chunk.toolName, input: chunk.input });
          break;
        }
        const fold = toolFold(answer, state, chunk.toolCallId, chunk.toolName);
        fold.input = chunk.input;
        fold.detail.append(...argumentNodes(chunk.input));
        break;
      }
      case "tool-input-error": {
        const fold = toolFold(answer, state, chunk.toolCallId, chunk.toolName);
        const given = chunk.input === undefined || chunk.input === null ? "" : chunk.input;
        const text = typeof given === "string" ? given : JSON.stringify(given);
        fold.detail.append(...argumentNodes(text));
        toolDetail(fold, "error", chunk.errorText, "tool-error");
        setTool(fold, "failed");
        break;
      }
      case "tool-approval-request": {
        const id = chunk.toolCallId;
        const hosted = state.provided.get(id);
        if (hosted) {
          const given = state.given.get(id);
          const server = given && typeof given.server_label === "string" ? given.server_label : "";
          state.waiting.push({ id, name: hosted.name, input: hosted.input, server });
          break;
        }
        const fold = toolFold(answer, state, id);
        setTool(fold, "awaiting approval");
        state.waiting.push({ id, name: fold.name, input: fold.input });
        break;
      }
      case "tool-output-available": {
        const fold = toolFold(answer, state, chunk.toolCallId);
        toolDetail(fold, "result", chunk.output, "tool-output");
        setTool(fold, "done");
        break;
      }
      case "tool-output-error": {
        const fold = toolFold(answer, state, chunk.toolCallId);
        toolDetail(fold, "result", chunk.errorText, "tool-error");
        setTool(fold, "failed");
        break;
      }
      case "tool-output-denied": {
        const fold = toolFold(answer, state, chunk.toolCallId);
        // The result every refusal stores (elelem.turns.pending.REFUSED).
        toolDetail(fold, "result", "refused: the user did not approve this call", "tool-error");
        setTool(fold, "refused");
        break;
      }
      case "data-tool-media":
        toolMedia(toolFold(answer, state, chunk.data.toolCallId), chunk.data.media);
        break;
      // What the log recorded (elelem.web.dated): a call's times, and the
      // line of the step that made it, folded with its last call; the
      // line of any other response (the answer, one stopped or failed)
      // under the answer, where it ended, as the stored page writes it.
      case "data-tool-time":
        toolTime(toolFold(answer, state, chunk.data.toolCallId), chunk.data);
        break;
      case "data-response-line":
        if (chunk.data.toolCallId) {
          responseLine(toolFold(answer, state, chunk.data.toolCallId), chunk.data.notes);
        } else {
          state.run = null;
          state.hosted = null; // a response's end closes its run of activities
          answer.append(responseLine(null, chunk.data.notes));
        }
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
        state.stopped = true;
        settle(state, "stopped");
        // Why, when the server said (a deadline), as the stored record says it.
        inPlace(answer, "warn", chunk.reason && chunk.reason !== "aborted" ?
          `stopped: ${chunk.reason}` : "stopped: kept what arrived");
        say("stopped: kept what arrived");
        break;
      case "finish": {
        // ai 7: a stream cut before the provider's end is no error but the
        // interrupted finish (what arrived is kept), its line in the metadata.
        const meta = chunk.messageMetadata || {};
        if (chunk.finishReason === "interrupted" && !state.stopped) {
          state.stopped = true;
          settle(state, "stopped");
          // A text cut before its end: rendered, and said, as stored.
          const open = [...state.parts.values()].find((p) => p.node && p.open);
          if (open) {
            render(open);
            answer.append(el("p", "warn", "interrupted: the text above is what arrived"));
          }
          if (typeof meta.error === "string" && meta.error) {
            inPlace(answer, "error", `failed: ${meta.error}`);
            say("failed", true);
          } else {
            inPlace(answer, "warn", "interrupted: kept what arrived");
            say("interrupted: kept what arrived");
          }
        }
        break;
      }
      case "custom":
      case "data-block":
      case "file":
        answer.append(otherPart(chunk));
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

  // Approve and Deny of each call; Continue (or, for one call, its choice)
  // sends the answers, and `go` streams the resumed run.
  function wirePending(pendingForm, go) {
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
      go({ conversation, approvals, results });
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

  const storedPending = $("pending-form");
  if (storedPending) wirePending(storedPending, (body) => post("/api/resume", body, null));
})();
