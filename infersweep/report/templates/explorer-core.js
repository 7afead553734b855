// The explorer's logic without the page: the data decoded, metrics derived from costs and
// power, filters, Pareto frontiers, the view <-> URL fragment, CSV. No DOM here, so node
// runs it in the unit tests (tests/unit/report/test_explorer_js.py); explorer.js draws.
(function (root) {
  "use strict";

  // x metrics: better is higher (interactivity) or lower (latencies, kept in seconds)
  const X_METRICS = {
    intvty: { label: "Interactivity (tok/s/user, median)", higher: true },
    e2el: { label: "End-to-end latency (s, median)", higher: false },
    ttft50: { label: "TTFT p50 (s)", higher: false },
    ttft90: { label: "TTFT p90 (s)", higher: false },
    ttft99: { label: "TTFT p99 (s)", higher: false },
  };

  // y metrics; the cost ones are added per tier by yMetrics()
  function yMetrics(tiers) {
    const out = {
      tput: { label: "Throughput per GPU, total (tok/s/GPU)", higher: true },
      tput_in: { label: "Throughput per GPU, input (tok/s/GPU)", higher: true },
      tput_out: { label: "Throughput per GPU, output (tok/s/GPU)", higher: true },
    };
    const all = tiers.concat([{ id: "custom", name: "your $/GPU-hr" }]);
    for (const t of all) {
      out["cost_" + t.id] = { label: "Cost per million total tokens, " + t.name + " ($)",
        higher: false, tier: t.id };
    }
    for (const t of all) {
      out["tpd_" + t.id] = { label: "Tokens per dollar, " + t.name, higher: true, tier: t.id };
    }
    out.mw = { label: "Throughput per provisioned MW (tok/s/MW)", higher: true };
    out.jpt = { label: "Joules per token (measured where a run measured it, else provisioned)",
      higher: false };
    return out;
  }

  // every point as an object sharing its series' attributes (series columns decoded once)
  function decode(data) {
    const s = data.series, n = s.run.length, series = new Array(n);
    const names = Object.keys(s).filter((k) => k !== "run");
    for (let i = 0; i < n; i++) {
      const a = { index: i, run: s.run[i] };
      for (const k of names) a[k] = s[k].values[s[k].codes[i]];
      series[i] = a;
    }
    const p = data.points, points = new Array(p.series.length);
    const metrics = Object.keys(p).filter((k) => k !== "series");
    for (let i = 0; i < points.length; i++) {
      const o = { index: i, s: series[p.series[i]] };
      for (const m of metrics) o[m] = p[m][i];
      points[i] = o;
    }
    return { series: series, points: points, runs: data.runs };
  }

  // $/GPU-hr of a tier and provisioned kW for a hardware entry, the reader's numbers first
  function usdPerHour(costs, overrides, hw, tier) {
    if (tier === "custom") {
      const own = overrides.usd[hw];
      if (own !== undefined) return own;
      tier = (costs.tiers[0] || {}).id;
    }
    const e = costs.hardware[hw];
    return e && e.usd[tier] ? e.usd[tier].value : null;
  }

  function kwPerGpu(costs, overrides, hw) {
    if (overrides.kw[hw] !== undefined) return overrides.kw[hw];
    const e = costs.hardware[hw];
    return e ? e.kw.value : null;
  }

  // a y value: throughput as measured, the rest derived (null when it cannot be)
  function yValue(p, name, costs, overrides) {
    if (name === "tput" || name === "tput_in" || name === "tput_out") return p[name];
    const tput = p.tput;
    if (!(tput > 0)) return null;
    const hw = p.s.cost_hw;
    if (name.startsWith("cost_") || name.startsWith("tpd_")) {
      const usd = usdPerHour(costs, overrides, hw, name.slice(name.indexOf("_") + 1));
      if (!(usd > 0)) return null;
      const perMillion = usd / (tput * 3600 / 1e6);
      return name.startsWith("cost_") ? perMillion : 1e6 / perMillion;
    }
    if (name === "jpt" && p.jpt_measured > 0) return p.jpt_measured;
    const kw = kwPerGpu(costs, overrides, hw);
    if (!(kw > 0)) return null;
    if (name === "mw") return tput * 1000 / kw;
    if (name === "jpt") return kw * 1000 / tput;
    return null;
  }

  // the points no other beats on both axes (each axis better higher or lower), by x
  function frontier(points, xOf, yOf, xHigher, yHigher) {
    const sx = xHigher ? 1 : -1, sy = yHigher ? 1 : -1;
    const ordered = points.slice().sort((a, b) => sx * (xOf(b) - xOf(a)) || sy * (yOf(b) - yOf(a)));
    const out = [];
    let best = -Infinity;
    for (const p of ordered) {
      const y = sy * yOf(p);
      if (y > best) { out.push(p); best = y; }
    }
    return out.sort((a, b) => xOf(a) - xOf(b));
  }

  // the frontier group: hardware + framework + precision + speculative decoding
  function groupOf(s) {
    return [s.hw, s.framework, s.precision, s.spec].join(" · ");
  }

  const FILTERS = ["model", "seq", "precision", "hw", "vendor", "framework", "disagg", "spec"];
  const TOGGLES = { frontier: true, all: false, log: false, labels: false };

  function defaultState(data) {
    const d = data.defaults || {};
    const st = { y: "tput", x: "intvty", run: "newest", model: d.model || "", seq: d.seq || "",
      usd: {}, kw: {} };
    for (const f of FILTERS) if (!(f in st)) st[f] = "";
    return Object.assign(st, TOGGLES);
  }

  // the view from a fragment ("#y=cost_rental&seq=8k%2F1k&..."); anything unknown is ignored
  function parseState(hash, data) {
    const st = defaultState(data);
    const q = new URLSearchParams((hash || "").replace(/^#/, ""));
    for (const [k, v] of q) {
      if (k === "x" || k === "y" || k === "run" || FILTERS.includes(k)) st[k] = v;
      else if (k in TOGGLES) st[k] = v === "1";
      else if (k.startsWith("usd.") || k.startsWith("kw.")) {
        const n = Number(v), [kind, hw] = [k.slice(0, k.indexOf(".")), k.slice(k.indexOf(".") + 1)];
        if (Number.isFinite(n) && n > 0) st[kind][hw] = n;
      }
    }
    return st;
  }

  // the fragment of a view: only what differs from the default, in a fixed order
  function stateHash(st, data) {
    const d = defaultState(data), q = new URLSearchParams();
    for (const k of ["y", "x", "run"].concat(FILTERS)) if (st[k] !== d[k]) q.set(k, st[k]);
    for (const k of Object.keys(TOGGLES)) if (st[k] !== d[k]) q.set(k, st[k] ? "1" : "0");
    for (const kind of ["usd", "kw"]) {
      for (const hw of Object.keys(st[kind]).sort()) q.set(kind + "." + hw, String(st[kind][hw]));
    }
    const text = q.toString();
    return text ? "#" + text : "";
  }

  function runKey(runs, i) {
    return runs.id[i] + "-" + runs.attempt[i];
  }

  // the points a view shows: filters, then the run choice (newest of each config, all, one)
  function select(decoded, st) {
    let pts = decoded.points.filter((p) => FILTERS.every((f) => !st[f] || p.s[f] === st[f]));
    if (st.run === "newest") {
      const newest = {};
      for (const p of pts) newest[p.s.config] = Math.max(newest[p.s.config] ?? -1, p.s.run);
      pts = pts.filter((p) => p.s.run === newest[p.s.config]);
    } else if (st.run !== "all") {
      pts = pts.filter((p) => runKey(decoded.runs, p.s.run) === st.run);
    }
    return pts;
  }

  // per frontier group: its plotted points (x and y known) and its frontier
  function groups(points, st, costs) {
    const xm = X_METRICS[st.x] || X_METRICS.intvty, ym = yMetrics(costs.tiers)[st.y];
    const out = new Map();
    for (const p of points) {
      const x = p[st.x], y = yValue(p, st.y, costs, st);
      if (x === null || x === undefined || y === null || !Number.isFinite(y)) continue;
      if (st.log && (x <= 0 || y <= 0)) continue;
      const g = groupOf(p.s);
      if (!out.has(g)) out.set(g, { name: g, points: [] });
      out.get(g).points.push({ p: p, x: x, y: y });
    }
    const list = Array.from(out.values()).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const g of list) {
      g.frontier = frontier(g.points, (e) => e.x, (e) => e.y, xm.higher, ym ? ym.higher : true);
    }
    return list;
  }

  function csvCell(v) {
    const t = v === null || v === undefined ? "" : String(v);
    return /[",\n\r]/.test(t) || /^[=+\-@]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
  }

  const CSV_IDENTITY = ["config", "model", "hw", "vendor", "framework", "precision", "spec",
    "disagg", "seq", "recipe", "topology", "image", "fingerprint", "job"];

  // the chart's data as CSV: one line per plotted point, with its run id and attempt
  function csv(list, st, runs) {
    const head = ["group"].concat(CSV_IDENTITY, ["conc", "run_id", "attempt", "run_date",
      "x_" + st.x, "y_" + st.y, "on_frontier"]);
    const lines = [head.join(",")];
    for (const g of list) {
      const front = new Set(g.frontier);
      const rows = st.frontier && !st.all ? g.frontier : g.points;
      for (const e of rows) {
        const s = e.p.s;
        const cells = [g.name].concat(CSV_IDENTITY.map((k) => s[k]), [e.p.conc, runs.id[s.run],
          runs.attempt[s.run], runs.date[s.run], e.x, e.y, front.has(e) ? "yes" : "no"]);
        lines.push(cells.map(csvCell).join(","));
      }
    }
    return lines.join("\n") + "\n";
  }

  const api = { X_METRICS, FILTERS, yMetrics, decode, yValue, frontier, groupOf, defaultState,
    parseState, stateHash, select, groups, csv, csvCell, runKey, usdPerHour, kwPerGpu };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.InfersweepExplorer = api;
})(typeof window !== "undefined" ? window : globalThis);
