import { fileURLToPath } from "node:url";
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [svelte()],
  resolve: {
    alias: { $lib: fileURLToPath(new URL("./src/lib", import.meta.url)) },
    // Component tests mount into jsdom, which needs Svelte's client build.
    conditions: process.env.VITEST ? ["browser"] : undefined,
  },
  // The Tauri shell loads the dev server from this exact port.
  server: { port: 1420, strictPort: true },
  clearScreen: false,
  build: { outDir: "dist", emptyOutDir: true },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.ts"],
  },
});
