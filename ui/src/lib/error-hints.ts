// What a person can do about a failed answer, by the shell's stable error
// code. The message itself comes from the engine; this adds the next step.
import type { ViewId } from "$lib/stores/app.svelte";

export type Hint = { text: string; action?: { label: string; view: ViewId } };

const SETTINGS = { label: "Open Settings", view: "settings" } as const;
const LIBRARY = { label: "Open Library", view: "library" } as const;

const HINTS: Record<string, Hint> = {
  llm_server_down: {
    text: "The model server did not answer. Start it (Ollama, llama.cpp server, LM Studio…) or correct the Server URL.",
    action: SETTINGS,
  },
  llm_model_not_found: { text: "The server does not know this model. Check the model name.", action: SETTINGS },
  llm_load_failed: { text: "The model file could not be loaded. Choose another GGUF file.", action: SETTINGS },
  llm_failed: { text: "The model failed while answering. Try again, or try another model.", action: SETTINGS },
  empty_library: {
    text: "Nothing is indexed yet. Add a folder of documents, or ask with a method that does not retrieve (llm-only).",
    action: LIBRARY,
  },
  embedding_model: { text: "The embedding model could not be loaded. Check its folder.", action: SETTINGS },
  invalid_request: { text: "Check the question's options (passages, temperature, max tokens, method options)." },
  invalid_option: { text: "An option is out of range; the message says which and what it allows." },
  prompt_template: { text: "A prompt template in your prompts folder has a mistake; the details name the file." },
  interrupted: { text: "Folio was closed while this answer was being written. Ask again to get a complete answer." },
  run_in_progress: { text: "Wait for the running answer to finish, or cancel it." },
  disk_full: {
    text: "The disk holding Folio's data is full. Free some space; nothing already indexed was lost, and the interrupted work resumes.",
  },
  eval_mismatch: {
    text: "Choose another output folder, or tick “Start over” to replace the answers already in this one.",
  },
  eval_running: { text: "Only one evaluation runs at a time. Wait for the running one to finish, or cancel it." },
  not_confirmed: {
    text: "A path that was typed rather than chosen with Browse… is used only once you confirm it in the dialog Folio opens. Start again and confirm, or choose the path with Browse….",
  },
  not_an_evaluation: {
    text: "Choose the output folder of an evaluation that has finished or was stopped: it holds eval.json and summary.json.",
  },
};

const FALLBACK: Hint = {
  text: "If the model could not be reached or loaded, check the model settings.",
  action: SETTINGS,
};

export function hintFor(code: string): Hint | null {
  if (code === "cancelled") return null;
  return HINTS[code] ?? FALLBACK;
}
