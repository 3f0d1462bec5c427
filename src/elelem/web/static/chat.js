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
// its state, how long it ran, the images it returned, as thumbnails), and
// hosted activity (a search, code run by the provider) one fold per run
// of activities, as the server folds them; a call waiting for approval gets
// its Approve and Deny where it streamed; an error, a Stop and a stream cut
// short are written where they happened in the answer, not only beside Send.
// What the stream shows is what the stored page shows after a reload.
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
      };
    }
    const controller = new AbortController();
    setRunning(controller);
    try {
      state.answer = answer;
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
    if (state.failed || state.stopped) {
      // The failed or stopped turn is stored: the heading and sidebar name it.
      if (conversation) refreshFrame(conversation);
      return;
    }
    if (state.waiting.length) {
      // The run waits for the page: Approve and Deny here, under the answer.
      const calls = state.waiting.length;
      answer.append(el("p", "notice awaiting", `awaiting approval of ${count(calls, "call")}`));
      live.append(approvalForm(state));
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
      const fold = { details, summary, detail, name: details.dataset.tool, started: null };
      return Object.assign(fold, { state: "", took: null, input: {}, step: -1 });
    }
    return null;
  }

  function toolFold(answer, state, id, name) {
    let fold = state.tools.get(id);
    if (!fold && (fold = storedFold(id))) state.tools.set(id, fold);
    if (!fold) {
      const details = el("details", "tool");
      details.dataset.call = id;
      details.dataset.tool = name || "tool";
      const summary = el("summary");
      const detail = el("div", "tool-detail");
      details.append(summary, detail);
      answer.append(details);
      fold = { details, summary, detail, name: name || "tool", started: null, state: "" };
      fold.took = null;
      fold.input = {};
      fold.step = state.step;
      state.tools.set(id, fold);
      setTool(fold, "running");
    }
    return fold;
  }

  const count = (n, what) => (n === 1 ? `1 ${what}` : `${n} ${what}s`);

  function setTool(fold, words, ended) {
    fold.state = words;
    if (ended && fold.started !== null) fold.took = took(performance.now() - fold.started);
    const parts = [`tool ${fold.name}`, words];
    if (fold.took !== null) parts.push(fold.took);
    // What the result attached, counted as the stored fold counts it.
    const media = fold.media || [];
    const images = media.filter((m) => m.kind === "image").length;
    if (images) parts.push(count(images, "image"));
    if (media.length > images) parts.push(count(media.length - images, "document"));
    fold.summary.textContent = parts.join(" · ");
    fold.details.dataset.state = words.replace(/ /g, "-");
    fold.details.className = `tool ${TONES[words] || ""}`.trim();
  }

  // A call's arguments as the stored page writes them: each named value
  // (its JSON), or the text as it came when it is not a JSON object.
  function argumentNodes(input) {
    const isObject = input !== null && typeof input === "object" && !Array.isArray(input);
    if (!isObject) {
      const given = typeof input === "string" ? input : JSON.stringify(input);
      return [el("p", "tool-label", "arguments"), el("pre", "", given)];
    }
    const names = Object.keys(input);
    if (!names.length) return [el("p", "tool-label", "no arguments")];
    return [el("p", "tool-label", "arguments"), namedValues(input)];
  }

  function namedValues(input) {
    const list = el("dl", "arguments");
    for (const [name, value] of Object.entries(input)) {
      const dd = el("dd");
      dd.append(el("pre", "", JSON.stringify(value)));
      list.append(el("dt", "", name), dd);
    }
    return list;
  }

  function toolDetail(fold, label, value, className) {
    fold.detail.append(el("p", "tool-label", label));
    const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
    fold.detail.append(el("pre", className || "", text));
  }

  // A step's results are stored together: a call's own time is known only
  // when it was its step's one call (a call of the page's own is alone).
  const alone = (state, fold) =>
    fold.step < 0 || [...state.tools.values()].filter((f) => f.step === fold.step).length === 1;

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
    "custom",
  ]);

  // -- hosted activity, folded ----------------------------------------------

  // A run of hosted activities (nothing else between them) is one fold, as
  // the stored page folds it: the last status on its line, each transition
  // in its timeline, what each activity was given inside.
  function hostedActivity(answer, state, data) {
    let fold = state.hosted;
    if (!fold) {
      const details = el("details", "hosted");
      const summary = el("summary");
      const timeline = el("ol", "timeline");
      details.append(summary, timeline);
      answer.append(details);
      fold = { details, summary, timeline, suggestions: null, inputs: new Map(), span: [], status: "" };
      state.hosted = fold;
    }
    const item = el("li", "activity", data.status);
    item.dataset.state = data.state;
    fold.timeline.append(item);
    fold.status = data.status;
    fold.span.push(performance.now());
    fold.inputs.set(data.id, { label: data.label || data.name, input: data.input });
    const words = [fold.status];
    if (fold.inputs.size > 1) words.push(`${fold.inputs.size} activities`);
    const spent = fold.span[fold.span.length - 1] - fold.span[0];
    if (spent >= 1000) words.push(took(spent)); // shorter: when chunks came, not work
    fold.summary.textContent = words.join(" · ");
    const given = [...fold.inputs.values()].filter((i) => present(i.input));
    fold.details.querySelector("dl.activity-inputs")?.remove();
    if (given.length) {
      const list = el("dl", "activity-inputs");
      for (const { label, input } of given) {
        const dd = el("dd");
        dd.append(el("pre", "", JSON.stringify(input, null, 2)));
        list.append(el("dt", "", label), dd);
      }
      fold.details.append(list);
    }
    // Google's search suggestions, which must be shown with the answer.
    const chips = (data.searchSuggestions || []).map((s) => {
      const chip = el("div", "suggestion", "Google Search: ");
      chip.append(s.url ? safeLink(s.url, s.terms) : el("span", "", s.terms));
      return chip;
    });
    if (chips.length && !fold.suggestions) {
      fold.suggestions = el("div", "suggestions");
      fold.details.after(fold.suggestions);
    }
    if (fold.suggestions) fold.suggestions.replaceChildren(...chips);
  }

  // An input worth showing (what the stored page keeps: not null, empty or zero).
  const present = (value) =>
    value !== null && value !== undefined && value !== "" && value !== 0 && value !== false &&
    !(typeof value === "object" && Object.keys(value).length === 0);

  // -- images ------------------------------------------------------------------

  // The raster images a page shows, by their magic bytes (the server's check,
  // made again here: a data: URL is shown only when its bytes are one).
  const MAGIC = [
    ["image/png", [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
    ["image/jpeg", [0xff, 0xd8, 0xff]],
    ["image/gif", [0x47, 0x49, 0x46, 0x38]],
  ];

  function shownImage(url) {
    const match = /^data:(image\/[a-z]+);base64,([A-Za-z0-9+/]{16})/.exec(url || "");
    if (!match) return null;
    let head;
    try {
      head = Array.from(atob(match[2]), (c) => c.charCodeAt(0));
    } catch (_) {
      return null;
    }
    const riff = String.fromCharCode(...head.slice(0, 4)) === "RIFF";
    const webp = riff && String.fromCharCode(...head.slice(8, 12)) === "WEBP";
    const sniffed = webp ? "image/webp" :
      (MAGIC.find(([, bytes]) => bytes.every((b, i) => head[i] === b)) || [null])[0];
    return sniffed === match[1] ? url : null;
  }

  // One attachment as the stored page writes it: its line, and a shown
  // image as a thumbnail opening whole from the store (behind the token).
  function figure(item) {
    const src = item.url ? shownImage(item.url) : null;
    const node = el("figure", src ? "attachment thumbnail" : "attachment");
    if (src) {
      const img = el("img");
      img.src = src;
      img.alt = item.name || "image";
      let shown = img;
      if (/^[0-9a-f]{64}$/.test(item.sha256 || "")) {
        shown = el("a", "full");
        shown.href = `/blob/${item.sha256}?token=${encodeURIComponent(token)}`;
        shown.target = "_blank";
        shown.rel = "noopener noreferrer";
        shown.title = "Open the whole image";
        shown.append(img);
      }
      node.append(shown);
    }
    node.append(el("figcaption", "", item.caption));
    return node;
  }

  function toolMedia(fold, media) {
    fold.media = (fold.media || []).concat(media);
    const box = el("div", "tool-media");
    box.append(...media.map(figure));
    fold.detail.append(box);
    setTool(fold, fold.state);
  }

  // -- a run waiting for approval ------------------------------------------------

  // The calls a run stopped on, as the stored page lists them under the
  // turn: each call's arguments and its Approve and Deny.
  function approvalForm(state) {
    const section = el("section", "pending");
    section.id = "pending";
    section.setAttribute("aria-labelledby", "pending-title");
    const heading = el("h2", "", "Waiting for approval");
    heading.id = "pending-title";
    const form = el("form");
    form.id = "pending-form";
    const direct = state.waiting.length === 1;
    form.dataset.direct = direct ? "yes" : "no";
    for (const { id, fold } of state.waiting) {
      const call = el("fieldset", "call");
      const legend = el("legend", "", "run ");
      legend.append(el("code", "", fold.name));
      call.append(legend);
      const input = fold.input;
      const named = input !== null && typeof input === "object" && !Array.isArray(input);
      if (named && !Object.keys(input).length) call.append(el("p", "arguments", "no arguments"));
      else call.append(namedValues(named ? input : { arguments: JSON.stringify(input) }));
      const choice = el("div", "choice");
      choice.setAttribute("role", "group");
      choice.setAttribute("aria-label", `run ${fold.name}`);
      for (const [kind, word] of [["approve", "Approve"], ["deny", "Deny"]]) {
        const button = el("button", kind, word);
        button.type = "button";
        button.dataset.call = id;
        button.setAttribute("aria-pressed", "false");
        choice.append(button);
      }
      call.append(choice);
      form.append(call);
    }
    if (!direct) {
      const go = el("button", "primary", "Continue");
      go.type = "submit";
      form.append(go);
    }
    section.append(heading, form);
    const going = { answer: state.answer, state };
    wirePending(form, (body) => {
      section.remove();
      return post("/api/resume", body, null, going);
    });
    return section;
  }

  const KEEPS_HOSTED = new Set([
    "data-hosted-activity",
    "start",
    "start-step",
    "message-metadata",
    "data-retry",
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
        hostedActivity(answer, state, chunk.data);
        break;
      case "tool-input-start":
        toolFold(answer, state, chunk.toolCallId, chunk.toolName);
        break;
      case "tool-input-available": {
        const fold = toolFold(answer, state, chunk.toolCallId, chunk.toolName);
        fold.input = chunk.input;
        fold.detail.append(...argumentNodes(chunk.input));
        fold.started = performance.now();
        break;
      }
      case "tool-input-error": {
        const fold = toolFold(answer, state, chunk.toolCallId, chunk.toolName);
        const given = chunk.input === undefined || chunk.input === null ? "" : chunk.input;
        fold.detail.append(...argumentNodes(typeof given === "string" ? given : JSON.stringify(given)));
        toolDetail(fold, "error", chunk.errorText, "tool-error");
        setTool(fold, "failed");
        break;
      }
      case "tool-approval-request": {
        const fold = toolFold(answer, state, chunk.toolCallId);
        setTool(fold, "awaiting approval");
        state.waiting.push({ id: chunk.toolCallId, fold });
        break;
      }
      case "tool-output-available": {
        const fold = toolFold(answer, state, chunk.toolCallId);
        toolDetail(fold, "result", chunk.output, "tool-output");
        setTool(fold, "done", alone(state, fold));
        break;
      }
      case "tool-output-error": {
        const fold = toolFold(answer, state, chunk.toolCallId);
        toolDetail(fold, "result", chunk.errorText, "tool-error");
        setTool(fold, "failed", alone(state, fold));
        break;
      }
      case "tool-output-denied": {
        const fold = toolFold(answer, state, chunk.toolCallId);
        // The result every refusal stores (elelem.turns.pending.REFUSED).
        toolDetail(fold, "result", "refused: the user did not approve this call", "tool-error");
        setTool(fold, "refused", alone(state, fold));
        break;
      }
      case "data-tool-media":
        toolMedia(toolFold(answer, state, chunk.data.toolCallId), chunk.data.media);
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
        inPlace(answer, "warn", "stopped: kept what arrived");
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
      case "custom": {
        // A provider's item no neutral part holds: named, as stored.
        const elelem = (chunk.providerMetadata || {}).elelem || {};
        const tag = typeof elelem.type === "string" ? elelem.type : chunk.kind;
        answer.append(el("div", "block-other", `[${tag} block kept, not shown]`));
        break;
      }
      case "data-block": {
        const tag = String(chunk.data.type);
        if (["image", "document", "audio"].includes(tag)) {
          const name = chunk.data.name ? ` ${chunk.data.name}` : "";
          answer.append(figure({ caption: `[${tag}${name}]` }));
        } else {
          answer.append(el("div", "block-other", `[${tag} block kept, not shown]`));
        }
        break;
      }
      case "file": {
        const kind = String(chunk.mediaType).split("/")[0];
        const what = kind === "image" || kind === "audio" ? kind : "document";
        answer.append(figure({ url: chunk.url, caption: `[${what}]` }));
        break;
      }
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
