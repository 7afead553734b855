// The trends, calculator and evals views without the page: a metric read off each config's
// Pareto frontier at a target interactivity (monotone cubic interpolation), per run over time
// and per config for the newest runs, the ratio of two configs, the evals joined to the
// explorer's filters, the view <-> URL fragment, CSV. Decoding, metrics, filters and frontiers
// are explorer-core.js's. No DOM here, so node runs it (tests/unit/report/test_trends_js.py).
(function (root, make) {
  "use strict";
  if (typeof module !== "undefined" && module.exports) {
    module.exports = make(require("./explorer-core.js"));
  } else {
    root.InfersweepTrends = make(root.InfersweepExplorer);
  }
})(typeof window !== "undefined" ? window : globalThis, function (X) {
  "use strict";

  const VIEWS = ["trends", "calculator", "evals"];
  const X_AXIS = "intvty";  // the target is an interactivity (tok/s/user)

  // Fritsch-Carlson slopes as PCHIP picks them: zero where the secant slopes change sign or
  // one is flat, else their weighted harmonic mean; the ends by the one-sided three-point
  // formula, held to the data's direction and to at most three times the end secant. The
  // cubic Hermite through these slopes never leaves [y_k, y_k+1] on a monotone segment.
  function pchipSlopes(xs, ys) {
    const n = xs.length, h = [], delta = [], d = new Array(n).fill(0);
    for (let k = 0; k < n - 1; k++) {
      h.push(xs[k + 1] - xs[k]);
      delta.push((ys[k + 1] - ys[k]) / h[k]);
    }
    if (n === 2) return [delta[0], delta[0]];
    for (let k = 1; k < n - 1; k++) {
      if (delta[k - 1] * delta[k] > 0) {
        const w1 = 2 * h[k] + h[k - 1], w2 = h[k] + 2 * h[k - 1];
        d[k] = (w1 + w2) / (w1 / delta[k - 1] + w2 / delta[k]);
      }
    }
    const end = (h0, h1, d0, d1) => {
      const s = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1);
      if (Math.sign(s) !== Math.sign(d0)) return 0;
      if (Math.sign(d0) !== Math.sign(d1) && Math.abs(s) > 3 * Math.abs(d0)) return 3 * d0;
      return s;
    };
    d[0] = end(h[0], h[1], delta[0], delta[1]);
    d[n - 1] = end(h[n - 2], h[n - 3], delta[n - 2], delta[n - 3]);
    return d;
  }

  // y at t on the monotone cubic through (xs, ys) (xs strictly increasing), clamped at zero;
  // null when t is outside [xs[0], xs[n-1]]: there is no extrapolation
  function interpolate(xs, ys, t) {
    const n = xs.length;
    if (n !== ys.length) throw new Error("interpolate: xs and ys differ in length");
    for (let k = 1; k < n; k++) {
      if (!(xs[k] > xs[k - 1])) throw new Error("interpolate: xs must be strictly increasing");
    }
    if (!n || !(t >= xs[0] && t <= xs[n - 1])) return null;
    if (n === 1) return Math.max(0, ys[0]);
    let k = 0;
    while (k < n - 2 && t > xs[k + 1]) k++;
    const d = pchipSlopes(xs, ys), h = xs[k + 1] - xs[k], u = (t - xs[k]) / h;
    const h00 = (1 + 2 * u) * (1 - u) * (1 - u), h10 = u * (1 - u) * (1 - u);
    const h01 = u * u * (3 - 2 * u), h11 = u * u * (u - 1);
    const y = h00 * ys[k] + h10 * h * d[k] + h01 * ys[k + 1] + h11 * h * d[k + 1];
    return Math.max(0, y);
  }

  // a frontier group (X.groups) read at the target: the value, or why there is none
  function atTarget(group, target) {
    const f = group.frontier;
    const lo = f.length ? f[0].x : null, hi = f.length ? f[f.length - 1].x : null;
    const value = interpolate(f.map((e) => e.x), f.map((e) => e.y), target);
    return { name: group.name, value: value, status: value === null ? "out of range" : "ok",
      lo: lo, hi: hi, frontier: f };
  }

  function metricState(st) {
    return Object.assign({}, st, { x: X_AXIS, log: false });
  }

  // per config group, its value at the target in every run that has it, oldest run first
  function trends(decoded, st, costs) {
    const byRun = new Map();
    for (const p of X.select(decoded, Object.assign({}, st, { run: "all" }))) {
      if (!byRun.has(p.s.run)) byRun.set(p.s.run, []);
      byRun.get(p.s.run).push(p);
    }
    const mst = metricState(st), series = new Map();
    for (const run of Array.from(byRun.keys()).sort((a, b) => a - b)) {
      for (const g of X.groups(byRun.get(run), mst, costs)) {
        if (!series.has(g.name)) series.set(g.name, { name: g.name, rows: [] });
        series.get(g.name).rows.push(Object.assign(atTarget(g, st.target), { run: run }));
      }
    }
    return Array.from(series.values()).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  // one bar per config group at the target, from the points the run choice keeps
  function calculator(decoded, st, costs) {
    const mst = metricState(st);
    return X.groups(X.select(decoded, mst), mst, costs).map((g) => atTarget(g, st.target));
  }

  // a / b of two bars by group name; null with why when it cannot be had
  function ratio(bars, a, b) {
    if (!a || !b) return { value: null, why: "pick two configs" };
    const va = bars.find((e) => e.name === a), vb = bars.find((e) => e.name === b);
    if (!va || !vb) return { value: null, why: "a config picked is not in this view" };
    if (va.value === null || vb.value === null) return { value: null, why: "out of range" };
    if (!(vb.value > 0)) return { value: null, why: "the second value is zero" };
    return { value: va.value / vb.value, why: "" };
  }

  // the default target: the median interactivity of the explorer's default view (the newest
  // run of each config of its model and sequence), to two significant digits, so most of
  // its frontiers reach it; worked out once, as every fragment read and written needs it
  const targets = new WeakMap();
  function defaultTarget(decoded, data) {
    if (targets.has(decoded)) return targets.get(decoded);
    const xs = Float64Array.from(X.select(decoded, X.defaultState(data)).filter((p) => p[X_AXIS] > 0),
      (p) => p[X_AXIS]).sort();
    const t = xs.length ? Number(xs[Math.floor(xs.length / 2)].toPrecision(2)) : 50;
    targets.set(decoded, t);
    return t;
  }

  function defaultState(data, decoded) {
    return Object.assign(X.defaultState(data), { view: "trends",
      target: defaultTarget(decoded, data), a: "", b: "", task: "" });
  }

  // the view from the fragment: the explorer's keys as it reads them, and ours
  function parseState(hash, data, decoded) {
    const st = X.parseState(hash, data);
    const d = defaultState(data, decoded);
    for (const k of ["view", "target", "a", "b", "task"]) st[k] = d[k];
    if (!(st.y in X.yMetrics(data.costs.tiers))) st.y = d.y;
    const q = new URLSearchParams((hash || "").replace(/^#/, ""));
    if (VIEWS.includes(q.get("view"))) st.view = q.get("view");
    const t = Number(q.get("target"));
    if (q.has("target") && Number.isFinite(t) && t > 0) st.target = t;
    for (const k of ["a", "b", "task"]) if (q.has(k)) st[k] = q.get(k);
    return st;
  }

  // the fragment: the explorer's part (so the link opens in the explorer too), then ours;
  // only what differs from the default
  function stateHash(st, data, decoded) {
    const d = defaultState(data, decoded);
    const q = new URLSearchParams(X.stateHash(metricState(st), data).replace(/^#/, ""));
    for (const k of ["view", "target", "a", "b", "task"]) if (st[k] !== d[k]) q.set(k, String(st[k]));
    const text = q.toString();
    return text ? "#" + text : "";
  }

  // the evals the view shows, each with its run's place and its config's filter attributes
  // (from the explorer's series of that config, that run's first); seq is the eval's own
  function evalRows(evals, decoded, st) {
    const runIndex = new Map(), bySeries = new Map();
    decoded.runs.id.forEach((_, i) => runIndex.set(X.runKey(decoded.runs, i), i));
    for (const s of decoded.series) {
      const k = s.config + "\u0000" + s.run;
      if (!bySeries.has(k)) bySeries.set(k, s);
      if (!bySeries.has(s.config)) bySeries.set(s.config, s);
    }
    let rows = [];
    for (const e of evals.rows) {
      const run = runIndex.get(e.run_id + "-" + e.attempt);
      if (run === undefined) continue;
      const s = bySeries.get(e.config + "\u0000" + run) || bySeries.get(e.config) || {};
      const attrs = {};
      for (const f of X.FILTERS) attrs[f] = s[f] === undefined ? "" : s[f];
      if (!attrs.model) attrs.model = e.model;
      attrs.seq = e.seq;  // an eval without a sequence is not filtered by it
      const keep = X.FILTERS.every((f) => !st[f] || attrs[f] === st[f] || (f === "seq" && !e.seq));
      if (keep && (!st.task || e.task === st.task)) rows.push(Object.assign({ run: run, attrs: attrs }, e));
    }
    if (st.run === "newest") {
      const newest = {};
      for (const r of rows) newest[r.config] = Math.max(newest[r.config] ?? -1, r.run);
      rows = rows.filter((r) => r.run === newest[r.config]);
    } else if (st.run !== "all") {
      rows = rows.filter((r) => X.runKey(decoded.runs, r.run) === st.run);
    }
    return rows.sort((a, b) => (a.config < b.config ? -1 : a.config > b.config ? 1 : a.run - b.run));
  }

  const IDENTITY = ["hw", "vendor", "framework", "precision", "spec", "disagg", "model", "seq"];

  // what stands behind a value: the distinct configs, images, recipes and jobs of its frontier
  function provenance(frontier) {
    const out = {};
    for (const [k, name] of [["config", "configs"], ["image", "images"],
      ["fingerprint", "fingerprints"], ["job", "jobs"]]) {
      out[name] = Array.from(new Set(frontier.map((e) => e.p.s[k]))).sort().join(" ");
    }
    return out;
  }

  function csvLines(head, rows) {
    return [head].concat(rows).map((r) => r.map(X.csvCell).join(",")).join("\n") + "\n";
  }

  const VALUE_HEAD = ["target_intvty", "status", "frontier_intvty_min", "frontier_intvty_max",
    "frontier_points", "configs", "images", "fingerprints", "jobs"];

  function valueCells(e, st) {
    const pv = provenance(e.frontier);
    return [st.target, e.status, e.lo, e.hi, e.frontier.length, pv.configs, pv.images,
      pv.fingerprints, pv.jobs];
  }

  function runCells(runs, run) {
    return [runs.id[run], runs.attempt[run], runs.date[run], runs.url ? runs.url[run] : ""];
  }

  // the trends chart's data: a line per config group and run
  function trendsCsv(series, st, runs) {
    const head = ["group", "run_id", "attempt", "run_date", "run_url", "y_" + st.y].concat(VALUE_HEAD);
    const rows = [];
    for (const s of series) {
      for (const e of s.rows) rows.push([s.name].concat(runCells(runs, e.run), [e.value], valueCells(e, st)));
    }
    return csvLines(head, rows);
  }

  // the calculator's bars: a line per config group, its runs among the provenance
  function calculatorCsv(bars, st, runs) {
    const head = ["group", "y_" + st.y].concat(VALUE_HEAD, ["run_ids"]);
    return csvLines(head, bars.map((e) => [e.name, e.value].concat(valueCells(e, st), [
      Array.from(new Set(e.frontier.map((f) => X.runKey(runs, f.p.s.run)))).sort().join(" ")])));
  }

  const EVAL_HEAD = ["config", "task", "n", "em_strict", "em_strict_se", "em_strict_se_from",
    "em_flexible", "em_flexible_se", "em_flexible_se_from", "threshold", "threshold_source",
    "result"];

  function evalResult(e) {
    return e.passed === true ? "pass" : e.passed === false ? "fail" : "not judged";
  }

  // the evals chart's data: a line per eval shown
  function evalsCsv(rows, runs) {
    const head = EVAL_HEAD.concat(IDENTITY, ["run_id", "attempt", "run_date", "fingerprint",
      "image", "job", "source"]);
    return csvLines(head, rows.map((e) => [e.config, e.task, e.n, e.strict.value, e.strict.se,
      e.strict.se_from, e.flexible.value, e.flexible.se, e.flexible.se_from, e.threshold,
      e.threshold_source, evalResult(e)].concat(IDENTITY.map((k) => e.attrs[k]), [runs.id[e.run], runs.attempt[e.run],
      runs.date[e.run], e.fingerprint, e.image, e.job, e.source])));
  }

  return { VIEWS, X_AXIS, interpolate, atTarget, trends, calculator, ratio, defaultTarget,
    defaultState, parseState, stateHash, evalRows, evalResult, provenance, trendsCsv,
    calculatorCsv, evalsCsv };
});
