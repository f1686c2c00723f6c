import { copyFileSync, createReadStream, existsSync, mkdirSync, readdirSync } from "node:fs";
import { extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { defineConfig, type Plugin } from "vitest/config";

/**
 * pdf.js's standard fonts, CMaps and image-decoder fallbacks, served under
 * /pdfjs/ from the app's own origin (the CSP allows nothing else): straight
 * from node_modules on the dev server, copied into dist/pdfjs/ by a build.
 * Of wasm/ only the JavaScript fallbacks are used (the viewer compiles no
 * WebAssembly), so only they and the licences ship.
 */
function pdfjsAssets(): Plugin {
  const source = fileURLToPath(new URL("./node_modules/pdfjs-dist/", import.meta.url));
  const folders = ["standard_fonts", "cmaps", "wasm"];
  const ships = (folder: string, name: string) =>
    folder !== "wasm" || name.endsWith("_nowasm_fallback.js") || name.startsWith("LICENSE");
  const types: Record<string, string> = { ".js": "text/javascript", ".ttf": "font/ttf" };
  let outDir = "dist";
  return {
    name: "folio-pdfjs-assets",
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    configureServer(server) {
      server.middlewares.use("/pdfjs", (req, res, next) => {
        // Each folder is flat: accept exactly /<folder>/<file>.
        const parts = new URL(req.url ?? "/", "http://dev").pathname.split("/").filter(Boolean);
        const [folder = "", name = ""] = parts;
        const file = join(source, folder, name);
        const served = parts.length === 2 && folders.includes(folder) && !name.startsWith(".") && ships(folder, name);
        if (!served || !existsSync(file)) return next();
        res.setHeader("Content-Type", types[extname(name)] ?? "application/octet-stream");
        createReadStream(file).pipe(res);
      });
    },
    writeBundle() {
      for (const folder of folders) {
        const into = join(outDir, "pdfjs", folder);
        mkdirSync(into, { recursive: true });
        for (const name of readdirSync(join(source, folder))) {
          if (ships(folder, name)) copyFileSync(join(source, folder, name), join(into, name));
        }
      }
    },
  };
}

export default defineConfig({
  plugins: [svelte(), pdfjsAssets()],
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
