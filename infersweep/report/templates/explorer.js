// The explorer page: controls, the plotly chart, the table, costs, exports. The logic is in
// explorer-core.js; the data in explorer-data.js; the view in the URL fragment.
(function () {
  "use strict";
  const X = window.InfersweepExplorer;
  const data = window.INFERSWEEP_EXPLORER_DATA;
  const decoded = X.decode(data);
  const costs = data.costs;
  const Y = X.yMetrics(costs.tiers);
  // Okabe and Ito's colour-blind-safe palette (yellow last: weak on white); symbols as well
  const COLOURS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
    "#000000", "#F0E442"];
  const SYMBOLS = ["circle", "square", "diamond", "triangle-up", "cross", "x", "star",
    "triangle-down"];
  const TABLE_ROWS = 500;
  const chart = document.getElementById("explorer-chart");
  const $ = (id) => document.getElementById(id);
  let state = X.parseState(location.hash, data);

  function option(select, value, text) {
    const o = document.createElement("option");
    o.value = value; o.textContent = text;
    select.appendChild(o);
  }

  function fillControls() {
    for (const [k, m] of Object.entries(X.X_METRICS)) option($("x"), k, m.label);
    for (const [k, m] of Object.entries(Y)) option($("y"), k, m.label);
    option($("run"), "newest", "newest run of each config");
    option($("run"), "all", "every run");
    for (let i = decoded.runs.id.length - 1; i >= 0; i--) {
      option($("run"), X.runKey(decoded.runs, i), decoded.runs.label[i] + " · " + decoded.runs.date[i]);
    }
    for (const f of X.FILTERS) {
      option($(f), "", "(all)");
      const seen = new Set(decoded.series.map((s) => s[f]));
      for (const v of Array.from(seen).sort()) if (v !== "") option($(f), v, v);
    }
  }

  function syncControls() {
    for (const k of ["x", "y", "run"].concat(X.FILTERS)) {
      const el = $(k);
      if (![...el.options].some((o) => o.value === state[k])) option(el, state[k], state[k] + " (no points)");
      el.value = state[k];
    }
    for (const k of ["frontier", "all", "log", "labels"]) $(k).checked = state[k];
    for (const input of document.querySelectorAll("input[data-hw]")) {
      const own = state[input.dataset.kind][input.dataset.hw];
      input.value = own !== undefined ? own : input.dataset.file;
    }
  }

  function fmt(v) {
    if (v === null || v === undefined) return "";
    const a = Math.abs(v);
    return a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(2) : v.toPrecision(3);
  }

  function hover(e) {
    const s = e.p.s, r = decoded.runs;
    const esc = (t) => String(t).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    return [esc(s.config), "topology " + esc(s.topology) + " · conc " + e.p.conc,
      "image " + esc(s.image), "recipe " + esc(s.fingerprint.slice(0, 12)),
      "run " + esc(r.label[s.run]) + " (" + esc(r.date[s.run]) + ") · job " + esc(s.job),
      "x " + fmt(e.x) + " · y " + fmt(e.y) +
        (state.y === "jpt" ? (e.p.jpt_measured > 0 ? " (measured)" : " (provisioned)") : "")
    ].join("<br>");
  }

  function traces(list) {
    const out = [], showAll = state.all || !state.frontier;
    const total = list.reduce((n, g) => n + g.points.length, 0);
    const type = total > 3000 ? "scattergl" : "scatter";
    list.forEach((g, i) => {
      const colour = COLOURS[i % COLOURS.length], symbol = SYMBOLS[Math.floor(i / COLOURS.length) % SYMBOLS.length];
      const mk = (rows, mode, extra) => Object.assign({
        type: type, mode: mode + (state.labels ? "+text" : ""), name: g.name, legendgroup: g.name,
        x: rows.map((e) => e.x), y: rows.map((e) => e.y), text: rows.map((e) => String(e.p.conc)),
        textposition: "top center", hovertext: rows.map(hover), hoverinfo: "text",
        marker: { color: colour, symbol: symbol, size: 8 }, line: { color: colour, width: 2 },
      }, extra);
      if (showAll) out.push(mk(g.points, "markers", {}));
      if (state.frontier) {
        out.push(mk(g.frontier, showAll ? "lines" : "lines+markers",
          showAll ? { showlegend: false, hoverinfo: "skip", text: [] } : {}));
      }
    });
    return out;
  }

  function table(list) {
    const body = $("points").querySelector("tbody");
    const rows = [];
    for (const g of list) for (const e of (state.frontier && !state.all ? g.frontier : g.points)) rows.push([g, e]);
    rows.sort((a, b) => (a[0].name < b[0].name ? -1 : a[0].name > b[0].name ? 1 : a[1].x - b[1].x));
    body.textContent = "";
    for (const [g, e] of rows.slice(0, TABLE_ROWS)) {
      const s = e.p.s, tr = document.createElement("tr");
      for (const v of [s.config, g.name, s.topology, s.seq, e.p.conc, fmt(e.x), fmt(e.y),
        decoded.runs.label[s.run], decoded.runs.date[s.run], s.image]) {
        const td = document.createElement("td");
        td.textContent = v;
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    $("table-note").textContent = rows.length > TABLE_ROWS
      ? "The first " + TABLE_ROWS + " of " + rows.length + " rows; the CSV has them all." : rows.length + " rows.";
    $("x-head").textContent = X.X_METRICS[state.x].label;
    $("y-head").textContent = Y[state.y].label;
  }

  function draw() {
    const list = X.groups(X.select(decoded, state), state, costs);
    const n = list.reduce((k, g) => k + (state.all || !state.frontier ? g.points.length : g.frontier.length), 0);
    const layout = {
      height: 560, margin: { l: 70, r: 20, t: 20, b: 60 }, hovermode: "closest",
      xaxis: { title: { text: X.X_METRICS[state.x].label }, type: state.log ? "log" : "linear" },
      yaxis: { title: { text: Y[state.y].label }, type: state.log ? "log" : "linear" },
      legend: { orientation: "h", y: -0.2 },
    };
    Plotly.react(chart, traces(list), layout, { displaylogo: false, responsive: true }).then(() => {
      chart.dataset.points = String(n);
      chart.dataset.rendered = "yes";
      if (window.performance && performance.mark) performance.mark("explorer-drawn");
    });
    $("summary").textContent = n + " point" + (n === 1 ? "" : "s") + " in " + list.length + " config group" + (list.length === 1 ? "" : "s") + ".";
    table(list);
    window.explorerView = { list: list, state: state };
  }

  function setState(change) {
    state = Object.assign({}, state, change);
    const hash = X.stateHash(state, data);
    if (hash !== location.hash && !(hash === "" && location.hash === "")) location.hash = hash || "#";
    else draw();
  }

  function download(name, text) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
  }

  function costsTable() {
    const body = $("costs").querySelector("tbody");
    const used = Array.from(new Set(decoded.series.map((s) => s.cost_hw))).filter((h) => h).sort();
    for (const hw of used) {
      const e = costs.hardware[hw], tr = document.createElement("tr");
      const cell = (t) => { const td = document.createElement("td"); td.textContent = t; tr.appendChild(td); return td; };
      cell(hw);
      cell(costs.tiers.map((t) => (e.usd[t.id] ? t.name + " $" + e.usd[t.id].value : "")).join("; "));
      for (const [kind, file] of [["usd", (e.usd[costs.tiers[0].id] || {}).value], ["kw", e.kw.value]]) {
        const input = document.createElement("input");
        Object.assign(input, { type: "number", step: "0.01", min: "0.01", id: kind + "-" + hw });
        input.setAttribute("aria-label", (kind === "usd" ? "your $/GPU-hr for " : "kW per GPU for ") + hw);
        Object.assign(input.dataset, { hw: hw, kind: kind, file: String(file) });
        input.addEventListener("change", () => {
          const v = Number(input.value), own = Object.assign({}, state[kind]);
          if (Number.isFinite(v) && v > 0 && v !== file) own[hw] = v; else delete own[hw];
          setState({ [kind]: own });
        });
        cell("").appendChild(input);
      }
      cell(Object.values(e.usd).concat([e.kw]).map((s) => s.source + " (" + s.date + ")")
        .filter((t, i, a) => a.indexOf(t) === i).join("; "));
      body.appendChild(tr);
    }
    if (!used.length) $("costs-note").textContent = "No staged hardware has costs in the costs file.";
  }

  fillControls();
  costsTable();
  for (const k of ["x", "y", "run"].concat(X.FILTERS)) $(k).addEventListener("change", (ev) => setState({ [k]: ev.target.value }));
  for (const k of ["frontier", "all", "log", "labels"]) $(k).addEventListener("change", (ev) => setState({ [k]: ev.target.checked }));
  $("reset").addEventListener("click", () => setState(X.defaultState(data)));
  $("csv").addEventListener("click", () => download("explorer.csv", X.csv(window.explorerView.list, state, decoded.runs)));
  $("png").addEventListener("click", () => Plotly.downloadImage(chart, { format: "png", filename: "explorer", width: 1280, height: 720 }));
  window.addEventListener("hashchange", () => { state = X.parseState(location.hash, data); syncControls(); draw(); });
  syncControls();
  draw();
})();
