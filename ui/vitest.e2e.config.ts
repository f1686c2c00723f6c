// End-to-end tests of the real app window; scripts/e2e.sh starts Xvfb and
// tauri-driver and sets the environment they need.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // scripts/bench.sh app picks the measurements (e2e/app.perf.ts) instead.
    include: [process.env.FOLIO_E2E_SUITE ?? "e2e/**/*.e2e.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 15 * 60_000,
    hookTimeout: 5 * 60_000,
    sequence: { concurrent: false },
  },
});
