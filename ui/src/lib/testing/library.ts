// A library as the shell reports it, for component tests: two watched
// folders, everything embedded, nothing running.
import type { LibraryOverview } from "$lib/bindings/LibraryOverview";

/** Two folders, /home/me/notes (12 documents) and /home/me/papers (30). */
export function twoFolderLibrary(): LibraryOverview {
  return {
    data_dir: "/data",
    folders: [
      { id: 1, path: "/home/me/notes", documents: 12, errors: 0, missing: false },
      { id: 2, path: "/home/me/papers", documents: 30, errors: 0, missing: false },
    ],
    counts: { documents: 42, errors: 0, nodes: 100, chunks: 400, embedded: 400 },
    errors: [],
    jobs: [],
    jobs_paused: false,
    watching: true,
  };
}
