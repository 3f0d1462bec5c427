// elelem serve: the parts of a streamed answer, drawn as the stored page
// draws them (one structure, so a reload shows what the stream showed):
// a tool call folded with its result and the images it returned, a run of
// hosted activity folded with its inputs, the calls a run waits on with
// Approve and Deny, a provider's item named.  DOM building only (no
// request): chat.js, loaded after it, reads the stream and calls these.
// Untrusted text is written with textContent only; an image is shown only
// from a data: URL whose magic bytes are a raster image's, a link only for
// an http(s) URL.  Times are the log's, as the stream carries them (the
// `at` of the events that stored a call, its result, a hosted transition),
// never the browser's clock.
"use strict";

window.elelemParts = (function () {
  const token = new URLSearchParams(location.search).get("token") || "";

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

  // -- times -------------------------------------------------------------------

  // A stored `at` (ISO 8601 UTC) in microseconds, or null.
  const STORED = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?(Z|[+-]\d\d:\d\d)$/;
  function micros(at) {
    const match = STORED.exec(at || "");
    const whole = match ? Date.parse(match[1] + match[3]) : NaN;
    return Number.isNaN(whole) ? null : whole * 1000 + Number((match[2] || "").padEnd(6, "0"));
  }
  // Python's round(): halves to the even neighbour.
  const halfEven = (x) => {
    const low = Math.floor(x);
    const rest = x - low;
    return rest > 0.5 || (rest === 0.5 && low % 2 === 1) ? low + 1 : low;
  };
  // The time between two stored events as the stored page writes it
  // (elelem.web.folds.duration, the same arithmetic): "75 ms", "1.2 s",
  // "2 min 5 s"; null when either is not a time, or the end is earlier.
  function duration(start, end) {
    const from = micros(start);
    const to = micros(end);
    if (from === null || to === null || to < from) return null;
    const seconds = (to - from) / 1e6;
    if (seconds < 1) return `${halfEven(seconds * 1000)} ms`;
    if (seconds < 60) {
      // Python's format rounds a tie (x.25) to even; toFixed upwards.
      const shown = seconds % 1 === 0.25 ? (seconds - 0.05).toFixed(1) : seconds.toFixed(1);
      return `${shown} s`;
    }
    const whole = halfEven(seconds);
    return `${Math.floor(whole / 60)} min ${whole % 60} s`;
  }

  // -- tool calls, folded ----------------------------------------------------

  const TONES = { failed: "bad", stopped: "bad", refused: "wait", "awaiting approval": "wait" };

  // The page's own fold of a call (a resumed run answers a call stored
  // above): updated where it is.
  function storedFold(id) {
    for (const details of document.querySelectorAll("details.tool[data-call]")) {
      if (details.dataset.call !== id || details.closest("#live")) continue;
      const summary = details.querySelector("summary");
      const detail = details.querySelector(".tool-detail");
      const fold = { details, summary, detail, name: details.dataset.tool, state: "" };
      // Its step's line stays last, where the stored page writes it.
      const note = detail.querySelector(":scope > p.response");
      return Object.assign(fold, { took: null, input: {}, note });
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
      fold = { details, summary, detail, name: name || "tool", state: "" };
      Object.assign(fold, { took: null, input: {}, note: null });
      state.tools.set(id, fold);
      setTool(fold, "running");
    }
    return fold;
  }

  const count = (n, what) => (n === 1 ? `1 ${what}` : `${n} ${what}s`);

  function setTool(fold, words) {
    fold.state = words;
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

  // What a fold shows inside, before its step's line (kept last).
  const inFold = (fold, ...nodes) => {
    for (const node of nodes) fold.detail.insertBefore(node, fold.note);
  };

  function toolDetail(fold, label, value, className) {
    const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
    inFold(fold, el("p", "tool-label", label), el("pre", className || "", text));
  }

  // How long a call took, from when the log stored it to when it stored its
  // result (a data-tool-time part; no time when either is not known: the
  // results of a step stored together give no call its own time).
  function toolTime(fold, times) {
    fold.took = duration(times.calledAt, times.answeredAt);
    setTool(fold, fold.state);
  }

  // A response's outcome, usage, cost and model, as the stored page writes
  // its line (a data-response-line): in `fold`, the last call of a step
  // that only called tools, or, with no fold, returned for the answer to
  // append.
  function responseLine(fold, notes) {
    const line = el("p", "response");
    notes.forEach(({ kind, text }, i) => {
      if (i) line.append(" · ");
      line.append(el("span", kind, text));
    });
    if (!fold) return line;
    if (fold.note) fold.note.replaceWith(line);
    else fold.detail.append(line);
    fold.note = line;
  }

  // Calls still running when the answer ends (stopped, failed) say so.
  function settle(state, words) {
    for (const fold of state.tools.values()) {
      if (fold.state === "running") setTool(fold, words);
    }
  }

  // -- hosted activity, folded ----------------------------------------------

  // A run of hosted activities (nothing else between them) is one fold, as
  // the stored page folds it: the last status on its line, each transition
  // in its timeline, what each activity was given inside; Google's search
  // suggestions after it (`conversation`: where they are served).
  function hostedActivity(answer, state, data, conversation) {
    let fold = state.hosted;
    if (!fold) {
      const details = el("details", "hosted");
      const summary = el("summary");
      const timeline = el("ol", "timeline");
      details.append(summary, timeline);
      answer.append(details);
      fold = { details, summary, timeline, last: details, inputs: new Map(), span: [] };
      state.hosted = fold;
    }
    const item = el("li", "activity", data.status);
    item.dataset.state = data.state;
    fold.timeline.append(item);
    fold.status = data.status;
    if (data.at) fold.span.push(data.at);
    fold.inputs.set(data.id, { label: data.label || data.name, input: data.input });
    const words = [fold.status];
    if (fold.inputs.size > 1) words.push(`${fold.inputs.size} activities`);
    // From the first transition stored to the last, when a second or more
    // (shorter spans are when the stream's events arrived, not work).
    const spent = duration(fold.span[0], fold.span[fold.span.length - 1]);
    if (fold.span.length > 1 && spent !== null && !spent.endsWith(" ms")) words.push(spent);
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
    // Google's search suggestions, which must be shown with the answer:
    // Google's HTML in a sandboxed frame that runs no script, served by
    // the app from the log under a policy of its own (routes/frames.py),
    // as the stored page frames it.
    if (data.searchEntryPoint && data.event && conversation) {
      const frame = el("iframe", "search-entry-point");
      frame.title = "Google search suggestions";
      frame.setAttribute("sandbox", "allow-popups allow-popups-to-escape-sandbox");
      frame.setAttribute("referrerpolicy", "no-referrer");
      const path = `/c/${encodeURIComponent(conversation)}/suggestions/` +
        encodeURIComponent(data.event);
      frame.src = `${path}?token=${encodeURIComponent(token)}`;
      fold.last.after(frame);
      fold.last = frame;
    }
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
    inFold(fold, box);
    setTool(fold, fold.state);
  }

  // -- a run waiting for approval ------------------------------------------------

  // The calls a run stopped on (`waiting`: each call's id, tool name and
  // arguments, and for a provider's hosted tool its server, "" when none
  // was named), as the stored page lists them under the turn: each call's
  // arguments and its Approve and Deny (the chat wires them).
  function approvalForm(waiting) {
    const section = el("section", "pending");
    section.id = "pending";
    section.setAttribute("aria-labelledby", "pending-title");
    const heading = el("h2", "", "Waiting for approval");
    heading.id = "pending-title";
    const form = el("form");
    form.id = "pending-form";
    const direct = waiting.length === 1;
    form.dataset.direct = direct ? "yes" : "no";
    for (const { id, name, input, server } of waiting) {
      // A provider's request to run one of its hosted tools says whose.
      const asked = server === undefined ? "run " : "let the provider run ";
      const call = el("fieldset", "call");
      const legend = el("legend", "", asked);
      legend.append(el("code", "", name));
      if (server) legend.append(` on ${server}`);
      call.append(legend);
      const named = input !== null && typeof input === "object" && !Array.isArray(input);
      if (named && !Object.keys(input).length) call.append(el("p", "arguments", "no arguments"));
      else if (named) call.append(namedValues(input));
      else {
        // Not a JSON object: the text as it came, under "arguments".
        const list = el("dl", "arguments");
        const dd = el("dd");
        dd.append(el("pre", "", typeof input === "string" ? input : JSON.stringify(input)));
        list.append(el("dt", "", "arguments"), dd);
        call.append(list);
      }
      const choice = el("div", "choice");
      choice.setAttribute("role", "group");
      choice.setAttribute("aria-label", `${asked}${name}`);
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
    return section;
  }

  // -- what has no fold ----------------------------------------------------------

  // A provider's item no neutral part holds (ai 7's custom part), a block
  // named in a data-block part, a file: each as the stored page shows it.
  function otherPart(chunk) {
    if (chunk.type === "custom") {
      const elelem = (chunk.providerMetadata || {}).elelem || {};
      const tag = typeof elelem.type === "string" ? elelem.type : chunk.kind;
      return el("div", "block-other", `[${tag} block kept, not shown]`);
    }
    if (chunk.type === "file") {
      const kind = String(chunk.mediaType).split("/")[0];
      const what = kind === "image" || kind === "audio" ? kind : "document";
      return figure({ url: chunk.url, caption: `[${what}]` });
    }
    const tag = String(chunk.data.type);
    if (["image", "document", "audio"].includes(tag)) {
      const name = chunk.data.name ? ` ${chunk.data.name}` : "";
      return figure({ caption: `[${tag}${name}]` });
    }
    return el("div", "block-other", `[${tag} block kept, not shown]`);
  }

  return Object.freeze({
    el, safeLink, count, duration, toolFold, setTool, toolDetail, toolTime, responseLine,
    argumentNodes, settle, hostedActivity, toolMedia, approvalForm, otherPart,
  });
})();
