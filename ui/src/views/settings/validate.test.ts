import { describe, expect, it } from "vitest";
import type { SettingsInput } from "$lib/bindings/SettingsInput";
import { fieldOfServerError, validateSettings } from "./validate";

const valid: SettingsInput = {
  backend: "embedded",
  model: "/models/SmolLM2-135M-Instruct.Q4_1.gguf",
  base_url: "",
  api_key: null,
  context_size: 4096,
  temperature: 0.2,
  max_tokens: 512,
  embedding_backend: "embedded",
  embedding_model_dir: "/models/all-minilm-l6-v2-int8",
  embedding_base_url: "",
  embedding_model: "",
  data_dir: "/home/me/.local/share/folio",
  ocr: { enabled: true, languages: ["eng"] },
};

describe("validateSettings", () => {
  it("accepts sane settings", () => {
    expect(validateSettings(valid)).toEqual({});
    expect(validateSettings({ ...valid, data_dir: "C:\\Users\\me\\folio" })).toEqual({});
  });

  it("asks for an OCR language only while OCR is on", () => {
    expect(validateSettings({ ...valid, ocr: { enabled: true, languages: [] } })).toEqual({
      ocr: "Choose at least one language, or turn OCR off.",
    });
    expect(validateSettings({ ...valid, ocr: { enabled: false, languages: [] } })).toEqual({});
  });

  it("names each bad field", () => {
    const errors = validateSettings({
      ...valid,
      model: " ",
      context_size: 12.5,
      temperature: 3,
      max_tokens: 0,
      embedding_model_dir: "",
      data_dir: "relative/folder",
    });
    expect(Object.keys(errors).sort()).toEqual([
      "context_size",
      "data_dir",
      "embedding_model_dir",
      "max_tokens",
      "model",
      "temperature",
    ]);
  });

  it("treats an emptied number field as invalid", () => {
    const errors = validateSettings({ ...valid, context_size: null as unknown as number });
    expect(errors.context_size).toBeDefined();
  });

  it("requires a URL and a model name for an OpenAI-compatible server", () => {
    const errors = validateSettings({ ...valid, backend: "openai", base_url: "localhost:11434", model: "" });
    expect(Object.keys(errors).sort()).toEqual(["base_url", "model"]);
    expect(
      validateSettings({ ...valid, backend: "openai", base_url: "http://127.0.0.1:11434/v1", model: "qwen2.5:7b" }),
    ).toEqual({});
  });

  it("requires a URL and a model id for an embedding server, and no model folder then", () => {
    const server = { ...valid, embedding_backend: "openai" as const, embedding_model_dir: "" };
    const errors = validateSettings({ ...server, embedding_base_url: "127.0.0.1:8081", embedding_model: " " });
    expect(Object.keys(errors).sort()).toEqual(["embedding_base_url", "embedding_model"]);
    expect(
      validateSettings({ ...server, embedding_base_url: "http://127.0.0.1:8081/v1", embedding_model: "nomic-embed-text" }),
    ).toEqual({});
  });
});

describe("fieldOfServerError", () => {
  it("maps the shell's field-prefixed messages to form fields", () => {
    expect(fieldOfServerError("Model file: /nope.gguf does not exist; choose a .gguf file")).toBe("model");
    expect(fieldOfServerError("Model: enter the name the server knows the model by")).toBe("model");
    expect(fieldOfServerError("Server URL: enter the API root")).toBe("base_url");
    expect(fieldOfServerError("Max answer tokens: between 1 and 32768")).toBe("max_tokens");
    expect(fieldOfServerError("Embedding model: the folder must hold model.onnx")).toBe("embedding_model_dir");
    expect(fieldOfServerError("Data location: enter an absolute folder path")).toBe("data_dir");
    expect(fieldOfServerError("Embedding server URL: enter the API root")).toBe("embedding_base_url");
    expect(fieldOfServerError("Embedding model id: enter the name")).toBe("embedding_model");
    expect(fieldOfServerError("cannot store the API key: locked")).toBeNull();
  });
});
