// The explorer page: controls, the plotly charts, the tables, costs, exports. The logic is in
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
  const GL_POINTS = 3000;  // more points than this are drawn by WebGL (scattergl)
  const PLOT_CONFIG = { displaylogo: false, responsive: true };
  const chart = document.getElementById("explorer-chart");
  const hitsChart = document.getElementById("hits-chart");
  const $ = (id) => document.getElementById(id);
  let state = X.parseState(location.hash, data);

  // plotly: the page loads the small bundle (SVG traces); the whole one, with WebGL, is loaded
  // the first time a view has more than GL_POINTS points (its script's data-full names it)
  let plotly = window.Plotly;
  let fullBundle = ($("plotly-js") || { dataset: {} }).dataset.full;
  let loadingFull = false;

  function loadFullBundle() {
    if (loadingFull) return;
    loadingFull = true;
    $("summary").textContent = "Loading the WebGL renderer for this many points…";
    const el = document.createElement("script");
    el.charset = "utf-8";
    el.src = fullBundle;
    el.onload = () => {
      for (const c of [chart, hitsChart]) plotly.purge(c);  // drawn by the small bundle
      plotly = window.Plotly;
      fullBundle = undefined;
      draw();
    };
    el.onerror = () => { $("summary").textContent = "Could not load " + fullBundle + "."; };
    document.head.appendChild(el);
  }

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
      const values = decoded.columns[f] ? decoded.columns[f].values : [];
      for (const v of values.slice().sort()) if (v !== "") option($(f), v, v);
    }
    if (decoded.columns.seq && decoded.columns.seq.values.includes(X.AGENTIC)) $("agentic-link").hidden = false;
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

  function pct(v) {
    return v === null || v === undefined ? "" : (v * 100).toFixed(1) + "%";
  }

  const esc = (t) => String(t).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const LOCAL = "local, not publishable";

  function hover(e) {
    const s = e.p.s, r = decoded.runs;
    return [esc(s.config) + (s.local ? " (" + LOCAL + ")" : ""),
      "topology " + esc(s.topology) + " · conc " + e.p.conc,
      "image " + esc(s.image), "recipe " + esc(s.fingerprint.slice(0, 12)),
      "run " + esc(r.label[s.run]) + " (" + esc(r.date[s.run]) + ") · job " + esc(s.job),
      "x " + fmt(e.x) + " · y " + fmt(e.y) +
        (state.y === "jpt" ? (e.p.jpt_measured > 0 ? " (measured)" : " (provisioned)") : "")
    ].join("<br>");
  }

  function traces(list) {
    const out = [], showAll = state.all || !state.frontier;
    const total = list.reduce((n, g) => n + g.points.length, 0);
    const type = total > GL_POINTS ? "scattergl" : "scatter";
    list.forEach((g, i) => {
      const colour = COLOURS[i % COLOURS.length], symbol = SYMBOLS[Math.floor(i / COLOURS.length) % SYMBOLS.length];
      const mk = (rows, mode, extra) => Object.assign({
        type: type, mode: mode + (state.labels ? "+text" : ""), name: esc(g.name), legendgroup: g.name,
        x: rows.map((e) => e.x), y: rows.map((e) => e.y), text: rows.map((e) => String(e.p.conc)),
        textposition: "top center", hovertext: rows.map(hover), hoverinfo: "text",
        // a local (not publishable) agentic result: an open marker
        marker: { color: colour, size: 8, symbol: rows.map((e) => (e.p.s.local ? symbol + "-open" : symbol)) },
        line: { color: colour, width: 2 },
      }, extra);
      if (showAll) out.push(mk(g.points, "markers", {}));
      if (state.frontier) {
        out.push(mk(g.frontier, showAll ? "lines" : "lines+markers",
          showAll ? { showlegend: false, hoverinfo: "skip", text: [] } : {}));
      }
    });
    return out;
  }

  function cells(tr, values) {
    for (const v of values) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
  }

  // a table of the first TABLE_ROWS rows (the CSV has them all)
  function fillTable(id, noteId, rows, rowCells) {
    const body = $(id).querySelector("tbody");
    body.textContent = "";
    for (const row of rows.slice(0, TABLE_ROWS)) {
      const tr = document.createElement("tr");
      cells(tr, rowCells(row));
      if (row.local) tr.className = "local";
      body.appendChild(tr);
    }
    $(noteId).textContent = rows.length > TABLE_ROWS
      ? "The first " + TABLE_ROWS + " of " + rows.length + " rows; the CSV has them all." : rows.length + " rows.";
  }

  function table(list) {
    const rows = [];
    for (const g of list) {
      for (const e of (state.frontier && !state.all ? g.frontier : g.points)) rows.push({ g: g, e: e, local: e.p.s.local });
    }
    rows.sort((a, b) => (a.g.name < b.g.name ? -1 : a.g.name > b.g.name ? 1 : a.e.x - b.e.x));
    const r = decoded.runs;
    fillTable("points", "table-note", rows, ({ g, e }) => [e.p.s.config, g.name, e.p.s.topology,
      e.p.s.seq, e.p.conc, fmt(e.x), fmt(e.y), r.label[e.p.s.run], r.date[e.p.s.run], e.p.s.image]);
    $("x-head").textContent = X.X_METRICS[state.x].label;
    $("y-head").textContent = Y[state.y].label;
  }

  // the agentic view's second chart: cache hit rates per concurrency, a line per run, config,
  // KV-offload mode (a colour) and rate (a dash), and its table
  function drawHits(points) {
    const hits = X.hitRates(points), r = decoded.runs, colour = new Map();
    const data = hits.map((h) => {
      if (!colour.has(h.line)) colour.set(h.line, COLOURS[colour.size % COLOURS.length]);
      const name = h.s.config + " · " + h.s.topology + " · " + r.label[h.s.run] + " · " + h.label;
      return {
        type: "scatter", mode: "lines+markers", name: esc(name), x: h.points.map((p) => p.conc),
        y: h.points.map((p) => p[h.key] * 100), hoverinfo: "text",
        hovertext: h.points.map((p) => esc(name) + "<br>conc " + p.conc + ": " + pct(p[h.key]) +
          (p.s.local ? "<br>" + LOCAL : "")),
        marker: { color: colour.get(h.line), size: 8,
          symbol: h.points.map((p) => (p.s.local ? "circle-open" : "circle")) },
        line: { color: colour.get(h.line), dash: h.dash, width: 1.5 },
      };
    });
    const layout = {
      height: 480, margin: { l: 70, r: 20, t: 20, b: 60 }, hovermode: "closest",
      xaxis: { title: { text: "Concurrency (live sessions)" }, type: "log" },
      yaxis: { title: { text: "Hit rate (%)" }, range: [0, 100] },
      legend: { orientation: "h", y: -0.2 },
    };
    window.explorerView.hits = hits;
    const rows = X.hitPoints(hits).map((p) => ({ p: p, local: p.s.local }));
    fillTable("hits", "hits-note", rows, ({ p }) => [p.s.config, p.s.topology, r.label[p.s.run],
      r.date[p.s.run], p.conc, pct(p.gpu_hit), pct(p.cpu_hit), pct(p.theory_hit), pct(p.kv_usage),
      p.s.local ? LOCAL : "yes"]);
    return plotly.react(hitsChart, data, layout, PLOT_CONFIG).then(() => {
      hitsChart.dataset.points = String(data.reduce((n, t) => n + t.x.length, 0));
    });
  }

  // the trends page shares the explorer's fragment keys: it opens on this view
  const trendsLink = $("trends-link"), trendsPage = trendsLink.getAttribute("href");

  function draw() {
    trendsLink.setAttribute("href", trendsPage + location.hash);
    const points = X.select(decoded, state), agentic = X.isAgentic(state);
    const list = X.groups(points, state, costs);
    const n = list.reduce((k, g) => k + (state.all || !state.frontier ? g.points.length : g.frontier.length), 0);
    window.explorerView = { list: list, state: state, hits: [] };
    const t = traces(list);
    delete chart.dataset.rendered;
    if (fullBundle && t.some((tr) => tr.type === "scattergl")) {
      loadFullBundle();  // draws again once it is there
      return;
    }
    const layout = {
      height: 560, margin: { l: 70, r: 20, t: 20, b: 60 }, hovermode: "closest",
      xaxis: { title: { text: X.X_METRICS[state.x].label }, type: state.log ? "log" : "linear" },
      yaxis: { title: { text: Y[state.y].label }, type: state.log ? "log" : "linear" },
      legend: { orientation: "h", y: -0.2 },
    };
    $("agentic").hidden = !agentic;
    $("agentic-note").hidden = !agentic;
    const hitsDrawn = agentic ? drawHits(points) : Promise.resolve(plotly.purge(hitsChart));
    Promise.all([plotly.react(chart, t, layout, PLOT_CONFIG), hitsDrawn]).then(() => {
      chart.dataset.points = String(n);
      chart.dataset.rendered = "yes";
      if (window.performance && performance.mark) performance.mark("explorer-drawn");
    });
    $("summary").textContent = n + " point" + (n === 1 ? "" : "s") + " in " + list.length + " config group" + (list.length === 1 ? "" : "s") + ".";
    table(list);
  }

  function setState(change) {
    state = Object.assign({}, state, change);
    const hash = X.stateHash(state, data);
    if (hash !== location.hash && !(hash === "" && location.hash === "")) location.hash = hash || "#";
    else draw();
  }

  function costsTable() {
    const body = $("costs").querySelector("tbody");
    const used = (decoded.columns.cost_hw ? decoded.columns.cost_hw.values : []).filter((h) => h).sort();
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

  function png(el, name) {
    plotly.downloadImage(el, { format: "png", filename: name, width: 1280, height: 720 });
  }

  fillControls();
  costsTable();
  for (const k of ["x", "y", "run"].concat(X.FILTERS)) $(k).addEventListener("change", (ev) => setState({ [k]: ev.target.value }));
  for (const k of ["frontier", "all", "log", "labels"]) $(k).addEventListener("change", (ev) => setState({ [k]: ev.target.checked }));
  $("reset").addEventListener("click", () => setState(X.defaultState(data)));
  $("csv").addEventListener("click", () => X.download("explorer.csv", X.csv(window.explorerView.list, state, decoded.runs)));
  $("png").addEventListener("click", () => png(chart, "explorer"));
  $("csv-hits").addEventListener("click", () => X.download("explorer-cache-hits.csv", X.hitsCsv(window.explorerView.hits, decoded.runs)));
  $("png-hits").addEventListener("click", () => png(hitsChart, "explorer-cache-hits"));
  window.addEventListener("hashchange", () => { state = X.parseState(location.hash, data); syncControls(); draw(); });
  syncControls();
  draw();
})();
