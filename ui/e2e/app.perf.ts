// Measurements of the real app (scripts/bench.sh app runs this through
// scripts/e2e.sh against the release build), each beside a baseline taken in
// the same run on the same machine:
//  - cold start to an interactive window, against a bare WebKit browser
//    (MiniBrowser) started the same way by the same driver;
//  - input lag while 8,094 hotpotqa passages (one file each) are ingested,
//    against the same probe with the app idle;
//  - memory of the idle app (its process and WebKit's) once the hotpotqa
//    corpus is indexed.
// Results: $FOLIO_E2E_OUT/app-bench.json and bench/results/app.json.

import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

import { writeHotpotqaFolder } from "./corpora";
import { Session } from "./webdriver";
import { confirmDialog } from "./x11";

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set; run through scripts/bench.sh app`);
  return value;
};
const out = env("FOLIO_E2E_OUT");
const driver = env("WEBDRIVER_URL");
const MINUTE = 60_000;
const results: Record<string, unknown> = {};

function quantile(values: number[], q: number) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function summary(values: number[]) {
  return {
    n: values.length,
    p50: quantile(values, 0.5),
    p95: quantile(values, 0.95),
    max: Math.max(...values),
  };
}

/** Session start until `ready` holds, in ms; the session is returned open. */
async function coldStart(capabilities: Record<string, unknown>, ready: (s: Session) => Promise<boolean>) {
  const started = performance.now();
  const session = await Session.startWith(driver, capabilities);
  await session.waitFor("ready", 2 * MINUTE, () => ready(session), 20);
  return { ms: performance.now() - started, session };
}

const folioCaps = () => ({ "tauri:options": { application: env("FOLIO_APP") } });
const appReady = async (s: Session) => (await s.all('main[data-ready="true"]')).length > 0;

/** Presses keys in the question box at a steady pace; returns per-key lag in ms. */
async function typingLag(app: Session, keys: number) {
  await app.execute(`
    window.__lag = [];
    const box = document.querySelector('[data-testid="question-input"]');
    box.value = '';
    box.addEventListener('keydown', () => {
      const t0 = performance.now();
      requestAnimationFrame(() => setTimeout(() => window.__lag.push(performance.now() - t0), 0));
    });`);
  const box = await app.byTestId("question-input");
  await box.click();
  const roundTrips: number[] = [];
  for (let i = 0; i < keys; i++) {
    const t0 = performance.now();
    await box.type("a");
    roundTrips.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 50));
  }
  const toFrame: number[] = await app.execute("return window.__lag;");
  await box.clear();
  return { key_round_trip_ms: summary(roundTrips), handler_to_frame_ms: summary(toFrame) };
}

/** Resident and proportional memory of a process and its descendants, in MiB. */
function memoryOf(rootPid: number) {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const pids: number[] = [];
  const walk = (pid: number) => {
    pids.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(rootPid);
  const per: Record<string, { rss: number; pss: number }> = {};
  let rss = 0;
  let pss = 0;
  for (const pid of pids) {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(rollup)?.[1] ?? 0);
    const name = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    per[`${name}#${pid}`] = { rss: kb("Rss") / 1024, pss: kb("Pss") / 1024 };
    rss += kb("Rss") / 1024;
    pss += kb("Pss") / 1024;
  }
  return { rss_mib: rss, pss_mib: pss, processes: per };
}

describe("desktop app measurements", () => {
  it("cold start, input lag under ingest, idle memory", async () => {
    const baseline: number[] = [];
    const folio: number[] = [];
    for (let i = 0; i < 3; i++) {
      const bare = await coldStart(
        {
          "webkitgtk:browserOptions": {
            binary: "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
            args: ["--automation"],
          },
        },
        async (s) => {
          await s.post("url", { url: "about:blank" });
          return true;
        },
      );
      baseline.push(bare.ms);
      await bare.session.end();
      const app = await coldStart(folioCaps(), appReady);
      folio.push(app.ms);
      await app.session.end();
    }
    results.cold_start_ms = { folio: summary(folio), bare_webkit: summary(baseline), ratio_p50: quantile(folio, 0.5) / quantile(baseline, 0.5) };

    const { session: app } = await coldStart(folioCaps(), appReady);
    try {
      await (await app.byTestId("nav-ask")).click();
      const idle = await typingLag(app, 60);

      const corpus = writeHotpotqaFolder(env("FOLIO_E2E_HOTPOTQA"), join(out, "hotpotqa"));
      await (await app.byTestId("nav-library")).click();
      await (await app.byTestId("folder-path-input")).type(corpus.dir);
      await (await app.byTestId("add-folder-path")).click();
      await confirmDialog();
      await app.waitFor("indexing to start", 2 * MINUTE, async () => (await app.all('[data-testid="job-row"] progress[value]')).length > 0);
      const ingestStarted = performance.now();
      await (await app.byTestId("nav-ask")).click();
      const busy = await typingLag(app, 120);
      await (await app.byTestId("nav-library")).click();
      const documents = async () =>
        Number((await (await app.byTestId("overview-documents")).text()).replace(/[^0-9]/g, "") || "0");
      await app.waitFor("the corpus indexed", 30 * MINUTE, async () => (await documents()) >= corpus.files, 2000);
      results.ingest = { files: corpus.files, seconds_after_probe_start: (performance.now() - ingestStarted) / 1000 };
      results.input_lag = {
        idle,
        during_ingest: busy,
        ratio_round_trip_p95: busy.key_round_trip_ms.p95 / idle.key_round_trip_ms.p95,
        ratio_to_frame_p95: busy.handler_to_frame_ms.p95 / idle.handler_to_frame_ms.p95,
      };

      await new Promise((r) => setTimeout(r, 15_000));
      const pid = Number(execFileSync("pgrep", ["-n", "-f", env("FOLIO_APP")]).toString().trim());
      results.idle_memory = memoryOf(pid);
    } finally {
      await app.end();
    }
    const json = JSON.stringify({ date: new Date().toISOString(), ...results }, null, 2);
    writeFileSync(join(out, "app-bench.json"), json);
    console.log(json);
    expect(results.input_lag).toBeDefined();
  });
});
