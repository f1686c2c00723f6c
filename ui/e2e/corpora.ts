// Corpora the end-to-end tests and measurements put on disk for the app.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The hotpotqa passages as one markdown file each, under `dir`. */
export function writeHotpotqaFolder(corpusJsonl: string, dir: string) {
  mkdirSync(dir, { recursive: true });
  const lines = readFileSync(corpusJsonl, "utf8").split("\n").filter(Boolean);
  for (const line of lines) {
    const { id, title, text } = JSON.parse(line) as { id: string; title: string; text: string };
    writeFileSync(join(dir, `${id}.md`), `# ${title}\n\n${text}\n`);
  }
  return { dir, files: lines.length };
}
