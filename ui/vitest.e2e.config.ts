// End-to-end tests of the real app window; scripts/e2e.sh starts Xvfb and
// tauri-driver and sets the environment they need.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["e2e/**/*.e2e.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 15 * 60_000,
    hookTimeout: 5 * 60_000,
    sequence: { concurrent: false },
  },
});
