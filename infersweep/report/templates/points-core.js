// A run's page and a config's page without the DOM: their points read from the explorer's
// data (explorer-data.js, decoded by explorer-core.js), the table's rows, the charts of
// throughput per GPU against interactivity with each run's Pareto frontier across its
// topologies, and their plotly traces. node runs it in tests/unit/report/test_points_js.py;
// points.js draws.
(function (root) {
  "use strict";

  const FIXED = "fixed-seq-len";  // the series' kind of a fixed ISL/OSL point (not agentic)
  // one colour per run (by staging time, cycling), one marker symbol per topology in a chart;
  // Okabe and Ito's colour-blind-safe palette, as in the explorer
  const COLOURS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
    "#000000", "#F0E442"];
  const SYMBOLS = ["circle", "square", "diamond", "triangle-up", "x", "cross", "star",
    "hexagon", "triangle-down", "pentagon"];

  // plotly renders a subset of HTML in names and hover texts: text is escaped first
  function escapeText(v) {
    return String(v).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  // the run's index in the data from its "<run id>-<attempt>", or -1
  function runIndex(decoded, key) {
    const r = decoded.runs;
    for (let i = 0; i < r.id.length; i++) if (r.id[i] + "-" + r.attempt[i] === key) return i;
    return -1;
  }

  // a point of the data as a table row (the fields of data.incomplete's rows)
  function rowOf(p, seqs) {
    const s = p.s, seq = seqs[s.seq] || [null, null, 1], req = p.requests || [null, null];
    return { run: s.run, config: s.config, recipe: s.recipe, topology: s.topology,
      isl: seq[0], osl: seq[1], scale_down: seq[2], conc: p.conc, tput: p.tput,
      tput_out: p.tput_out, intvty: p.intvty, intvty99: p.intvty99, ttft50: p.ttft50,
      tpot50: p.intvty > 0 ? 1 / p.intvty : null,  // interactivity is 1 / TPOT
      completed: req[0], prompts: req[1], successful: true, image: s.image,
      srt_commit: s.srt_commit, engine_rev: s.engine_rev, job: s.job,
      attempt: s.attempt === "" ? null : Number(s.attempt) };
  }

  function compare(a, b) {
    if (a === b) return 0;
    if (a === null || a === undefined) return -1;
    if (b === null || b === undefined) return 1;
    return a < b ? -1 : 1;
  }

  // by run (oldest first), config, recipe, topology, ISL, OSL, scale-down, concurrency,
  // attempt: the order of the tables
  const ROW_ORDER = ["run", "config", "recipe", "topology", "isl", "osl", "scale_down", "conc",
    "attempt"];
  function rowOrder(a, b) {
    for (const k of ROW_ORDER) {
      const c = compare(a[k], b[k]);
      if (c) return c;
    }
    return 0;
  }

  // the rows of a page: a run's (where.run: its index) or a config's (where.config: its key;
  // where.runs: a Set of the run indices to keep, else all), the fixed ISL/OSL points of the
  // series and those the explorer leaves out (unsuccessful, no ISL/OSL), in table order
  function rows(decoded, data, where) {
    const cols = decoded.columns, kind = cols.kind.values.indexOf(FIXED), out = [];
    const config = where.config === undefined ? -1 : cols.config.values.indexOf(where.config);
    const keep = (run, cfg) => (where.run === undefined || run === where.run) &&
      (where.config === undefined || cfg === where.config) &&
      (!where.runs || where.runs.has(run));
    if (kind >= 0 && (where.config === undefined || config >= 0)) {
      for (let k = 0; k < decoded.runOf.length; k++) {
        if (cols.kind.codes[k] !== kind) continue;
        if (config >= 0 && cols.config.codes[k] !== config) continue;
        if (!keep(decoded.runOf[k], where.config)) continue;
        for (const p of decoded.pointsOf(k)) out.push(rowOf(p, data.seqs || {}));
      }
    }
    for (const r of data.incomplete || []) if (keep(r.run, r.config)) out.push(r);
    return out.sort(rowOrder);
  }

  // the runs (indices) a config has points in, oldest first
  function configRuns(decoded, data, key) {
    const cols = decoded.columns, code = cols.config.values.indexOf(key), runs = new Set();
    for (let k = 0; k < decoded.runOf.length; k++) {
      if (cols.config.codes[k] === code) runs.add(decoded.runOf[k]);
    }
    for (const r of data.incomplete || []) if (r.config === key) runs.add(r.run);
    return Array.from(runs).sort((a, b) => a - b);
  }

  // a complete point with both numbers and an ISL/OSL (views.chart_sizes counts the same)
  function plottable(r) {
    return r.successful && Number.isFinite(r.tput) && Number.isFinite(r.intvty) &&
      r.isl !== null && r.osl !== null;
  }

  function chartTitle(c) {
    const t = "ISL " + c.isl + " / OSL " + c.osl;
    return c.scale_down === 1 ? t : t + " (scaled down " + c.scale_down + "×)";
  }

  // a chart per ISL/OSL and scale-down of the plottable rows: a series per run and topology
  // (points by concurrency), and per run its frontier across its topologies
  function charts(list) {
    const byChart = new Map();
    for (const r of list) {
      if (!plottable(r)) continue;
      const ck = [r.isl, r.osl, r.scale_down].join("\n");
      if (!byChart.has(ck)) byChart.set(ck, { isl: r.isl, osl: r.osl, scale_down: r.scale_down, rows: [] });
      byChart.get(ck).rows.push(r);
    }
    const out = Array.from(byChart.values()).sort((a, b) =>
      compare(a.isl, b.isl) || compare(a.osl, b.osl) || compare(a.scale_down, b.scale_down));
    for (const c of out) {
      const bySeries = new Map();
      for (const r of c.rows) {
        const sk = JSON.stringify([r.run, String(r.recipe), String(r.topology || "")]);
        if (!bySeries.has(sk)) bySeries.set(sk, { run: r.run, recipe: String(r.recipe), topology: String(r.topology || ""), points: [] });
        bySeries.get(sk).points.push(r);
      }
      c.series = Array.from(bySeries.values()).sort((a, b) =>
        a.run - b.run || compare(a.recipe, b.recipe) || compare(a.topology, b.topology));
      for (const s of c.series) s.points.sort((a, b) => compare(a.conc, b.conc) || compare(a.attempt, b.attempt));
      const byRun = new Map();
      for (const s of c.series) {
        if (!byRun.has(s.run)) byRun.set(s.run, []);
        byRun.get(s.run).push(...s.points);
      }
      c.frontiers = Array.from(byRun.entries()).sort((a, b) => a[0] - b[0]).map(([run, pts]) =>
        ({ run: run, points: root.InfersweepExplorer.frontier(pts, (r) => r.intvty, (r) => r.tput, true, true) }));
      c.title = chartTitle(c);
      c.points = c.rows.length;
      delete c.rows;
    }
    return out;
  }

  // a number at the 4 significant digits the data keeps, with thousands separators (`none`
  // where there is none)
  function fmt(v, scale, none) {
    if (v === null || v === undefined || !Number.isFinite(v)) return none === undefined ? "–" : none;
    return (v * (scale || 1)).toLocaleString("en-US", { maximumSignificantDigits: 4 });
  }

  function hover(r) {
    return escapeText(r.recipe) + "<br>conc " + r.conc + "<br>" + fmt(r.tput) + " tok/s/GPU<br>" +
      fmt(r.intvty) + " tok/s/user<br>TTFT " + fmt(r.ttft50, 1000) + " ms · TPOT " +
      fmt(r.tpot50, 1000) + " ms<br>job " + escapeText(r.job) + " · attempt " + r.attempt;
  }

  // a chart's plotly traces: a marker trace per series, a dashed frontier line per run
  function traces(chart, runs) {
    const out = [], symbols = new Map();
    for (const s of chart.series) {
      const topo = s.topology || s.recipe;
      if (!symbols.has(topo)) symbols.set(topo, SYMBOLS[symbols.size % SYMBOLS.length]);
      out.push({ type: "scatter", mode: "markers", name: escapeText(runs.label[s.run] + " · " + topo),
        legendgroup: "run" + s.run, x: s.points.map((r) => r.intvty), y: s.points.map((r) => r.tput),
        text: s.points.map(hover), hovertemplate: "%{text}<extra></extra>",
        marker: { color: COLOURS[s.run % COLOURS.length], symbol: symbols.get(topo), size: 9 } });
    }
    for (const f of chart.frontiers) {
      out.push({ type: "scatter", mode: "lines", name: escapeText(runs.label[f.run] + " · Pareto frontier"),
        legendgroup: "run" + f.run, hoverinfo: "skip", x: f.points.map((r) => r.intvty),
        y: f.points.map((r) => r.tput), line: { color: COLOURS[f.run % COLOURS.length], dash: "dash", width: 2 } });
    }
    return out;
  }

  // the table's columns: a heading, a row's cell as text (given the data's runs), numeric
  const num = (k, scale) => (r) => fmt(r[k], scale, "");
  const COLUMNS = [
    ["recipe", (r) => r.recipe], ["topology", (r) => r.topology], ["ISL", (r) => r.isl],
    ["OSL", (r) => r.osl], ["scale-down", (r) => r.scale_down], ["conc", (r) => r.conc],
    ["tok/s/GPU", num("tput"), true], ["output tok/s/GPU", num("tput_out"), true],
    ["tok/s/user (median)", num("intvty"), true], ["tok/s/user (p99)", num("intvty99"), true],
    ["TTFT median (ms)", num("ttft50", 1000), true], ["TPOT median (ms)", num("tpot50", 1000), true],
    ["completed", (r) => text(r.completed) + "/" + text(r.prompts)],
    ["successful", (r) => (r.successful ? "yes" : "no")], ["image", (r) => r.image],
    ["srt-slurm commit", (r) => r.srt_commit], ["engine revision", (r) => r.engine_rev],
    ["job id", (r) => r.job], ["run id", (r, runs) => runs.id[r.run]], ["attempt", (r) => r.attempt],
  ].map(([head, cell, numeric]) => ({ head: head, cell: (r, runs) => text(cell(r, runs)), num: !!numeric }));

  function text(v) {
    return v === null || v === undefined ? "" : String(v);
  }

  const api = { FIXED, COLOURS, SYMBOLS, COLUMNS, escapeText, runIndex, rows, rowOrder,
    configRuns, charts, traces, hover, fmt };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.InfersweepPoints = api;
})(typeof window !== "undefined" ? window : globalThis);
