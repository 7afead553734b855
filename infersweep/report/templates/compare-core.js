// The compare page's logic without the page: two sides (a run, or a date: the newest point
// of each kind up to that day), their points matched, each metric's change against the
// run-to-run noise band, the changelog entries between them, the recipe diffs, the view in
// the URL fragment, CSV. No DOM here, so node runs it in the unit tests
// (tests/unit/report/test_compare_js.py); compare.js draws. The points come from the
// explorer's data through InfersweepExplorer.decode; the rest from compare-data.js.
(function (root) {
  "use strict";

  const X = typeof module !== "undefined" && module.exports
    ? require("./explorer-core.js") : root.InfersweepExplorer;
  const runKey = X.runKey;
  const NO_TEXT = -1;
  const MIN_REPEATS = 3;  // fewer repeated measurements give no noise band
  const BAND_SIGMAS = 2 * Math.SQRT2;  // two standard deviations of a difference of two runs

  // what makes two points the same point (as `infersweep results compare` matches them):
  // config, topology, ISL/OSL with scale-down (the explorer's seq label), concurrency
  function pointKey(p) {
    return [p.s.config, p.s.topology, p.s.seq, p.conc].join("\n");
  }

  function fixedPoints(decoded) {
    return decoded.points.filter((p) => p.s.kind !== "agentic" && p.conc !== null);
  }

  // the sides a reader can pick: every run (newest first), then every date
  function sides(decoded) {
    const r = decoded.runs, out = [];
    for (let i = r.id.length - 1; i >= 0; i--) {
      out.push({ value: runKey(r, i), label: "run " + r.label[i] + " · " + r.date[i] });
    }
    const dates = Array.from(new Set(r.date.filter((d) => d))).sort().reverse();
    for (const d of dates) {
      out.push({ value: "date:" + d, label: "date " + d + " (each point's newest run up to that day)" });
    }
    return out;
  }

  function defaultState(decoded) {
    const r = decoded.runs, n = r.id.length;
    return { base: n > 1 ? runKey(r, n - 2) : (n ? runKey(r, 0) : ""),
      new: n ? runKey(r, n - 1) : "" };
  }

  function parseState(hash, decoded) {
    const st = defaultState(decoded);
    const q = new URLSearchParams((hash || "").replace(/^#/, ""));
    for (const k of ["base", "new"]) if (q.has(k)) st[k] = q.get(k);
    return st;
  }

  function stateHash(st, decoded) {
    const d = defaultState(decoded), q = new URLSearchParams();
    for (const k of ["base", "new"]) if (st[k] !== d[k]) q.set(k, st[k]);
    const text = q.toString();
    return text ? "#" + text : "";
  }

  // the index of the newest run a side stands for (-1: none): the run, or the newest run
  // dated on or before the side's day
  function position(decoded, side) {
    const r = decoded.runs;
    if (side.startsWith("date:")) {
      const day = side.slice(5);
      let last = -1;
      for (let i = 0; i < r.id.length; i++) if (r.date[i] && r.date[i] <= day) last = i;
      return last;
    }
    for (let i = 0; i < r.id.length; i++) if (runKey(r, i) === side) return i;
    return -1;
  }

  // a side's points by key: a run's own, or for a date each point's newest run up to it
  function sidePoints(decoded, side) {
    const out = new Map(), r = decoded.runs;
    if (side.startsWith("date:")) {
      const day = side.slice(5);
      for (const p of fixedPoints(decoded)) {
        if (!r.date[p.s.run] || r.date[p.s.run] > day) continue;
        const k = pointKey(p), have = out.get(k);
        if (!have || p.s.run > have.s.run) out.set(k, p);
      }
      return out;
    }
    for (const p of fixedPoints(decoded)) {
      if (runKey(r, p.s.run) === side) out.set(pointKey(p), p);
    }
    return out;
  }

  function byKey(decoded) {
    const out = new Map();
    for (const p of fixedPoints(decoded)) {
      const k = pointKey(p);
      if (!out.has(k)) out.set(k, []);
      out.get(k).push(p);
    }
    return out;
  }

  // one measurement, however many attempts of its run carry it (a rerun copies a point it
  // did not measure again: same run id, same job)
  function measurement(decoded, p) {
    return decoded.runs.id[p.s.run] + "\n" + p.s.job;
  }

  // The noise band of one metric of a matched point: its repeated measurements with the
  // base's recipe (the same recipe fingerprint) in every staged run but the new side's, one
  // per measurement; with at least MIN_REPEATS of them, ±2·√2·s (s their sample standard
  // deviation): two standard deviations of the difference between two runs of one recipe.
  // Repeats that all agree give no band either.
  function noise(decoded, repeats, a, b, metric) {
    const skip = measurement(decoded, b), seen = new Set(), values = [];
    for (const p of repeats) {
      const m = measurement(decoded, p), v = p[metric];
      if (p.s.fingerprint !== a.s.fingerprint || m === skip || seen.has(m)) continue;
      if (v === null || v === undefined || !Number.isFinite(v)) continue;
      seen.add(m);
      values.push(v);
    }
    const n = values.length;
    if (n < MIN_REPEATS) return { n: n, band: null, sd: null };
    const mean = values.reduce((s, v) => s + v, 0) / n;
    const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1));
    // repeats that agree to rounding (copies, a constant) say nothing about the noise
    if (!(sd > 1e-9 * Math.abs(mean))) return { n: n, band: null, sd: 0 };
    return { n: n, band: BAND_SIGMAS * sd, sd: sd };
  }

  // A metric's change from the base to the new point, judged against the noise band where
  // there is one, else against the metric's `results compare` threshold (percent of the
  // base): beyond it in the metric's bad direction is a regression, in its good direction an
  // improvement.
  function change(a, b, metric, meta, nz) {
    const base = a[metric], now = b[metric];
    const out = { base: base, new: now, delta: null, pct: null, band: nz.band, n: nz.n,
      basis: nz.band !== null ? "noise" : "threshold", threshold: meta.threshold, verdict: "n/a" };
    if (base === null || base === undefined || now === null || now === undefined) return out;
    out.delta = now - base;
    out.pct = base !== 0 ? out.delta / Math.abs(base) * 100 : null;
    let beyond;
    if (out.basis === "noise") beyond = Math.abs(out.delta) > out.band;
    else if (out.pct === null) return out;
    else beyond = Math.abs(out.pct) > meta.threshold;
    const worse = meta.higher ? out.delta < 0 : out.delta > 0;
    out.verdict = !beyond ? (out.basis === "noise" ? "within noise" : "within threshold")
      : (worse ? "regression" : "improvement");
    return out;
  }

  function order(a, b) {
    const x = a.s, y = b.s;
    return x.config < y.config ? -1 : x.config > y.config ? 1
      : x.topology < y.topology ? -1 : x.topology > y.topology ? 1
        : x.seq < y.seq ? -1 : x.seq > y.seq ? 1 : a.conc - b.conc;
  }

  // the comparison: matched points with each metric's change, and the unmatched ones
  function compare(decoded, cdata, st) {
    const A = sidePoints(decoded, st.base), B = sidePoints(decoded, st.new);
    const repeats = byKey(decoded), metrics = cdata.metric_order;
    const matched = [], added = [], removed = [];
    for (const [k, a] of A) {
      const b = B.get(k);
      if (!b) { removed.push(a); continue; }
      const changes = {};
      for (const m of metrics) {
        changes[m] = change(a, b, m, cdata.metrics[m], noise(decoded, repeats.get(k), a, b, m));
      }
      const verdicts = Object.values(changes).map((c) => c.verdict);
      const worst = verdicts.includes("regression") ? "regression"
        : verdicts.includes("improvement") ? "improvement" : "unchanged";
      matched.push({ key: k, a: a, b: b, changes: changes, verdict: worst });
    }
    for (const [k, b] of B) if (!A.has(k)) added.push(b);
    matched.sort((x, y) => order(x.a, y.a));
    added.sort(order);
    removed.sort(order);
    return { matched: matched, added: added, removed: removed, metrics: metrics };
  }

  // The changelog entries between the two sides: every entry the runs staged after the
  // earlier side and up to the later one carry, each once, without those a run at or before
  // the earlier side already carried (a re-staged change is not new). With the runs that
  // carried each one.
  function changelogBetween(decoded, cdata, st) {
    const pa = position(decoded, st.base), pb = position(decoded, st.new);
    const lo = Math.min(pa, pb), hi = Math.max(pa, pb), before = new Set(), found = new Map();
    const r = decoded.runs;
    for (let i = 0; i <= hi; i++) {
      const meta = cdata.runs[runKey(r, i)];
      if (!meta) continue;
      for (const e of meta.changelog) {
        if (i <= lo) before.add(e);
        else if (!before.has(e)) {
          if (!found.has(e)) found.set(e, []);
          found.get(e).push(i);
        }
      }
    }
    const entries = Array.from(found, ([e, runs]) => ({ entry: cdata.entries[e], id: e, runs: runs }));
    let withMeta = 0;
    for (let i = lo + 1; i <= hi; i++) {
      const meta = cdata.runs[runKey(r, i)];
      if (meta && (meta.changelog.length || meta.refs)) withMeta++;
    }
    return { entries: entries, runs: Math.max(0, hi - lo), withMeta: withMeta,
      reversed: pa > pb };
  }

  // the recipe text (a number) a point's job ran, as its recipe's runs staged it: NO_TEXT
  // when the point's run staged no recipes
  function textId(decoded, cdata, p) {
    const meta = cdata.runs[runKey(decoded.runs, p.s.run)];
    if (!meta || !meta.recipes) return NO_TEXT;
    const fps = cdata.recipes[[p.s.config, p.s.recipe, p.s.seq].join("\n")] || {};
    const fp = p.s.fingerprint, n = fps[fp.slice(0, cdata.fp_chars)] ?? fps[fp];
    return n === undefined ? NO_TEXT : n;
  }

  // the diff lines from text i to text j ([section, key, value in i, value in j]; a value
  // null where unset), or {error}
  function diffLines(cdata, i, j) {
    if (i === j) return [];
    const d = cdata.diffs[Math.min(i, j) + " " + Math.max(i, j)];
    if (d === undefined) {
      return { error: "the site keeps the diffs of a config's recipes closest in time, and these two are far apart: run infersweep recipe diff on the two recipe.yaml files" };
    }
    if (!Array.isArray(d)) return d;
    return i < j ? d : d.map((l) => [l[0], l[1], l[3], l[2]]);
  }

  // the recipe changes behind the matched points: one per config and pair of recipes whose
  // fingerprint differs, with the points it concerns
  function recipeChanges(decoded, cdata, matched) {
    const groups = new Map();
    for (const m of matched) {
      const a = m.a.s, b = m.b.s, ia = textId(decoded, cdata, m.a), ib = textId(decoded, cdata, m.b);
      if (a.fingerprint === b.fingerprint) continue;
      const k = [a.config, a.recipe, b.recipe, a.fingerprint, b.fingerprint, ia, ib].join("\n");
      if (!groups.has(k)) {
        groups.set(k, { config: a.config, recipeA: a.recipe, recipeB: b.recipe,
          fpA: a.fingerprint, fpB: b.fingerprint, runA: a.run, runB: b.run, textA: ia, textB: ib,
          points: [],
          lines: ia === NO_TEXT || ib === NO_TEXT ? null : diffLines(cdata, ia, ib) });
      }
      groups.get(k).points.push(m);
    }
    return Array.from(groups.values());
  }

  function shown(v) {
    return v === null ? "(unset)" : v === "" ? '""' : v;
  }

  // the diff as `infersweep recipe diff` prints it
  function diffText(lines, nameA, nameB) {
    if (!lines.length) return "no semantic differences between " + nameA + " and " + nameB + "\n";
    const out = ["--- " + nameA, "+++ " + nameB];
    let section = null;
    for (const [sec, key, a, b] of lines) {
      if (sec !== section) { out.push("[" + sec + "]"); section = sec; }
      if (key.startsWith("statement: ")) out.push("  " + (a !== null ? "-" : "+") + " " + key.slice(11));
      else out.push("  " + key + ": " + shown(a) + " -> " + shown(b));
    }
    out.push(lines.length + " difference" + (lines.length !== 1 ? "s" : ""));
    return out.join("\n") + "\n";
  }

  // the comparison as CSV: every matched point with each metric's base, new, change, %,
  // band and verdict, then the added and removed points; each with its runs and recipes
  function csv(result, decoded) {
    const r = decoded.runs, head = ["status", "config", "topology", "seq", "conc",
      "base_run_id", "base_attempt", "base_fingerprint", "new_run_id", "new_attempt",
      "new_fingerprint"];
    for (const m of result.metrics) {
      for (const f of ["base", "new", "change", "change_pct", "noise_band", "repeats", "verdict"]) head.push(m + "_" + f);
    }
    const lines = [head.join(",")];
    const ident = (p) => (p ? [r.id[p.s.run], r.attempt[p.s.run], p.s.fingerprint] : ["", "", ""]);
    const row = (status, a, b, changes) => {
      const p = a || b, cells = [status, p.s.config, p.s.topology, p.s.seq, p.conc]
        .concat(ident(a), ident(b));
      for (const m of result.metrics) {
        const c = changes ? changes[m] : null;
        cells.push(...(c ? [c.base, c.new, c.delta, c.pct, c.band, c.n, c.verdict]
          : [a ? a[m] : "", b ? b[m] : "", "", "", "", "", ""]));
      }
      lines.push(cells.map(X.csvCell).join(","));
    };
    for (const m of result.matched) row(m.verdict, m.a, m.b, m.changes);
    for (const p of result.removed) row("removed", p, null, null);
    for (const p of result.added) row("added", null, p, null);
    return lines.join("\n") + "\n";
  }

  const api = { NO_TEXT, MIN_REPEATS, BAND_SIGMAS, pointKey, sides, defaultState,
    parseState, stateHash, position, sidePoints, noise, change, compare, changelogBetween,
    textId, diffLines, recipeChanges, diffText, csv };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.InfersweepCompare = api;
})(typeof window !== "undefined" ? window : globalThis);
