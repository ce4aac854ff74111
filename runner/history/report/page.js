// pitwall's HTML report. Everything the page shows comes from the JSON block
// and is written with textContent or text nodes: model output is data and
// is never parsed as markup. Nothing is fetched.
(() => {
  "use strict";
  const data = JSON.parse(document.getElementById("pitwall-data").textContent);
  const $ = (id) => document.getElementById(id);
  const runs = data.runs || [];
  const cmp = data.comparison || { runs: [], diffs: [] };
  const severity = { fail: 6, error: 5, "judge-error": 4, warn: 3, none: 2, pass: 1 };
  const state = { run: 0, status: "", verdict: "", category: "", testSeverity: "", test: "", hidden: new Set(), open: null };

  // el builds an element; strings among kids become text nodes.
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = String(v);
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined || kid === false) continue;
      e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return e;
  }
  const clear = (e) => { while (e.firstChild) e.removeChild(e.firstChild); return e; };
  const pct = (p, n) => (n ? Math.round((100 * p) / n) + "%" : "—");
  const pct1 = (x, n) => (n ? Math.round(100 * x) + "%" : "—");
  const num = (x, d) => (x === null || x === undefined ? "—" : Number(x).toFixed(d));
  const ms = (x) => (x ? Math.round(x) + " ms" : "—");
  const judgeLabel = (j) => (j ? "judge " + j : "checks only (no judge)");

  function table(head, rows, numeric) {
    const t = el("table");
    t.append(el("thead", null, el("tr", null, head.map((h, i) => el("th", { class: numeric && numeric[i] ? "num" : null }, h)))));
    const b = el("tbody");
    for (const r of rows) b.append(el("tr", null, r.map((c, i) => (c instanceof Node && c.tagName === "TD") ? c : el("td", { class: numeric && numeric[i] ? "num" : null }, c))));
    t.append(b);
    return t;
  }

  // ---- the run's header, summary, ranking ----

  function renderRunNav() {
    const nav = clear($("runs"));
    if (runs.length < 2) return;
    runs.forEach((r, i) => nav.append(el("button", {
      type: "button", "aria-pressed": i === state.run ? "true" : "false",
      onclick: () => { state.run = i; state.hidden.clear(); renderAll(); },
    }, "run " + r.run.id + (r.run.name ? " · " + r.run.name : ""))));
  }

  function renderHeader(r) {
    $("title").textContent = "pitwall · " + (r.run.name ? r.run.name + " · " : "") + "run " + r.run.id;
    const when = r.run.started_at ? new Date(r.run.started_at).toISOString().replace("T", " ").slice(0, 16) + " UTC" : "";
    let dur = "";
    if (r.run.ended_at && r.run.started_at) dur = " (" + Math.round((new Date(r.run.ended_at) - new Date(r.run.started_at)) / 1000) + " s)";
    const exit = r.run.exit_code === undefined || r.run.exit_code === null ? "" : "exit " + r.run.exit_code;
    $("meta").textContent = [r.run.status, judgeLabel(r.judge), when + dur, r.models.length + " models × " + r.tests.length + " tests", exit].filter(Boolean).join(" · ");
  }

  function renderWarnings(r) {
    const ws = r.warnings || [];
    $("warnings-section").hidden = ws.length === 0;
    const ul = clear($("warnings"));
    for (const w of ws) ul.append(el("li", null, w));
  }

  function renderSummary(r) {
    const s = clear($("summary"));
    const chip = (t) => s.append(el("span", { class: "chip" }, t));
    chip(r.summary.cells + " cells");
    for (const k of ["completed", "failed", "error", "cancelled", "pending"]) if (r.summary.by_status[k]) chip(r.summary.by_status[k] + " " + k);
    for (const k of ["pass", "fail", "warn", "error", "none"]) if (r.summary.by_verdict[k]) chip("verdict " + k + ": " + r.summary.by_verdict[k]);
    let p = 0, d = 0;
    for (const c of r.cells) { if (c.outcome === "pass") p++; if (decided(c.outcome)) d++; }
    chip("pass rate " + pct(p, d) + " (" + p + "/" + d + ")");
  }

  const decided = (o) => o === "pass" || o === "fail" || o === "warn" || o === "error";

  function intervalBar(iv, n) {
    const bar = el("span", { class: "ivbar", title: n ? pct1(iv.lo, 1) + " – " + pct1(iv.hi, 1) : "nothing decided" });
    bar.style.cssText = "display:inline-block;position:relative;width:120px;height:8px;background:var(--none);border-radius:4px;vertical-align:middle;margin-left:6px";
    if (n) {
      const span = el("span");
      span.style.cssText = "position:absolute;top:0;bottom:0;border-radius:4px;background:var(--accent);opacity:.45";
      span.style.left = (100 * iv.lo) + "%";
      span.style.width = Math.max(1, 100 * (iv.hi - iv.lo)) + "%";
      const dot = el("span");
      dot.style.cssText = "position:absolute;top:-2px;width:3px;height:12px;background:var(--fg)";
      dot.style.left = "calc(" + (100 * iv.value) + "% - 1px)";
      bar.append(span, dot);
    }
    return bar;
  }

  function rankLabel(m) { return m.decided === 0 ? "—" : (m.tied_with && m.tied_with.length ? "=" : "") + m.rank; }

  function renderRanking() {
    const rr = cmp.runs[state.run];
    const wrap = $("ranking");
    const pairs = clear($("pairs"));
    if (!rr) { clear(wrap); return; }
    $("method").textContent = (cmp.ranked_by === "score"
      ? "Ranked by mean score, " + Math.round(100 * cmp.level) + "% bootstrap intervals over tests."
      : "Ranked by pass rate, " + Math.round(100 * cmp.level) + "% Wilson intervals.") +
      " A rank with = is a tie: the model's interval overlaps another's, so the battery cannot tell them apart.";
    const rows = rr.ranking.map((m) => {
      const iv = cmp.ranked_by === "score" ? m.score : m.pass_rate;
      const rate = el("td", { class: "num" }, pct1(m.pass_rate.value, m.decided));
      const inter = el("td", null, m.decided ? "[" + pct1(m.pass_rate.lo, 1) + ", " + pct1(m.pass_rate.hi, 1) + "]" : "—", intervalBar(iv, m.decided));
      return [rankLabel(m), el("code", null, m.model), rate, inter, m.pass + " / " + m.decided,
        m.decided ? num(m.score.value, 2) + " [" + num(m.score.lo, 2) + ", " + num(m.score.hi, 2) + "]" : "—",
        m.latency_ms.n ? ms(m.latency_ms.median) + " / " + ms(m.latency_ms.p95) : "—",
        ms(m.ttft_ms.median), m.tokens_per_sec.n ? num(m.tokens_per_sec.median, 1) : "—",
        m.prompt_tokens + " / " + m.completion_tokens,
        el("span", { class: "tied" }, m.tied_with && m.tied_with.length ? m.tied_with.join(", ") : "—")];
    });
    const t = table(["rank", "model", "pass rate", "95% interval", "pass / decided", "score", "latency p50 / p95", "TTFT p50", "tok/s p50", "tokens in / out", "tied with"],
      rows, [true, false, true, false, true, false, true, true, true, true, false]);
    wrap.replaceWith(t); t.id = "ranking";
    for (let i = 0; i + 1 < rr.ranking.length; i++) {
      const p = (rr.pairs || []).find((q) => q.a === rr.ranking[i].model && q.b === rr.ranking[i + 1].model);
      if (p) pairs.append(el("li", null, p.says));
    }
    for (const j of rr.judge_agreement || []) {
      pairs.append(el("li", null, "judges " + j.a + " and " + j.b + ": " + (j.n ? "agree on " + pct1(j.agreement, 1) + " of " + j.n + " cells, Cohen's κ " + num(j.kappa, 2) : "no cell judged by both")));
    }
    const cats = rr.categories || [];
    const ct = $("categories");
    if (cats.length < 2) { clear(ct); return; }
    const crow = rr.ranking.map((m) => [el("code", null, m.model), ...m.categories.map((c) => (c.decided ? pct1(c.pass_rate.value, c.decided) + " (" + c.pass + "/" + c.decided + ")" : "—"))]);
    const nt = table(["model", ...cats], crow, [false, ...cats.map(() => true)]);
    ct.replaceWith(nt); nt.id = "categories";
  }

  // ---- several runs: what changed ----

  function renderComparison() {
    const sec = $("comparison-section");
    if (runs.length < 2) { sec.hidden = true; return; }
    sec.hidden = false;
    const box = clear($("comparison"));
    const models = [];
    for (const rr of cmp.runs) for (const m of rr.ranking) if (!models.includes(m.model)) models.push(m.model);
    const rows = models.map((name) => [el("code", null, name), ...cmp.runs.map((rr) => {
      const m = rr.ranking.find((x) => x.model === name);
      return m ? rankLabel(m) + ". " + pct1(m.pass_rate.value, m.decided) + " [" + pct1(m.pass_rate.lo, 1) + ", " + pct1(m.pass_rate.hi, 1) + "]" : "—";
    })]);
    box.append(el("h3", null, "Pass rate by run"), el("div", { class: "scroll" }, table(["model", ...cmp.runs.map((r) => "run " + r.id)], rows)));
    for (const d of cmp.diffs || []) {
      box.append(el("h3", null, "run " + d.base + " → run " + d.other));
      box.append(el("p", null, d.shared + " cells decided in both runs: " + (d.fixed || []).length + " fixed, " +
        (d.broke || []).length + " broke, " + (d.flipped || []).length + " flipped." + (d.same_battery ? "" : " The batteries differ: only the tests both ran are compared.")));
      const ul = el("ul", { class: "says" });
      for (const p of [...(d.models || []), ...(d.cross || [])]) ul.append(el("li", null, p.says));
      box.append(ul);
      const ch = [];
      for (const [kind, list] of [["fixed", d.fixed], ["broke", d.broke], ["flipped", d.flipped]]) {
        for (const c of list || []) ch.push([kind, el("code", null, c.model), el("code", null, c.test), String(c.repeat + 1), c.from + " → " + c.to]);
      }
      if (ch.length) box.append(el("div", { class: "scroll" }, table(["change", "model", "test", "repeat", "outcome"], ch)));
    }
  }

  // ---- the grid ----

  function cellsOf(r) {
    const at = new Map();
    r.cells.forEach((c, i) => {
      const k = c.test + "\u0000" + c.model;
      if (!at.has(k)) at.set(k, []);
      at.get(k).push(i);
    });
    return at;
  }
  const category = (r, t) => (r.categories && r.categories[t]) || "—";
  const hasCategories = (r) => r.tests.some((t) => category(r, t) !== "—");
  // A test's severity as its battery gives it (critical, warning, info).
  const testSeverity = (r, t) => (r.severities && r.severities[t]) || "—";
  const hasSeverities = (r) => r.tests.some((t) => testSeverity(r, t) !== "—");

  function renderFilters(r) {
    const opts = (sel, label, values, cur) => {
      clear(sel);
      sel.append(el("option", { value: "" }, label));
      for (const v of values) sel.append(el("option", { value: v, selected: v === cur }, v));
    };
    const present = (f) => [...new Set(r.cells.map(f))];
    opts($("f-status"), "any", ["completed", "failed", "error", "cancelled", "pending"].filter((s) => present((c) => c.status).includes(s)), state.status);
    opts($("f-verdict"), "any", ["pass", "fail", "warn", "error", "judge-error", "none"].filter((s) => present((c) => c.outcome).includes(s)), state.verdict);
    opts($("f-category"), "any", [...new Set(r.tests.map((t) => category(r, t)))], state.category);
    $("f-category").parentElement.hidden = !hasCategories(r);
    const sevs = new Set(r.tests.map((t) => testSeverity(r, t)));
    opts($("f-severity"), "any", ["critical", "warning", "info", "—"].filter((v) => sevs.has(v)), state.testSeverity);
    $("f-severity").parentElement.hidden = !hasSeverities(r);
    const box = $("f-models");
    while (box.children.length > 1) box.removeChild(box.lastChild);
    for (const m of r.models) {
      const cb = el("input", { type: "checkbox", checked: !state.hidden.has(m), "data-model": m });
      cb.addEventListener("change", () => { if (cb.checked) state.hidden.delete(m); else state.hidden.add(m); renderGrid(); });
      box.append(el("label", null, cb, " " + m));
    }
  }

  function matches(c) {
    return (!state.status || c.status === state.status) && (!state.verdict || c.outcome === state.verdict);
  }

  function renderGrid() {
    const r = runs[state.run];
    const at = cellsOf(r);
    const models = r.models.filter((m) => !state.hidden.has(m));
    const filtering = state.status || state.verdict;
    const t = el("table", { id: "grid" });
    t.append(el("thead", null, el("tr", null, el("th", { scope: "col" }, "test"), models.map((m) => el("th", { scope: "col" }, m)), el("th", { scope: "col", class: "num" }, "pass rate"))));
    const body = el("tbody");
    const colPass = models.map(() => 0), colDec = models.map(() => 0);
    let shown = 0;
    for (const test of r.tests) {
      if (state.category && category(r, test) !== state.category) continue;
      if (state.testSeverity && testSeverity(r, test) !== state.testSeverity) continue;
      if (state.test && !test.toLowerCase().includes(state.test.toLowerCase())) continue;
      const sev = testSeverity(r, test);
      const tr = el("tr", null, el("th", { scope: "row" }, test, hasCategories(r) ? el("div", { class: "cat" }, category(r, test)) : null,
        hasSeverities(r) && sev !== "—" ? el("div", { class: "sev sev-" + sev }, sev) : null));
      let any = false, rp = 0, rd = 0;
      models.forEach((m, mi) => {
        const idx = at.get(test + "\u0000" + m) || [];
        const cells = idx.map((i) => r.cells[i]);
        for (const c of cells) {
          if (decided(c.outcome)) { rd++; colDec[mi]++; }
          if (c.outcome === "pass") { rp++; colPass[mi]++; }
        }
        const hit = cells.some(matches);
        if (hit) any = true;
        if (!cells.length) { tr.append(el("td", null, "·")); return; }
        const worst = cells.reduce((a, c) => (severity[c.outcome] > severity[a] ? c.outcome : a), "pass");
        const label = idx.map((i) => (cells.length > 1 ? r.marks[i].split(" ")[0] : r.marks[i])).join(" ");
        const why = idx.map((i) => r.why[i]).filter(Boolean)[0] || "";
        const b = el("button", {
          type: "button", class: "cell o-" + worst + (filtering && !hit ? " dim" : ""),
          "data-test": test, "data-model": m, title: why ? why.slice(0, 300) : null,
          "aria-label": m + " × " + test + ": " + label,
          onclick: () => openCell(idx[0], b),
        }, label);
        tr.append(el("td", null, b));
      });
      if (filtering && !any) continue;
      tr.append(el("td", { class: "rate" }, pct(rp, rd)));
      body.append(tr);
      shown++;
    }
    t.append(body);
    let tp = 0, td = 0;
    colPass.forEach((p, i) => { tp += p; td += colDec[i]; });
    t.append(el("tfoot", null, el("tr", null, el("th", { scope: "row" }, "pass rate"), models.map((m, i) => el("td", { class: "rate" }, pct(colPass[i], colDec[i]))), el("td", { class: "rate" }, pct(tp, td)))));
    $("grid").replaceWith(t);
    $("legend").textContent = data.legend + " · " + shown + " of " + r.tests.length + " tests shown";
  }

  // ---- one cell ----

  function facts(pairs) {
    const dl = el("dl", { class: "facts" });
    for (const [k, v] of pairs) if (v !== "" && v !== null && v !== undefined) dl.append(el("dt", null, k), el("dd", null, v));
    return dl;
  }
  const pre = (s, cls) => el("pre", { class: cls || null }, s);
  function pretty(v) {
    if (typeof v === "string") { try { return JSON.stringify(JSON.parse(v), null, 2); } catch (e) { return v; } }
    return JSON.stringify(v, null, 2);
  }
  const clipText = (s, n) => (s.length > n ? s.slice(0, n) + "…" : s);
  const badge = (o, text) => el("span", { class: "badge o-" + (o || "none") }, text || o);
  const verdictOutcome = (v) => ({ pass: "pass", fail: "fail", warn: "warn", error: "judge-error" }[v] || "none");

  function openCell(i, button) {
    const r = runs[state.run];
    const c = r.cells[i];
    state.open = i;
    document.querySelectorAll("button.cell.open").forEach((b) => b.classList.remove("open"));
    if (button) button.classList.add("open");
    $("detail-title").textContent = c.model + " × " + c.test + (r.cells.filter((x) => x.model === c.model && x.test === c.test).length > 1 ? " #" + (c.repeat + 1) : "");
    const body = clear($("detail-body"));
    const reps = r.cells.map((x, j) => [x, j]).filter(([x]) => x.model === c.model && x.test === c.test);
    if (reps.length > 1) {
      body.append(el("p", null, reps.map(([x, j]) => el("button", { type: "button", "aria-pressed": j === i ? "true" : "false", onclick: () => openCell(j, button) }, "#" + (x.repeat + 1) + " " + r.marks[j]))));
    }
    body.append(el("p", null, badge(c.outcome, r.marks[i]), " ", c.outcome, r.why[i] ? " — " + r.why[i] : ""));
    body.append(facts([
      ["status", c.status], ["verdict", c.verdict === null ? "—" : c.verdict + (c.score !== null ? " (score " + num(c.score, 2) + ", " + judgeLabel(r.judge) + ")" : "")],
      ["category", hasCategories(r) ? category(r, c.test) : ""], ["severity", hasSeverities(r) ? testSeverity(r, c.test) : ""], ["latency", ms(c.latency_ms)], ["time to first token", ms(c.ttft_ms)],
      ["tokens/s", c.tokens_per_sec ? num(c.tokens_per_sec, 1) : "—"], ["tokens in / out", c.prompt_tokens + " / " + c.completion_tokens],
      ["attempts", c.attempts], ["server", c.server], ["error", c.error ? (c.error_class ? c.error_class + ": " : "") + c.error : ""],
    ]));
    body.append(el("h3", null, "Prompt"));
    if (Array.isArray(c.messages) && c.messages.length) {
      for (const m of c.messages) {
        body.append(el("div", { class: "msg-role" }, m.role + (m.name ? " (" + m.name + ")" : "")), pre(m.content || ""));
        if (m.tool_calls) body.append(pre(pretty(m.tool_calls)));
      }
    } else body.append(el("p", { class: "note" }, "The ledger holds no request for this cell."));
    body.append(el("h3", null, "Reply"), pre(c.output || "", "reply"));
    if (c.reasoning) body.append(el("details", null, el("summary", null, "reasoning"), pre(c.reasoning)));
    if (Array.isArray(c.steps) && c.steps.length) body.append(trajectory(c.steps));
    else if (Array.isArray(c.tool_calls) && c.tool_calls.length) {
      body.append(el("h3", null, "Tool calls"));
      for (const tc of c.tool_calls) body.append(el("div", { class: "msg-role" }, tc.name || "call"), pre(pretty(tc.arguments || "")));
    }
    if (Array.isArray(c.checks) && c.checks.length) {
      body.append(el("h3", null, "Checks"));
      body.append(el("ul", null, c.checks.map((k) => el("li", null, badge(k.pass ? "pass" : "fail", k.pass ? "✓" : "✗"), " ", k.name, k.reason ? " — " + k.reason : ""))));
    }
    const js = Object.keys(c.judgments || {}).sort((a, b) => (a === "jury") - (b === "jury") || (r.judges.indexOf(a) - r.judges.indexOf(b)) || a.localeCompare(b));
    if (js.length) body.append(el("h3", null, "Judges"));
    for (const name of js) body.append(judgment(name, c.judgments[name], name === r.judge));
    const reqs = (r.requests || []).filter((q) => q.model === c.model && q.test === c.test && q.repeat === c.repeat);
    if (reqs.length) {
      body.append(el("h3", null, "Requests"));
      body.append(el("div", { class: "scroll" }, table(["id", "purpose", "judge", "attempt", "server", "status", "latency", "tokens in / out", "error"],
        reqs.map((q) => [String(q.id), q.purpose, q.judge ? q.judge + " #" + (q.sample + 1) : "", String(q.attempt), q.server, q.status, ms(q.latency_ms), q.prompt_tokens + " / " + q.completion_tokens, q.error_class ? q.error_class + (q.error ? ": " + q.error : "") : ""]))));
    }
    $("detail").hidden = false;
    $("detail-close").focus();
    const link = new URLSearchParams({ run: r.run.id, model: c.model, test: c.test, repeat: String(c.repeat) });
    history.replaceState(null, "", "#" + link.toString());
  }

  // openFromLink opens the cell a link names (#run=…&model=…&test=…&repeat=…),
  // the one openCell writes, so that a cell can be pointed at.
  function openFromLink() {
    const q = new URLSearchParams(location.hash.slice(1));
    if (!q.has("model") || !q.has("test")) return;
    const ri = runs.findIndex((r) => r.run.id === q.get("run"));
    if (ri > 0) { state.run = ri; renderAll(); }
    const r = runs[state.run];
    const rep = Number(q.get("repeat") || 0);
    const i = r.cells.findIndex((c) => c.model === q.get("model") && c.test === q.get("test") && c.repeat === rep);
    if (i < 0) return;
    const b = [...document.querySelectorAll("#grid button.cell")].find((x) => x.dataset.model === q.get("model") && x.dataset.test === q.get("test"));
    if (b) b.scrollIntoView({ block: "nearest" });
    openCell(i, b);
  }

  // trajectory is an agent cell's loop, step by step: what the model said,
  // each call with its arguments and the observation it was answered with,
  // and the answer it ended with. The JSON export has the same, whole.
  function trajectory(steps) {
    const box = el("div", { class: "trajectory" });
    box.append(el("h3", null, "Trajectory (" + steps.length + (steps.length === 1 ? " step)" : " steps)")));
    const ol = el("ol", { class: "steps" });
    for (const s of steps) {
      const li = el("li", { class: "step", "data-step": s.step });
      li.append(el("div", { class: "msg-role" }, "step " + s.step + " · " + ms(s.latency_ms) + " · " + s.prompt_tokens + " / " + s.completion_tokens + " tokens" + (s.attempt > 1 ? " · attempt " + s.attempt : "")));
      const calls = s.calls || [];
      if (s.content) li.append(pre(s.content, calls.length ? null : "answer"));
      if (s.reasoning) li.append(el("details", null, el("summary", null, "reasoning"), pre(s.reasoning)));
      for (const tc of calls) {
        li.append(el("div", { class: "call" }, el("code", null, tc.name || "call"), " ", el("code", { class: "args", title: (tc.arguments || "").length > 300 ? tc.arguments : null }, clipText(tc.arguments || "", 300))));
        li.append(tc.observation === null || tc.observation === undefined
          ? el("p", { class: "note" }, "no observation recorded")
          : pre(clipText(tc.observation, 2000), "observation"));
      }
      ol.append(li);
    }
    box.append(ol);
    const last = steps[steps.length - 1];
    if ((last.calls || []).length) box.append(el("p", { class: "note" }, "The loop ended on calls, with no final answer."));
    return box;
  }

  function judgment(name, v, inView) {
    const box = el("div", { class: "judge", "data-judge": name });
    box.append(el("div", null, el("strong", null, name), inView ? " (in view)" : "", " ", badge(verdictOutcome(v.verdict), v.verdict.toUpperCase()),
      " score " + num(v.score, 2), v.agreement ? " · agreement " + pct1(v.agreement, 1) : "", v.source ? " · " + v.source : ""));
    if (v.error) box.append(pre(v.error));
    if (v.jury) {
      box.append(el("p", { class: "note" }, "jury: stddev " + num(v.jury.stddev, 2) + ", spread " + num(v.jury.spread, 2) + (v.jury.disagreement ? ", judges disagree" : "")));
      box.append(el("ul", null, (v.jury.judges || []).map((j) => el("li", null, j.judge + ": " + j.verdict + " " + num(j.score, 2) + " (weight " + j.weight + ")"))));
    }
    (v.samples || []).forEach((s, i) => {
      const d = el("details", { open: i === 0 && !s.pass ? true : null });
      d.append(el("summary", null, "sample " + (i + 1) + ": " + (s.parse_error ? "unparsed" : (s.pass ? "PASS" : "FAIL")) + " " + num(s.score, 2) + (s.reason ? " — " + s.reason : "")));
      if (s.parse_error) d.append(pre(s.parse_error));
      if (s.reasoning) d.append(el("div", { class: "msg-role" }, "reasoning"), pre(s.reasoning));
      if (s.raw) d.append(el("div", { class: "msg-role" }, "judge's answer"), pre(s.raw));
      box.append(d);
    });
    return box;
  }

  function closeDetail() {
    if (state.open !== null && location.hash) history.replaceState(null, "", location.pathname + location.search);
    $("detail").hidden = true;
    state.open = null;
    document.querySelectorAll("button.cell.open").forEach((b) => b.classList.remove("open"));
  }

  function renderAll() {
    const r = runs[state.run];
    if (!r) { $("meta").textContent = "no run"; return; }
    closeDetail();
    renderRunNav();
    renderHeader(r);
    renderSummary(r);
    renderWarnings(r);
    renderRanking();
    renderComparison();
    renderFilters(r);
    renderGrid();
  }

  for (const [id, key] of [["f-status", "status"], ["f-verdict", "verdict"], ["f-category", "category"], ["f-severity", "testSeverity"]]) {
    $(id).addEventListener("change", (e) => { state[key] = e.target.value; renderGrid(); });
  }
  $("f-test").addEventListener("input", (e) => { state.test = e.target.value; renderGrid(); });
  $("filters").addEventListener("submit", (e) => e.preventDefault());
  $("detail-close").addEventListener("click", closeDetail);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") closeDetail(); });
  renderAll();
  openFromLink();
})();
