// Checks the settings form before it is sent, so mistakes are shown next to
// the field instead of as an engine error. The shell validates again (files
// exist, folders hold a model) and names the field at the start of its
// message, which fieldOfServerError maps back to the same inline slot.
import type { SettingsInput } from "$lib/bindings/SettingsInput";

export type SettingsField = Exclude<keyof SettingsInput, "backend" | "api_key" | "embedding_backend">;
export type SettingsErrors = Partial<Record<SettingsField, string>>;

/** The field labels, as the form shows them and the shell's messages begin. */
export const LABELS: Record<SettingsField, string> & { modelFile: string } = {
  model: "Model",
  modelFile: "Model file",
  base_url: "Server URL",
  context_size: "Context size",
  temperature: "Temperature",
  max_tokens: "Max answer tokens",
  embedding_model_dir: "Embedding model",
  embedding_base_url: "Embedding server URL",
  embedding_model: "Embedding model id",
  data_dir: "Data location",
  ocr: "OCR languages",
};

function inRange(value: number, min: number, max: number): boolean {
  return Number.isInteger(value) && value >= min && value <= max;
}

function isApiRoot(url: string): boolean {
  return /^https?:\/\/\S{3,}$/i.test(url.trim());
}

function isAbsolute(path: string): boolean {
  return path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith("\\\\");
}

export function validateSettings(input: SettingsInput): SettingsErrors {
  const errors: SettingsErrors = {};
  if (input.backend === "openai") {
    if (!isApiRoot(input.base_url)) {
      errors.base_url = "Enter the server's API root, starting with http:// or https:// (e.g. http://127.0.0.1:11434/v1).";
    }
    if (input.model.trim() === "") {
      errors.model = "Enter the name the server knows the model by (e.g. qwen2.5:7b-instruct).";
    }
  } else if (input.model.trim() === "") {
    errors.model = "Choose a .gguf model file, or use the built-in model.";
  }
  if (!inRange(input.context_size, 256, 1_048_576)) errors.context_size = "A whole number from 256 to 1048576.";
  if (!(Number.isFinite(input.temperature) && input.temperature >= 0 && input.temperature <= 2)) {
    errors.temperature = "A number from 0 (most focused) to 2.";
  }
  if (!inRange(input.max_tokens, 1, 32_768)) errors.max_tokens = "A whole number from 1 to 32768.";
  if (input.embedding_backend === "openai") {
    if (!isApiRoot(input.embedding_base_url)) {
      errors.embedding_base_url = "Enter the embedding server's API root, starting with http:// or https:// (e.g. http://127.0.0.1:8081/v1).";
    }
    if (input.embedding_model.trim() === "") {
      errors.embedding_model = "Enter the name the server knows the embedding model by (e.g. nomic-embed-text).";
    }
  } else if (input.embedding_model_dir.trim() === "") {
    errors.embedding_model_dir = "A folder holding model.onnx and its tokenizer files.";
  }
  if (!isAbsolute(input.data_dir.trim())) errors.data_dir = "Enter an absolute folder path.";
  if (input.ocr.enabled && input.ocr.languages.length === 0) {
    errors.ocr = "Choose at least one language, or turn OCR off.";
  }
  return errors;
}

/** The field a shell `invalid_settings` message is about, from its "Label: …" prefix. */
export function fieldOfServerError(message: string): SettingsField | null {
  const label = message.split(":", 1)[0].trim();
  if (label === LABELS.modelFile) return "model";
  const entry = Object.entries(LABELS).find(([, l]) => l === label);
  return entry && entry[0] !== "modelFile" ? (entry[0] as SettingsField) : null;
}
