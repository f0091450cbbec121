// The table of scripts/bench_families.sh from its raw.jsonl files (one or more runs): one row per
// model, weight type and thread count; each cell is the median over the paired rounds, with the
// range in brackets when there are several. qmm's lines come from `qmm bench model -o jsonl`,
// llama.cpp's from llama-bench -o jsonl, each tagged with "system", "shape" and "type"; lines of
// system "ik_llamacpp" (bench_families.sh with IK=1) add ik_llama.cpp's columns at the end.
// Usage: node scripts/bench_table.mjs RAW.jsonl...
import fs from "node:fs";

const rows = new Map();
for (const file of process.argv.slice(2)) {
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const j = JSON.parse(line);
    const threads = j.threads ?? j.n_threads;  // llama-bench's name
    const key = `${j.shape}|${j.type}|${threads}`;
    if (!rows.has(key)) rows.set(key, {shape: j.shape, type: j.type, threads, pp: 0, tg: 0, q_pp: [], q_tg: [], paired: [], l_pp: [], l_tg: [], i_pp: [], i_tg: [], gemv: new Set()});
    const r = rows.get(key);
    if (j.system === "llamacpp") {
      if (j.n_gen > 0) r.l_tg.push(j.avg_ts); else r.l_pp.push(j.avg_ts);
    } else if (j.system === "ik_llamacpp") {
      if (j.n_gen > 0) r.i_tg.push(j.avg_ts); else r.i_pp.push(j.avg_ts);
    } else if (j.n_gen > 0) {
      r.tg = j.n_gen;
      r.q_tg.push(j.avg_ts);
      if (j.paired_ratio != null) r.paired.push(100 * j.paired_ratio);
      r.gemv.add(j.gemv);
    } else {
      r.pp = j.n_prompt;
      r.q_pp.push(j.avg_ts);
    }
  }
}
const median = (v) => {
  const s = [...v].sort((a, b) => a - b), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const cell = (v, d, unit = "") => {
  if (!v.length) return "-";
  const range = v.length > 1 ? ` (${Math.min(...v).toFixed(d)}–${Math.max(...v).toFixed(d)})` : "";
  return median(v).toFixed(d) + unit + range;
};
const ratio = (a, b) => (a.length && b.length ? (median(a) / median(b)).toFixed(2) + "×" : "-");
const ik = [...rows.values()].some((r) => r.i_pp.length || r.i_tg.length);
console.log("| model | type | threads | qmm pp | llama.cpp pp | qmm / llama.cpp | qmm tg | llama.cpp tg | qmm / llama.cpp | qmm tg % of paired read |" +
            (ik ? " ik_llama.cpp pp | qmm / ik | ik_llama.cpp tg | qmm / ik |" : ""));
console.log("|---|---|---|---|---|---|---|---|---|---|" + (ik ? "---|---|---|---|" : ""));
for (const r of rows.values()) {
  console.log(`| ${r.shape} | ${r.type} | ${r.threads} | ${cell(r.q_pp, 1)} | ${cell(r.l_pp, 1)} | ${ratio(r.q_pp, r.l_pp)} | ` +
              `${cell(r.q_tg, 2)} | ${cell(r.l_tg, 2)} | ${ratio(r.q_tg, r.l_tg)} | ${cell(r.paired, 0, "%")} |` +
              (ik ? ` ${cell(r.i_pp, 1)} | ${ratio(r.q_pp, r.i_pp)} | ${cell(r.i_tg, 2)} | ${ratio(r.q_tg, r.i_tg)} |` : ""));
}
const lengths = [...new Set([...rows.values()].map((r) => `pp${r.pp} / tg${r.tg}`))].join(", ");
const rounds = Math.max(...[...rows.values()].map((r) => r.q_tg.length));
const gemv = [...new Set([...rows.values()].flatMap((r) => [...r.gemv].map((g) => `${r.type} -t ${r.threads}: ${g}`)))].join("; ");
console.log(`\ntok/s at ${lengths}; median (range) of up to ${rounds} paired round(s) per row; qmm's decode kernel (of the first weight, as tuned): ${gemv}.`);
