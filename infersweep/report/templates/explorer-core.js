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

  // The data file's packed columns (infersweep/report/packing.py): base-90 digits, ints at a
  // fixed width (the width first), numbers as three digits at 4 significant digits. A plain
  // list (explorerdata.arrange's output, as the tests give it) is taken as it is.
  const ALPHABET = (() => {
    let a = "";
    for (let c = 0x20; c < 0x7f; c++) if (!"\"\\<>&".includes(String.fromCharCode(c))) a += String.fromCharCode(c);
    return a;
  })();
  const DIGIT = new Int32Array(128).fill(-1);
  for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;
  const BASE = ALPHABET.length, EMIN = -20, MANTISSAS = 9000;
  const POW10 = Array.from({ length: 23 }, (_, i) => Number("1e" + i));  // exact, as parsed

  function unpackInts(col) {
    if (Array.isArray(col)) return col;
    const w = col.charCodeAt(0) - 48, n = (col.length - 1) / w, out = new Int32Array(n);
    for (let i = 0, at = 1; i < n; i++) {
      let v = 0;
      for (let k = 0; k < w; k++) v = v * BASE + DIGIT[col.charCodeAt(at++)];
      out[i] = v;
    }
    return out;
  }

  function numberOf(code) {
    if (code < 2) return code === 0 ? null : 0;
    const k = (code - 2) >> 1, q = (k / MANTISSAS) | 0, m = k - q * MANTISSAS + 1000, e = q + EMIN;
    const v = e < 0 ? m / POW10[-e] : m * POW10[e];
    return (code - 2) & 1 ? -v : v;
  }

  function numberCode(text, at) {
    return (DIGIT[text.charCodeAt(at)] * BASE + DIGIT[text.charCodeAt(at + 1)]) * BASE +
      DIGIT[text.charCodeAt(at + 2)];
  }

  // a number column read one value at a time (null where there is none): packed dense,
  // packed sparse ({at, values}) or a plain list
  function numberReader(col, n) {
    if (Array.isArray(col)) return (i) => (col[i] === undefined ? null : col[i]);
    if (typeof col === "string") return (i) => numberOf(numberCode(col, 3 * i));
    const at = unpackInts(col.at), pos = new Int32Array(n).fill(-1);
    for (let j = 0; j < at.length; j++) pos[at[j]] = j;
    return (i) => (pos[i] < 0 ? null : numberOf(numberCode(col.values, 3 * pos[i])));
  }

  // a whole number column at once (faster than one by one): NaN where there is none
  function unpackNumbers(col, n) {
    if (Array.isArray(col)) return Float64Array.from(col, (v) => (v === null ? NaN : v));
    const out = new Float64Array(n).fill(NaN), dense = typeof col === "string";
    const text = dense ? col : col.values, at = dense ? null : unpackInts(col.at);
    for (let i = 0, c = 0; c < text.length; i++, c += 3) {
      const v = numberOf(numberCode(text, c));
      out[dense ? i : at[i]] = v === null ? NaN : v;
    }
    return out;
  }

  // The data decoded: the series (objects sharing their attributes) and the points, each an
  // object { index, s: its series, conc, requests ([completed, sent] or null), <metric>:
  // value or null }. Objects are made when
  // first asked for: seriesAt(k) and pointsOf(k) give one series and its points, `series`
  // and `points` all of them (the same objects). A view of a few series reads only those,
  // filtering on `columns` ({ name: { values, codes } }, a code per series), so the page
  // never makes 200,000 objects to draw its first chart.
  function decode(data) {
    const s = data.series, runOf = unpackInts(s.run), n = runOf.length;
    const names = Object.keys(s).filter((k) => k !== "run" && k !== "count");
    const columns = {};
    for (const k of names) columns[k] = { values: s[k].values, codes: unpackInts(s[k].codes) };
    // a column the config decides is packed with a code per config: a code per series here
    for (const k of names) {
      if (s[k].by !== "config") continue;
      const perConfig = columns[k].codes, config = columns.config.codes;
      columns[k].codes = Int32Array.from(config, (c) => perConfig[c]);
    }
    const seriesMade = new Array(n);
    function seriesAt(k) {
      if (seriesMade[k]) return seriesMade[k];
      const a = { index: k, run: runOf[k] };
      for (const c of names) a[c] = columns[c].values[columns[c].codes[k]];
      return (seriesMade[k] = a);
    }
    const p = data.points;
    // where each series' points are: a count per series (packed), else each point's series
    const start = new Int32Array(n + 1);
    let order = null;
    if (s.count !== undefined) {
      const count = unpackInts(s.count);
      for (let i = 0; i < n; i++) start[i + 1] = start[i] + count[i];
    } else {
      const of = p.series;
      for (const k of of) start[k + 1]++;
      for (let i = 0; i < n; i++) start[i + 1] += start[i];
      order = new Int32Array(of.length);
      const fill = start.slice(0, n);
      for (let i = 0; i < of.length; i++) order[fill[of[i]]++] = i;
    }
    const total = start[n];
    // the dictionary-encoded columns (concurrency, requests): values and a code per point
    const CODED = ["conc", "requests"];
    const coded = CODED.filter((k) => p[k] !== undefined).map((k) => {
      if (Array.isArray(p[k])) return [k, (i) => (p[k][i] === undefined ? null : p[k][i])];
      const values = [null].concat(p[k].values), codes = unpackInts(p[k].codes);
      return [k, (i) => values[codes[i]]];
    });
    const readers = Object.keys(p).filter((k) => k !== "series" && !CODED.includes(k))
      .map((m) => [m, numberReader(p[m], total)]);
    const pointsMade = new Array(n), metrics = readers.map(([m]) => m);
    // series k's points, each metric read from `whole` (every column unpacked) when given
    function make(k, whole) {
      const out = new Array(start[k + 1] - start[k]), ser = seriesAt(k);
      for (let j = start[k]; j < start[k + 1]; j++) {
        const i = order ? order[j] : j, o = { index: i, s: ser };
        for (const [c, at] of coded) o[c] = at(i);
        if (whole) {
          for (let r = 0; r < metrics.length; r++) {
            const v = whole[r][i];
            o[metrics[r]] = v === v ? v : null;
          }
        } else for (const [m, read] of readers) o[m] = read(i);
        out[j - start[k]] = o;
      }
      return (pointsMade[k] = out);
    }
    const pointsOf = (k) => pointsMade[k] || make(k, null);
    let allSeries = null, allPoints = null;
    const out = { runs: data.runs, columns: columns, runOf: runOf, seriesAt: seriesAt,
      pointsOf: pointsOf };
    Object.defineProperty(out, "series", { enumerable: true, get() {
      if (!allSeries) allSeries = Array.from({ length: n }, (_, k) => seriesAt(k));
      return allSeries;
    } });
    Object.defineProperty(out, "points", { enumerable: true, get() {
      if (!allPoints) {
        const whole = metrics.map((m) => unpackNumbers(p[m], total));
        allPoints = new Array(total);
        for (let k = 0; k < n; k++) for (const o of pointsMade[k] || make(k, whole)) allPoints[o.index] = o;
      }
      return allPoints;
    } });
    return out;
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

  // agentic-coding results have this ISL/OSL value and their KV-offload mode as topology;
  // their view draws a frontier per KV-offload mode too, and their cache hit rates
  const AGENTIC = "agentic";
  const HIT_RATES = [["gpu_hit", "server GPU hit rate", "solid"],
    ["cpu_hit", "server CPU hit rate", "dash"], ["theory_hit", "theoretical hit rate", "dot"]];

  function isAgentic(st) {
    return st.seq === AGENTIC;
  }

  function groupName(s, st) {
    return isAgentic(st) ? groupOf(s) + " · " + s.topology : groupOf(s);
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

  // the series a view shows: filters (on the series' codes), then the run choice (the newest
  // of each config, all, one)
  function selectSeries(decoded, st) {
    const cols = decoded.columns, runOf = decoded.runOf, tests = [];
    for (const f of FILTERS) {
      if (!st[f]) continue;
      const code = cols[f] ? cols[f].values.indexOf(st[f]) : -1;
      if (code < 0) return [];
      tests.push([cols[f].codes, code]);
    }
    let keep = [];
    for (let k = 0; k < runOf.length; k++) if (tests.every(([c, v]) => c[k] === v)) keep.push(k);
    const config = cols.config.codes;
    if (st.run === "newest") {
      const newest = new Map();
      for (const k of keep) newest.set(config[k], Math.max(newest.get(config[k]) ?? -1, runOf[k]));
      keep = keep.filter((k) => runOf[k] === newest.get(config[k]));
    } else if (st.run !== "all") {
      keep = keep.filter((k) => runKey(decoded.runs, runOf[k]) === st.run);
    }
    return keep.map(decoded.seriesAt);
  }

  // the points a view shows (only their series' points are made)
  function select(decoded, st) {
    const out = [];
    for (const s of selectSeries(decoded, st)) for (const p of decoded.pointsOf(s.index)) out.push(p);
    return out;
  }

  // per frontier group: its plotted points (x and y known) and its frontier
  function groups(points, st, costs) {
    const xm = X_METRICS[st.x] || X_METRICS.intvty, ym = yMetrics(costs.tiers)[st.y];
    const out = new Map();
    for (const p of points) {
      const x = p[st.x], y = yValue(p, st.y, costs, st);
      if (x === null || x === undefined || y === null || !Number.isFinite(y)) continue;
      if (st.log && (x <= 0 || y <= 0)) continue;
      const g = groupName(p.s, st);
      if (!out.has(g)) out.set(g, { name: g, points: [] });
      out.get(g).points.push({ p: p, x: x, y: y });
    }
    const list = Array.from(out.values()).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const g of list) {
      g.frontier = frontier(g.points, (e) => e.x, (e) => e.y, xm.higher, ym ? ym.higher : true);
    }
    return list;
  }

  // the cache hit rates of agentic points: a line per run, config and KV-offload mode and
  // rate, its points that have that rate by concurrency ({ line, s: its first point's
  // series, local: any of them local, key, label, dash, points })
  function hitRates(points) {
    const byLine = new Map();
    for (const p of points) {
      if (p.conc === null) continue;
      const line = [p.s.config, p.s.topology, String(p.s.run).padStart(9, "0")].join("\n");
      if (!byLine.has(line)) byLine.set(line, []);
      byLine.get(line).push(p);
    }
    const out = [];
    for (const line of Array.from(byLine.keys()).sort()) {
      const pts = byLine.get(line).sort((a, b) => a.conc - b.conc);
      const local = pts.some((p) => p.s.local);
      for (const [key, label, dash] of HIT_RATES) {
        const rows = pts.filter((p) => p[key] !== null && p[key] !== undefined);
        if (rows.length) out.push({ line, s: pts[0].s, local, key, label, dash, points: rows });
      }
    }
    return out;
  }

  // the points of hitRates' lines, each once, in the lines' order
  function hitPoints(hits) {
    return Array.from(new Set(hits.flatMap((h) => h.points)));
  }

  function csvCell(v) {
    const t = v === null || v === undefined ? "" : String(v);
    return /[",\n\r]/.test(t) || /^[=+\-@]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
  }

  const CSV_IDENTITY = ["config", "model", "hw", "vendor", "framework", "precision", "spec",
    "disagg", "seq", "recipe", "topology", "image", "fingerprint", "job"];
  const CSV_AGENTIC = ["local", "gpu_hit", "cpu_hit", "theory_hit", "kv_usage"];

  // an agentic point's CSV_AGENTIC cells
  function agenticCells(p) {
    return CSV_AGENTIC.map((k) => (k === "local" ? p.s.local || "no" : p[k]));
  }

  function csvLines(head, rows) {
    return [head].concat(rows).map((cells) => cells.map(csvCell).join(",")).join("\n") + "\n";
  }

  // the chart's data as CSV: one line per plotted point, with its run id and attempt (and
  // in the agentic view whether it is a local result, and its cache hit rates)
  function csv(list, st, runs) {
    const agentic = isAgentic(st);
    const head = ["group"].concat(CSV_IDENTITY, ["conc", "run_id", "attempt", "run_date",
      "x_" + st.x, "y_" + st.y, "on_frontier"], agentic ? CSV_AGENTIC : []);
    const rows = [];
    for (const g of list) {
      const front = new Set(g.frontier);
      for (const e of st.frontier && !st.all ? g.frontier : g.points) {
        const s = e.p.s;
        rows.push([g.name].concat(CSV_IDENTITY.map((k) => s[k]), [e.p.conc, runs.id[s.run],
          runs.attempt[s.run], runs.date[s.run], e.x, e.y, front.has(e) ? "yes" : "no"],
        agentic ? agenticCells(e.p) : []));
      }
    }
    return csvLines(head, rows);
  }

  // the cache hit rates' chart data as CSV: one line per point of the series shown
  function hitsCsv(hits, runs) {
    const head = CSV_IDENTITY.concat(["conc", "run_id", "attempt", "run_date"], CSV_AGENTIC);
    return csvLines(head, hitPoints(hits).map((p) => CSV_IDENTITY.map((k) => p.s[k]).concat(
      [p.conc, runs.id[p.s.run], runs.attempt[p.s.run], runs.date[p.s.run]],
      agenticCells(p))));
  }

  // the one DOM helper the pages share: ``text`` saved as a file named ``name`` (the CSV
  // exports); only called in a browser
  function download(name, text) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
  }

  const api = { X_METRICS, FILTERS, AGENTIC, HIT_RATES, yMetrics, decode, yValue, frontier,
    groupOf, groupName, isAgentic, defaultState, parseState, stateHash, select, selectSeries,
    groups, hitRates, hitPoints, csv, hitsCsv, csvCell, runKey, usdPerHour, kwPerGpu, unpackInts,
    unpackNumbers, download };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.InfersweepExplorer = api;
})(typeof window !== "undefined" ? window : globalThis);
