// The compare page: the two sides, the table of matched points, the added and removed ones,
// the changelog between, the recipe diffs, CSV. The logic is in compare-core.js; the points
// in explorer-data.js (decoded by explorer-core.js); the rest in compare-data.js.
(function () {
  "use strict";
  const X = window.InfersweepExplorer, C = window.InfersweepCompare;
  const cdata = window.INFERSWEEP_COMPARE_DATA;
  const decoded = X.decode(window.INFERSWEEP_EXPLORER_DATA);
  const runs = decoded.runs;
  const TABLE_ROWS = 2000;
  const MARK = { regression: "▼ regression", improvement: "▲ improvement" };
  const $ = (id) => document.getElementById(id);
  let state = C.parseState(location.hash, decoded);

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  function fmt(v) {
    if (v === null || v === undefined) return "n/a";
    const a = Math.abs(v);
    return a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(2) : v.toPrecision(3);
  }

  function signed(v, unit) {
    if (v === null || v === undefined) return "n/a";
    return (v > 0 ? "+" : v < 0 ? "−" : "±") + fmt(Math.abs(v)) + (unit || "");
  }

  function runName(i) {
    return runs.label[i] + " (" + runs.date[i] + ")";
  }

  function sideName(side) {
    if (side.startsWith("date:")) return "date " + side.slice(5);
    const i = C.position(decoded, side);
    return i < 0 ? side + " (not staged)" : "run " + runName(i);
  }

  function fillControls() {
    for (const id of ["base", "new"]) {
      for (const s of C.sides(decoded)) $(id).appendChild(Object.assign(el("option", s.label), { value: s.value }));
    }
  }

  function syncControls() {
    for (const id of ["base", "new"]) {
      const select = $(id);
      if (![...select.options].some((o) => o.value === state[id])) {
        select.appendChild(Object.assign(el("option", state[id] + " (not staged)"), { value: state[id] }));
      }
      select.value = state[id];
    }
  }

  function changeCell(c) {
    const td = el("td", null, "change" + (c.verdict === "regression" ? " reg" : c.verdict === "improvement" ? " imp" : ""));
    td.appendChild(el("span", fmt(c.base) + " → " + fmt(c.new)));
    td.appendChild(el("br"));
    td.appendChild(el("span", signed(c.delta) + " (" + signed(c.pct, " %") + ")"));
    td.appendChild(el("br"));
    const basis = c.basis === "noise" ? "noise ±" + fmt(c.band) + " (n=" + c.n + ")"
      : "threshold " + c.threshold + " % (n=" + c.n + ")";
    td.appendChild(el("span", basis, "basis"));
    td.appendChild(el("br"));
    td.appendChild(el("span", MARK[c.verdict] || c.verdict, "verdict"));
    return td;
  }

  function changesTable(result) {
    const head = $("changes-head");
    head.textContent = "";
    for (const h of ["verdict", "config", "topology", "ISL/OSL", "conc", "recipe"]) head.appendChild(el("th", h));
    for (const m of result.metrics) head.appendChild(el("th", cdata.metrics[m].label));
    const body = $("changes").querySelector("tbody");
    body.textContent = "";
    for (const m of result.matched.slice(0, TABLE_ROWS)) {
      const tr = el("tr", null, m.verdict === "regression" ? "reg" : m.verdict === "improvement" ? "imp" : "");
      tr.dataset.key = m.key;
      tr.appendChild(el("td", MARK[m.verdict] || "within noise or threshold", "verdict"));
      for (const v of [m.a.s.config, m.a.s.topology, m.a.s.seq, m.a.conc]) tr.appendChild(el("td", v));
      const same = m.a.s.fingerprint === m.b.s.fingerprint;
      tr.appendChild(el("td", same ? m.a.s.fingerprint.slice(0, 12)
        : m.a.s.fingerprint.slice(0, 12) + " → " + m.b.s.fingerprint.slice(0, 12) + " (changed)"));
      for (const k of result.metrics) tr.appendChild(changeCell(m.changes[k]));
      body.appendChild(tr);
    }
    const n = result.matched.length, reg = result.matched.filter((m) => m.verdict === "regression").length;
    const imp = result.matched.filter((m) => m.verdict === "improvement").length;
    $("table-note").textContent = (n > TABLE_ROWS ? "The first " + TABLE_ROWS + " of " + n + " matched points; the CSV has them all. "
      : n + " matched point" + (n === 1 ? "" : "s") + ". ") + reg + " with a regression, " + imp + " with an improvement.";
  }

  function unmatchedTable(result) {
    const body = $("unmatched").querySelector("tbody");
    body.textContent = "";
    const rows = result.removed.map((p) => ["removed", p]).concat(result.added.map((p) => ["added", p]));
    for (const [status, p] of rows) {
      const tr = el("tr", null, status);
      for (const v of [status, p.s.config, p.s.topology, p.s.seq, p.conc, runName(p.s.run), fmt(p.tput)]) tr.appendChild(el("td", v));
      body.appendChild(tr);
    }
    $("unmatched-note").textContent = rows.length ? result.removed.length + " point(s) only in the base (removed), "
      + result.added.length + " only in the new side (added)." : "Every point of either side is matched.";
  }

  function changelog() {
    const found = C.changelogBetween(decoded, cdata, state), box = $("changelog");
    box.textContent = "";
    const span = found.runs === 0 ? "No run was staged between the two sides"
      : found.runs + " run" + (found.runs === 1 ? " was" : "s were") + " staged after the earlier side up to the later one, "
        + found.withMeta + " with changelog metadata";
    $("changelog-note").textContent = span + (found.entries.length ? "; " + found.entries.length
      + " entr" + (found.entries.length === 1 ? "y" : "ies") + " between them" : "; no changelog entries between them")
      + (found.reversed ? " (the new side is the older one)." : ".")
      + (found.runs && !found.withMeta ? " Those runs were staged without it (a local run records it since sweep run writes changelog_metadata.json)." : "");
    for (const f of found.entries) {
      const e = f.entry, div = el("div", null, "entry");
      div.dataset.entry = String(f.id);
      div.appendChild(el("p", "configs: " + (e.config_keys.join(", ") || "(none)")));
      const ul = el("ul");
      for (const d of e.description) ul.appendChild(el("li", d));
      div.appendChild(ul);
      const extra = e.other.map(([k, v]) => k + ": " + v);
      if (e.pr_link) extra.push("PR: " + e.pr_link);
      extra.push("carried by " + f.runs.map((i) => {
        const refs = cdata.runs[X.runKey(runs, i)].refs;
        return "run " + runName(i) + (refs ? " [" + refs + "]" : "");
      }).join(", "));
      div.appendChild(el("p", extra.join(" · "), "note"));
      box.appendChild(div);
    }
  }

  function recipes(result) {
    const box = $("recipes");
    box.textContent = "";
    const groups = C.recipeChanges(decoded, cdata, result.matched);
    $("recipes-note").textContent = groups.length
      ? groups.length + " recipe change" + (groups.length === 1 ? "" : "s") + " behind the matched points."
      : "No matched point's recipe fingerprint changed between the two sides.";
    for (const g of groups) {
      const sec = el("section", null, "recipe-change");
      sec.dataset.config = g.config;
      sec.appendChild(el("h3", g.config + ": " + g.recipeA + " → " + g.recipeB));
      const concs = g.points.map((m) => m.a.s.topology + " " + m.a.s.seq + " c=" + m.a.conc);
      sec.appendChild(el("p", "recipe fingerprint " + g.fpA.slice(0, 12) + " → " + g.fpB.slice(0, 12)
        + "; run " + runName(g.runA) + " → run " + runName(g.runB) + "; points: " + concs.join(", "), "note"));
      let text;
      if (g.lines === null) {
        const lacking = [g.textA === C.NO_TEXT ? runName(g.runA) : null, g.textB === C.NO_TEXT ? runName(g.runB) : null].filter((x) => x);
        text = "No recipe diff: the recipe text was not staged with run " + lacking.join(" and run ")
          + " (staged before recipes were kept, or from an aggregate without its job folders).";
      } else if (!Array.isArray(g.lines)) {
        text = "No recipe diff: " + g.lines.error;
      } else {
        text = C.diffText(g.lines, runs.label[g.runA] + "/" + g.recipeA, runs.label[g.runB] + "/" + g.recipeB);
      }
      sec.appendChild(el("pre", text, "diff"));
      box.appendChild(sec);
    }
  }

  function draw() {
    const result = C.compare(decoded, cdata, state);
    $("summary").textContent = sideName(state.base) + " → " + sideName(state.new) + ": "
      + result.matched.length + " matched, " + result.removed.length + " removed, " + result.added.length + " added.";
    changesTable(result);
    unmatchedTable(result);
    changelog();
    recipes(result);
    window.compareView = { result: result, state: state };
    document.body.dataset.compared = state.base + " " + state.new;
  }

  function setState(change) {
    state = Object.assign({}, state, change);
    const hash = C.stateHash(state, decoded);
    if (hash !== location.hash && !(hash === "" && location.hash === "")) location.hash = hash || "#";
    else draw();
  }

  $("min-repeats").textContent = String(C.MIN_REPEATS);
  fillControls();
  for (const id of ["base", "new"]) $(id).addEventListener("change", (ev) => setState({ [id]: ev.target.value }));
  $("swap").addEventListener("click", () => setState({ base: state.new, new: state.base }));
  $("csv").addEventListener("click", () => X.download("compare.csv", C.csv(window.compareView.result, decoded)));
  window.addEventListener("hashchange", () => { state = C.parseState(location.hash, decoded); syncControls(); draw(); });
  syncControls();
  draw();
})();
