// The trends, calculator and evals page: tabs, controls, one plotly chart, its table, exports.
// The logic is in trends-core.js (and explorer-core.js); the view in the URL fragment.
(function () {
  "use strict";
  const X = window.InfersweepExplorer, T = window.InfersweepTrends;
  const data = window.INFERSWEEP_EXPLORER_DATA, evals = window.INFERSWEEP_EVALS_DATA;
  const decoded = X.decode(data), costs = data.costs, runs = decoded.runs;
  const Y = X.yMetrics(costs.tiers);
  // Okabe and Ito's colour-blind-safe palette, as the explorer's; a symbol per eight groups
  const COLOURS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
    "#000000", "#F0E442"];
  const SYMBOLS = ["circle", "square", "diamond", "triangle-up", "cross", "x", "star",
    "triangle-down"];
  const NOTES = {
    trends: "A metric at the target interactivity, read off each config's Pareto frontier in every staged run, over the runs' dates.",
    calculator: "A metric at the target interactivity for each config, from the newest run of each config (or the run chosen), and the ratio of any two.",
    evals: "Accuracy per config with its standard error, against the threshold that judges it.",
  };
  const chart = document.getElementById("chart");
  const $ = (id) => document.getElementById(id);
  let state = T.parseState(location.hash, data, decoded);
  let shown = null;  // what the chart draws now: its view, CSV and rows (tests read it)

  function option(select, value, text) {
    const o = document.createElement("option");
    o.value = value; o.textContent = text;
    select.appendChild(o);
  }

  function fmt(v) {
    if (v === null || v === undefined) return "";
    const a = Math.abs(v);
    return a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(2) : v.toPrecision(3);
  }

  const esc = (t) => String(t).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

  function fillControls() {
    for (const [k, m] of Object.entries(Y)) option($("y"), k, m.label);
    option($("run"), "newest", "newest run of each config");
    option($("run"), "all", "every run");
    for (let i = runs.id.length - 1; i >= 0; i--) {
      option($("run"), X.runKey(runs, i), runs.label[i] + " · " + runs.date[i]);
    }
    for (const f of X.FILTERS) {
      option($(f), "", "(all)");
      const seen = new Set(decoded.series.map((s) => s[f]));
      for (const v of Array.from(seen).sort()) if (v !== "") option($(f), v, v);
    }
    option($("task"), "", "(all)");
    for (const t of evals.tasks) option($("task"), t, t);
    const hws = Array.from(new Set(decoded.series.map((s) => s.cost_hw))).filter((h) => h).sort();
    for (const hw of hws) {
      for (const [kind, unit] of [["usd", "$/GPU-hr"], ["kw", "kW"]]) {
        const entry = costs.hardware[hw];
        const file = kind === "usd" ? (entry.usd[(costs.tiers[0] || {}).id] || {}).value : entry.kw.value;
        const label = document.createElement("label"), input = document.createElement("input");
        Object.assign(input, { type: "number", step: "0.01", min: "0.01", id: kind + "-" + hw });
        Object.assign(input.dataset, { hw: hw, kind: kind, file: String(file) });
        input.addEventListener("change", () => {
          const v = Number(input.value), own = Object.assign({}, state[kind]);
          if (Number.isFinite(v) && v > 0 && v !== file) own[hw] = v; else delete own[hw];
          setState({ [kind]: own });
        });
        label.append(hw + " " + unit + " ", input);
        $("costs-box").appendChild(label);
      }
    }
    if (!hws.length) $("costs-box").append("No staged hardware has costs in the costs file.");
  }

  // a select's options from a list (the ratio's configs change with the filters)
  function refill(select, values, empty) {
    select.textContent = "";
    option(select, "", empty);
    for (const v of values) option(select, v, v);
  }

  function syncControls() {
    for (const k of ["y", "run", "task"].concat(X.FILTERS)) {
      const el = $(k);
      if (![...el.options].some((o) => o.value === state[k])) option(el, state[k], state[k] + " (none)");
      el.value = state[k];
    }
    $("target").value = String(state.target);
    for (const input of document.querySelectorAll("input[data-hw]")) {
      const own = state[input.dataset.kind][input.dataset.hw];
      input.value = own !== undefined ? own : input.dataset.file;
    }
    for (const v of T.VIEWS) {
      $("tab-" + v).setAttribute("aria-selected", String(v === state.view));
    }
    const evalView = state.view === "evals";
    $("value-box").hidden = evalView;
    $("costs-box").hidden = evalView;
    $("run-box").hidden = state.view === "trends";
    $("task-box").hidden = !evalView;
    $("ratio-box").hidden = state.view !== "calculator";
    $("view-note").textContent = NOTES[state.view];
  }

  function rangeText(e) {
    return e.lo === null ? "no frontier" : "out of range (frontier " + fmt(e.lo) + "–" + fmt(e.hi) + " tok/s/user)";
  }

  function colourOf(i) {
    return { color: COLOURS[i % COLOURS.length], symbol: SYMBOLS[Math.floor(i / COLOURS.length) % SYMBOLS.length] };
  }

  function hoverOf(name, e, extra) {
    const pv = T.provenance(e.frontier);
    return [esc(name), extra, Y[state.y].label + ": " + fmt(e.value) + " at " + state.target + " tok/s/user",
      "frontier " + fmt(e.lo) + "–" + fmt(e.hi) + " tok/s/user, " + e.frontier.length + " points",
      "configs " + esc(pv.configs)].join("<br>");
  }

  // a tick a day over a fortnight or less (plotly would mark hours), else plotly's own
  function dayTicks(series) {
    const days = series.flatMap((s) => s.rows.map((e) => Date.parse(runs.date[e.run]))).filter(Number.isFinite);
    return days.length && Math.max(...days) - Math.min(...days) <= 14 * 864e5 ? 864e5 : undefined;
  }

  function trendsView() {
    const series = T.trends(decoded, state, costs), traces = [], rows = [];
    series.forEach((s, i) => {
      const ok = s.rows.filter((e) => e.value !== null), look = colourOf(i);
      traces.push({ type: "scatter", mode: "lines+markers", name: esc(s.name),
        x: ok.map((e) => runs.date[e.run]), y: ok.map((e) => e.value),
        hovertext: ok.map((e) => hoverOf(s.name, e, "run " + esc(runs.label[e.run]) + " (" + runs.date[e.run] + ")")),
        hoverinfo: "text", marker: { color: look.color, symbol: look.symbol, size: 9 },
        line: { color: look.color, width: 2 } });
      for (const e of s.rows) {
        rows.push({ cells: [s.name, runs.label[e.run], runs.date[e.run],
          e.value === null ? rangeText(e) : fmt(e.value), fmt(e.lo) + "–" + fmt(e.hi),
          T.provenance(e.frontier).configs], cls: e.value === null ? "out" : "" });
      }
    });
    const n = rows.filter((r) => !r.cls).length;
    return { traces: traces, rows: rows, n: n,
      head: ["config group", "run", "date", Y[state.y].label, "frontier interactivity", "configs"],
      layout: { xaxis: { title: { text: "run date" }, type: "date", tickformat: "%Y-%m-%d", dtick: dayTicks(series) },
        yaxis: { title: { text: Y[state.y].label }, rangemode: "tozero" } },
      summary: n + " value" + (n === 1 ? "" : "s") + " of " + series.length + " config group" + (series.length === 1 ? "" : "s") +
        " over " + new Set(series.flatMap((s) => s.rows.map((e) => e.run))).size + " run(s) at " + state.target +
        " tok/s/user; " + (rows.length - n) + " out of range.",
      csv: () => T.trendsCsv(series, state, runs), data: series };
  }

  function calculatorView() {
    const bars = T.calculator(decoded, state, costs), names = bars.map((e) => e.name);
    for (const k of ["a", "b"]) {
      refill($(k), names, k === "a" ? "(pick config A)" : "(pick config B)");
      if (state[k] && !names.includes(state[k])) option($(k), state[k], state[k] + " (none)");
      $(k).value = state[k];
    }
    const r = T.ratio(bars, state.a, state.b);
    $("ratio").textContent = r.value === null ? r.why
      : "A ÷ B = " + r.value.toFixed(2) + "× (" + fmt(bars.find((e) => e.name === state.a).value) + " ÷ " +
        fmt(bars.find((e) => e.name === state.b).value) + ")";
    const ok = bars.filter((e) => e.value !== null), out = bars.filter((e) => e.value === null);
    const mark = (e) => (e.name === state.a ? "A " : e.name === state.b ? "B " : "");
    const traces = [{ type: "bar", name: Y[state.y].label, x: ok.map((e) => esc(e.name)), y: ok.map((e) => e.value),
      text: ok.map((e) => mark(e) + fmt(e.value)), textposition: "outside", hoverinfo: "text",
      hovertext: ok.map((e) => hoverOf(e.name, e, "")),
      marker: { color: ok.map((e) => colourOf(names.indexOf(e.name)).color),
        line: { color: "#000", width: ok.map((e) => (mark(e) ? 3 : 0)) } } }];
    if (out.length) {
      traces.push({ type: "scatter", mode: "text", name: "out of range", x: out.map((e) => esc(e.name)),
        y: out.map(() => 0), text: out.map(() => "out of range"), textposition: "top center",
        hoverinfo: "text", hovertext: out.map(rangeText), showlegend: false });
    }
    const rows = bars.map((e) => ({ cells: [(mark(e) ? mark(e).trim() + ": " : "") + e.name,
      e.value === null ? rangeText(e) : fmt(e.value), fmt(e.lo) + "–" + fmt(e.hi),
      T.provenance(e.frontier).configs,
      Array.from(new Set(e.frontier.map((f) => runs.label[f.p.s.run]))).join(", ")],
    cls: e.value === null ? "out" : "" }));
    return { traces: traces, rows: rows, n: ok.length,
      head: ["config group", Y[state.y].label, "frontier interactivity", "configs", "runs"],
      layout: { xaxis: { automargin: true }, yaxis: { title: { text: Y[state.y].label }, rangemode: "tozero" }, showlegend: false },
      summary: ok.length + " of " + bars.length + " config group" + (bars.length === 1 ? "" : "s") + " at " +
        state.target + " tok/s/user" + (out.length ? "; out of range: " + out.map((e) => e.name).join(", ") : "") + ".",
      csv: () => T.calculatorCsv(bars, state, runs), data: bars };
  }

  function result(e) {
    if (e.passed === true) return "pass";
    if (e.passed === false) return "FAIL: below " + e.threshold;
    return "not judged";
  }

  function seFrom(e) {
    const a = e.strict.se_from || "none", b = e.flexible.se_from || "none";
    return a === b ? a : "strict-match " + a + ", flexible-extract " + b;
  }

  function evalsView() {
    const list = T.evalRows(evals, decoded, state);
    const labels = [], seen = {};
    for (const e of list) {
      let l = state.run === "newest" ? e.config : e.config + " · " + runs.label[e.run];
      if (e.task && !state.task && evals.tasks.length > 1) l += " · " + e.task;
      seen[l] = (seen[l] || 0) + 1;
      labels.push(seen[l] > 1 ? l + " (" + seen[l] + ")" : l);
    }
    const cats = labels.map(esc);  // plotly reads a category as HTML of its own
    const bar = (k, name, colour) => ({ type: "bar", name: name, x: cats,
      y: list.map((e) => e[k].value), marker: { color: colour },
      error_y: { type: "data", array: list.map((e) => e[k].se || 0), visible: true, color: "#333" },
      hoverinfo: "text", hovertext: list.map((e, i) => esc(labels[i]) + "<br>" + name + " " +
        fmt(e[k].value) + " ± " + fmt(e[k].se) + " (" + e[k].se_from + " SE, n " + e.n + ")<br>" + result(e)) });
    const traces = [bar("strict", "strict-match", "#0072B2"), bar("flexible", "flexible-extract", "#E69F00")];
    const judged = list.filter((e) => e.threshold !== null && e.threshold !== undefined);
    if (judged.length) {
      traces.push({ type: "scatter", mode: "lines+markers", name: "threshold",
        x: cats, y: list.map((e) => e.threshold),
        line: { color: "#D55E00", dash: "dash", width: 2, shape: "hvh" },
        marker: { symbol: "line-ew-open", size: 40, color: "#D55E00", line: { width: 3, color: "#D55E00" } },
        hoverinfo: "text", hovertext: list.map((e) => "threshold " + e.threshold + " (" + esc(e.threshold_source) + ")") });
    }
    const failing = list.map((e, i) => [e, i]).filter(([e]) => e.passed === false);
    if (failing.length) {
      const top = (e) => Math.max(...["strict", "flexible"].map((k) => (e[k].value || 0) + (e[k].se || 0)));
      traces.push({ type: "scatter", mode: "markers+text", name: "fails its threshold",
        x: failing.map(([, i]) => cats[i]), y: failing.map(([e]) => top(e) + 0.04),
        text: failing.map(() => "FAIL"), textposition: "top center", textfont: { color: "#000", size: 14 },
        marker: { symbol: "x-thin-open", size: 16, color: "#000", line: { width: 3, color: "#000" } },
        hoverinfo: "text", hovertext: failing.map(([e]) => result(e)) });
    }
    const pm = (s) => fmt(s.value) + (s.se === null ? "" : " ± " + fmt(s.se));
    const rows = list.map((e, i) => ({ cells: [labels[i], runs.label[e.run], runs.date[e.run], e.task, e.n,
      pm(e.strict), pm(e.flexible), seFrom(e), e.threshold === null ? "" : e.threshold + " (" + e.threshold_source + ")",
      result(e)], cls: e.passed === false ? "fail" : e.passed === true ? "pass" : "" }));
    const nFail = failing.length;
    return { traces: traces, rows: rows, n: list.length,
      head: ["config", "run", "date", "task", "questions", "strict-match", "flexible-extract", "standard error from", "threshold", "result"],
      layout: { barmode: "group", xaxis: { automargin: true }, yaxis: { title: { text: "exact match (accuracy)" }, range: [0, 1.1] } },
      summary: list.length + " eval" + (list.length === 1 ? "" : "s") + ", " + nFail + " failing" +
        (evals.judged ? "." : "; no thresholds file was given, so none is judged."),
      csv: () => T.evalsCsv(list, runs), data: list };
  }

  function table(v) {
    const head = $("table").querySelector("thead"), body = $("table").querySelector("tbody");
    head.textContent = ""; body.textContent = "";
    const tr = document.createElement("tr");
    for (const h of v.head) { const th = document.createElement("th"); th.textContent = h; tr.appendChild(th); }
    head.appendChild(tr);
    for (const r of v.rows) {
      const row = document.createElement("tr");
      if (r.cls) row.className = r.cls;
      for (const c of r.cells) {
        const td = document.createElement("td");
        td.textContent = c === null || c === undefined ? "" : String(c);
        row.appendChild(td);
      }
      body.appendChild(row);
    }
    $("table-note").textContent = v.rows.length + " row" + (v.rows.length === 1 ? "" : "s") + "; the CSV has the provenance as well.";
  }

  function draw() {
    const v = { trends: trendsView, calculator: calculatorView, evals: evalsView }[state.view]();
    const layout = Object.assign({ height: 520, margin: { l: 70, r: 20, t: 30, b: 80 },
      hovermode: "closest", legend: { orientation: "h", y: -0.25 } }, v.layout);
    shown = { view: state.view, state: state, data: v.data, csv: v.csv, n: v.n };
    window.trendsView = shown;
    const mine = shown;
    Plotly.react(chart, v.traces, layout, { displaylogo: false, responsive: true }).then(() => {
      if (shown !== mine) return;  // a newer view is being drawn
      chart.dataset.view = state.view;
      chart.dataset.values = String(v.n);
      chart.dataset.rendered = "yes";
      if (window.performance && performance.mark) performance.mark("trends-drawn");
    });
    $("summary").textContent = v.summary;
    $("table-title").textContent = { trends: "Values over time", calculator: "Values per config", evals: "Evals" }[state.view];
    table(v);
    $("to-explorer").href = $("to-explorer").getAttribute("href").split("#")[0] +
      X.stateHash(Object.assign({}, state, { x: "intvty", log: false }), data);
  }

  function setState(change) {
    state = Object.assign({}, state, change);
    const hash = T.stateHash(state, data, decoded);
    if (hash !== location.hash && !(hash === "" && location.hash === "")) location.hash = hash || "#";
    else { syncControls(); draw(); }
  }

  fillControls();
  for (const v of T.VIEWS) $("tab-" + v).addEventListener("click", () => setState({ view: v }));
  for (const k of ["y", "run", "task", "a", "b"].concat(X.FILTERS)) {
    $(k).addEventListener("change", (ev) => setState({ [k]: ev.target.value }));
  }
  $("target").addEventListener("change", () => {
    const t = Number($("target").value);
    if (Number.isFinite(t) && t > 0) setState({ target: t }); else $("target").value = String(state.target);
  });
  $("reset").addEventListener("click", () => setState(T.defaultState(data, decoded)));
  $("csv").addEventListener("click", () => X.download(shown.view + ".csv", shown.csv()));
  $("png").addEventListener("click", () => Plotly.downloadImage(chart, { format: "png", filename: shown.view, width: 1280, height: 720 }));
  window.addEventListener("hashchange", () => { state = T.parseState(location.hash, data, decoded); syncControls(); draw(); });
  syncControls();
  draw();
})();
