// Settings' model id for an OpenAI-compatible server, against a fake shell:
// the server is asked for its models only when the person presses the
// button, with the URL and key as typed; the ids (hostile text) are offered
// to pick from, a model the server does not serve is pointed out, a failure
// is shown beside the field, and a list never outlives its URL. And the
// models on this computer (the kit's, other apps' files, loopback servers),
// each of which fills the form's model fields for the save to check. And
// the server switch, which acts at once, apart from the form; and the
// model's calibration, read again when a save changes the model.
import { flushSync, mount, unmount } from "svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Found } from "$lib/bindings/Found";
import type { SettingsView as Settings } from "$lib/bindings/SettingsView";
import { notServing, serving } from "$lib/testing/server";
import { settle, type } from "$lib/testing/settle";

const shell = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => shell);

const { default: SettingsView } = await import("./SettingsView.svelte");
const { expectInert, expectVisible, HOSTILE_PAYLOADS } = await import("$lib/testing/hostile");
const { localServer } = await import("$lib/stores/server.svelte");
const { modelCalibration } = await import("$lib/stores/calibration.svelte");

const stored: Settings = {
  backend: "openai",
  model: "llama3:8b",
  base_url: "http://127.0.0.1:11434/v1",
  has_api_key: true,
  context_size: 4096,
  temperature: 0.2,
  max_tokens: 512,
  embedding_backend: "embedded",
  embedding_model_dir: "/models/embed",
  embedding_base_url: "http://127.0.0.1:8080/v1",
  embedding_model: "",
  data_dir: "/data",
  config_file: "/config/folio.toml",
  kit_models: [
    {
      label: "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)",
      path: "/kit/qwen-1.5b.gguf",
      bytes: 1_117_320_768,
      role: "the default: answers correctly, about 3× slower than the 0.5B",
      default: true,
    },
    {
      label: "Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)",
      path: "/kit/qwen-0.5b.gguf",
      bytes: 491_400_064,
      role: "faster, weaker on knowledge the documents lack",
      default: false,
    },
  ],
  api_key_storage: { kind: "keyring" },
  ocr: { enabled: false, languages: [] },
  ocr_languages_installed: [],
  ocr_unavailable: null,
};

const header = {
  version: 3,
  name: null,
  architecture: "qwen2",
  context_length: 32768,
  file_type: 15,
  quantization: "Q4_K_M",
  chat_template: null,
  split: null,
};

/** Other apps' models and loopback servers, as found_models reports them. */
const onThisComputer: Found = {
  files: [
    {
      app: "ollama",
      name: "qwen2.5:0.5b",
      path: "/home/me/.ollama/models/blobs/sha256-c5396e06",
      bytes: 397_807_936,
      header: { ...header, chat_template: { family: "chatml", first_line: "{%- if tools %}", bytes: 2_500 } },
    },
    {
      app: "lm-studio",
      name: "Llama-3.2-1B-Instruct",
      path: "/home/me/.lmstudio/models/bartowski/llama-1b/Llama-3.2-1B-Instruct-Q8_0.gguf",
      bytes: 1_321_083_072,
      header: { ...header, architecture: "llama", file_type: 7, quantization: "Q8_0" },
    },
  ],
  servers: [
    {
      port: 11434,
      usual_app: "ollama",
      base_url: "http://127.0.0.1:11434/v1",
      models: [
        { id: "llama3:8b", capabilities: ["completion", "tools"] },
        { id: "qwen2.5:0.5b", capabilities: ["completion"] },
      ],
      error: null,
    },
    {
      port: 8080,
      usual_app: "llama-cpp",
      base_url: "http://127.0.0.1:8080/v1",
      models: [],
      error: "the reply is not a model list: <html>",
    },
  ],
  passed_over: [{ path: "/home/me/.lmstudio/models/x/mmproj.gguf", reason: "a vision projector" }],
};


/** What found_models answers next. */
let found: () => Promise<Found>;
/** What served_models answers next: ids, or an error to reject with. */
let served: () => Promise<string[]>;
/** What server_support answers next. */
let supported: () => Promise<unknown>;

let target: HTMLElement;
let instance: ReturnType<typeof mount>;

const q = <T extends HTMLElement = HTMLElement>(id: string) => target.querySelector<T>(`[data-testid="${id}"]`);
const button = () => q<HTMLButtonElement>("served-models-button")!;
const select = () => q<HTMLSelectElement>("served-models-select");
const modelInput = () => target.querySelector<HTMLInputElement>("#model-id")!;
const calls = (command: string) => shell.invoke.mock.calls.filter(([c]) => c === command).map(([, args]) => args);

async function list() {
  button().click();
  await settle();
}

beforeEach(async () => {
  served = async () => ["qwen2.5:7b-instruct", "llama3:8b"];
  found = async () => onThisComputer;
  supported = async () => ({ usage: false, logprobs: true, shapes: "json_object" });
  shell.invoke.mockReset();
  shell.invoke.mockImplementation(async (command: string) => {
    if (command === "settings") return stored;
    if (command === "served_models") return served();
    if (command === "found_models") return found();
    if (command === "server_support") return supported();
    if (command === "server_view") return notServing;
    if (command === "model_calibration") return null;
    if (command === "switch_server") return serving("127.0.0.1:7733", "tok");
    // The person declines the confirmation: the form keeps what they typed.
    if (command === "save_settings") throw { code: "not_confirmed", message: "declined", details: null };
    throw { code: "internal", message: `unexpected command ${command}`, details: null };
  });
  // The server's and the calibration's stores outlive the view, as they do in the app: start each test afresh.
  Object.assign(localServer, { view: null, address: "", switching: null, error: null });
  Object.assign(modelCalibration, { calibration: null, loaded: false, running: false, cancelling: false, progress: null, error: null });
  target = document.body.appendChild(document.createElement("div"));
  instance = mount(SettingsView, { target });
  await settle();
});

afterEach(() => {
  unmount(instance);
  target.remove();
});

describe("SettingsView: the server's models", () => {
  it("asks the server nothing on opening, or while the person types", async () => {
    type(target.querySelector<HTMLInputElement>("#base-url")!, "http://10.0.0.2:8080/v1");
    type(modelInput(), "qwen");
    type(target.querySelector<HTMLInputElement>("#api-key")!, "sk-typed");
    await settle();
    // Looking for models on this computer asks only 127.0.0.1, never the URL
    // typed; whether the library is served, and the saved model's
    // calibration, are asked of the shell.
    expect(shell.invoke.mock.calls.map(([command]) => command).sort()).toEqual([
      "found_models",
      "model_calibration",
      "server_view",
      "settings",
    ]);
    expect(calls("found_models")).toEqual([undefined]);
    expect(button().textContent).toContain("List the server's models");
    expect(select()).toBeNull();
  });

  it("asks with the URL and key as typed, and without a key when none is typed", async () => {
    await list();
    // No key typed: the shell decides whether the stored one may go to this URL.
    expect(calls("served_models")).toEqual([{ base_url: "http://127.0.0.1:11434/v1", api_key: null }]);

    type(target.querySelector<HTMLInputElement>("#base-url")!, "  http://10.0.0.2:8080/v1 ");
    type(target.querySelector<HTMLInputElement>("#api-key")!, "sk-typed");
    await list();
    expect(calls("served_models")[1]).toEqual({ base_url: "http://10.0.0.2:8080/v1", api_key: "sk-typed" });
  });

  it("shows progress and takes no second press while the server is asked", async () => {
    let answer!: (ids: string[]) => void;
    served = () => new Promise((resolve) => (answer = resolve));
    await list();
    expect(button().disabled).toBe(true);
    expect(button().textContent).toContain("Asking the server…");
    button().click();
    expect(calls("served_models")).toHaveLength(1);

    answer(["llama3:8b"]);
    await settle();
    expect(button().disabled).toBe(false);
    expect(button().textContent).toContain("List the server's models");
  });

  it("offers the served ids, each once, and picking one sets the model", async () => {
    served = async () => ["qwen2.5:7b-instruct", "llama3:8b", "qwen2.5:7b-instruct"];
    await list();
    const options = [...select()!.options].filter((o) => !o.disabled).map((o) => o.textContent);
    expect(options).toEqual(["qwen2.5:7b-instruct", "llama3:8b"]);
    // The configured model is served: it is the one selected, and nothing is pointed out.
    expect(select()!.value).toBe("llama3:8b");
    expect(q("served-models-missing")).toBeNull();

    select()!.value = "qwen2.5:7b-instruct";
    select()!.dispatchEvent(new Event("change", { bubbles: true }));
    flushSync();
    expect(modelInput().value).toBe("qwen2.5:7b-instruct");

    q<HTMLButtonElement>("settings-save")!.click();
    await settle();
    expect(calls("save_settings")[0]).toMatchObject({ input: { model: "qwen2.5:7b-instruct" } });
  });

  it("says plainly when the model is not served, and when the server lists none", async () => {
    type(modelInput(), "mistral");
    await list();
    expect(select()!.value).toBe("");
    expect(q("served-models-missing")!.textContent).toContain("“mistral” is not served by this server");

    // Typing a served id answers the note.
    type(modelInput(), "qwen2.5:7b-instruct");
    expect(q("served-models-missing")).toBeNull();

    served = async () => [];
    await list();
    expect(select()).toBeNull();
    expect(q("served-models")!.textContent).toContain("The server lists no models");
  });

  it("shows a failure beside the field, with what to do", async () => {
    served = async () => {
      const message = "The model server at http://127.0.0.1:11434/v1 does not answer";
      throw { code: "llm_server_down", message, details: null };
    };
    await list();
    const notice = q("served-models")!.querySelector('[role="alert"]')!;
    expect(notice.textContent).toContain("The server's models could not be listed");
    expect(notice.textContent).toContain("does not answer");
    expect(notice.textContent).toContain("Check the Server URL");
    expect(select()).toBeNull();

    // Asking again after fixing things replaces the error with the list.
    served = async () => ["llama3:8b"];
    await list();
    expect(q("served-models")!.querySelector('[role="alert"]')).toBeNull();
    expect(select()).not.toBeNull();
  });

  it("drops the list, an error, and a late answer once the URL is edited", async () => {
    const url = target.querySelector<HTMLInputElement>("#base-url")!;
    await list();
    expect(select()).not.toBeNull();
    type(url, "http://10.0.0.2:8080/v1");
    expect(select()).toBeNull();
    expect(modelInput().value).toBe("llama3:8b");

    served = async () => {
      throw { code: "llm_server_down", message: "does not answer", details: null };
    };
    await list();
    expect(q("served-models")!.querySelector('[role="alert"]')).not.toBeNull();
    type(url, "http://10.0.0.3:8080/v1");
    expect(q("served-models")!.querySelector('[role="alert"]')).toBeNull();

    // An answer for the old URL that arrives after the edit is not offered.
    let answer!: (ids: string[]) => void;
    served = () => new Promise((resolve) => (answer = resolve));
    await list();
    type(url, "http://10.0.0.4:8080/v1");
    expect(button().disabled).toBe(false);
    answer(["from-the-old-url"]);
    await settle();
    expect(select()).toBeNull();
    expect(target.textContent).not.toContain("from-the-old-url");
  });

  it("renders hostile ids as text", async () => {
    served = async () => HOSTILE_PAYLOADS.map((p) => p.text);
    type(modelInput(), `${HOSTILE_PAYLOADS[0].text} typed`);
    await list();
    const shown = q("served-models")!;
    expectVisible(shown, HOSTILE_PAYLOADS);
    expect(q("served-models-missing")!.textContent).toContain("script-tag typed");
    expectInert(shown);
  });
});

describe("SettingsView: what the server supports", () => {
  const check = () => q<HTMLButtonElement>("server-support-button")!;

  it("asks only on the press, for the model typed, and says what each lack means", async () => {
    expect(calls("server_support")).toEqual([]);
    type(modelInput(), " qwen2.5:7b-instruct ");
    check().click();
    await settle();
    expect(calls("server_support")).toEqual([
      { base_url: "http://127.0.0.1:11434/v1", api_key: null, model: "qwen2.5:7b-instruct" },
    ]);
    const shown = q("server-support")!.textContent!;
    expect(shown).toContain("no: runs from it show no token counts");
    expect(shown).toContain("yes, as a JSON schema (response_format json_object)");
  });

  it("shows a failure beside the button, and forgets an answer when the model changes", async () => {
    supported = async () => {
      throw { code: "llm_model_not_found", message: "the server does not serve llama3:8b", details: null };
    };
    check().click();
    await settle();
    expect(target.textContent).toContain("The server could not be checked");
    supported = async () => ({ usage: true, logprobs: false, shapes: null });
    check().click();
    await settle();
    expect(q("server-support")!.textContent).toContain("parsed leniently");
    type(modelInput(), "another");
    await settle();
    expect(q("server-support")).toBeNull();
  });
});

describe("SettingsView: the embedding server", () => {
  const choose = async () => {
    q<HTMLInputElement>("settings-embedding-openai")!.click();
    await settle();
  };

  it("shows the folder for the embedded model and the URL and model id for a server", async () => {
    expect(target.querySelector("#embedding-dir")).not.toBeNull();
    expect(target.querySelector("#embedding-url")).toBeNull();
    await choose();
    expect(target.querySelector("#embedding-dir")).toBeNull();
    expect(target.querySelector<HTMLInputElement>("#embedding-url")!.value).toBe("http://127.0.0.1:8080/v1");
    expect(target.querySelector("#embedding-model-id")).not.toBeNull();
  });

  it("lists the embedding server's models apart from the chat server's, and saves what was picked", async () => {
    await choose();
    type(target.querySelector<HTMLInputElement>("#embedding-url")!, "http://10.0.0.3:8081/v1");
    await settle();
    served = async () => ["nomic-embed-text", "bge-m3"];
    q<HTMLButtonElement>("embedding-served-models-button")!.click();
    await settle();
    expect(calls("served_models")).toEqual([{ base_url: "http://10.0.0.3:8081/v1", api_key: null }]);
    expect(select()).toBeNull();
    const picker = q<HTMLSelectElement>("embedding-served-models-select")!;
    picker.value = "bge-m3";
    picker.dispatchEvent(new Event("change", { bubbles: true }));
    flushSync();
    expect(target.querySelector<HTMLInputElement>("#embedding-model-id")!.value).toBe("bge-m3");
    q<HTMLButtonElement>("settings-save")!.click();
    await settle();
    expect(calls("save_settings")[0]).toMatchObject({
      input: { embedding_backend: "openai", embedding_base_url: "http://10.0.0.3:8081/v1", embedding_model: "bge-m3" },
    });
  });

  it("names an empty model id beside its field and sends nothing", async () => {
    await choose();
    q<HTMLButtonElement>("settings-save")!.click();
    await settle();
    expect(calls("save_settings")).toEqual([]);
    expect(target.textContent).toContain("Enter the name the server knows the embedding model by");
  });
});

describe("SettingsView: the models on this computer", () => {
  const section = () => q("found-models")!;
  const rows = (id: string) => [...section().querySelectorAll<HTMLElement>(`[data-testid="${id}"]`)];
  const cells = (row: HTMLElement) => [...row.querySelectorAll("td")].map((td) => td.textContent!.replace(/\s+/g, " ").trim());
  const use = (row: HTMLElement) => row.querySelector<HTMLButtonElement>('[data-testid="found-model-use"]')!;

  it("lists the kit's models, other apps' files and the loopback servers, the saved one in use", () => {
    expect(rows("kit-model").map(cells)).toEqual([
      [
        "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) default",
        "1.0 GiB",
        "the default: answers correctly, about 3× slower than the 0.5B",
        "Use",
      ],
      ["Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)", "469 MiB", "faster, weaker on knowledge the documents lack", "Use"],
    ]);
    expect(rows("found-file").map(cells)).toEqual([
      ["Ollama", "qwen2.5:0.5b /home/me/.ollama/models/blobs/sha256-c5396e06", "379 MiB", "Q4_K_M", "yes", "Use"],
      [
        "LM Studio",
        "Llama-3.2-1B-Instruct /home/me/.lmstudio/models/bartowski/llama-1b/Llama-3.2-1B-Instruct-Q8_0.gguf",
        "1.2 GiB",
        "Q8_0",
        "no",
        "Use",
      ],
    ]);
    const [ollama, llamaCpp] = rows("found-server");
    expect(ollama.textContent).toContain("http://127.0.0.1:11434/v1");
    expect(ollama.textContent).toContain("the port Ollama usually listens on");
    expect([...ollama.querySelectorAll("tr[data-model]")].map((r) => cells(r as HTMLElement))).toEqual([
      ["llama3:8b", "completion, tools", "In use"],
      ["qwen2.5:0.5b", "completion", "Use"],
    ]);
    expect(llamaCpp.textContent).toContain("Answered, but not with a list of models: the reply is not a model list: <html>");
    expect(q("found-passed-over")!.textContent).toContain("1 file or folder passed over");
  });

  it("fills the file field from a file, and saves it as the embedded model", async () => {
    use(rows("found-file")[1]).click();
    await settle();
    expect(q<HTMLInputElement>("settings-backend-embedded")!.checked).toBe(true);
    const path = onThisComputer.files[1].path;
    expect(target.querySelector<HTMLInputElement>("#model-file")!.value).toBe(path);
    expect(rows("found-file")[1].querySelector('[data-testid="found-model-chosen"]')!.textContent).toBe("Chosen");
    expect(rows("found-file")[0].querySelector('[data-testid="found-model-use"]')).not.toBeNull();
    q<HTMLButtonElement>("settings-save")!.click();
    await settle();
    expect(calls("save_settings")[0]).toMatchObject({ input: { backend: "embedded", model: path } });
  });

  it("fills the server's address and model from a served model", async () => {
    q<HTMLInputElement>("settings-backend-embedded")!.click();
    await settle();
    const qwen = section().querySelector<HTMLElement>('tr[data-model="qwen2.5:0.5b"]')!;
    use(qwen).click();
    await settle();
    expect(q<HTMLInputElement>("settings-backend-openai")!.checked).toBe(true);
    expect(target.querySelector<HTMLInputElement>("#base-url")!.value).toBe("http://127.0.0.1:11434/v1");
    expect(modelInput().value).toBe("qwen2.5:0.5b");
    q<HTMLButtonElement>("settings-save")!.click();
    await settle();
    expect(calls("save_settings")[0]).toMatchObject({
      input: { backend: "openai", base_url: "http://127.0.0.1:11434/v1", model: "qwen2.5:0.5b" },
    });
  });

  it("names a kit model beside the file field once one is used", async () => {
    use(rows("kit-model")[1]).click();
    await settle();
    expect(target.querySelector<HTMLInputElement>("#model-file")!.value).toBe("/kit/qwen-0.5b.gguf");
    expect(q("model-file-hint")!.textContent!.trim()).toBe("Qwen2.5-Coder-0.5B-Instruct (Q4_K_M), built into Folio.");
  });

  it("shows the kit while looking, then what was found; a failure is shown in the section", async () => {
    unmount(instance);
    target.remove();
    let answer!: (found: Found) => void;
    found = () => new Promise((resolve) => (answer = resolve));
    target = document.body.appendChild(document.createElement("div"));
    instance = mount(SettingsView, { target });
    await settle();
    expect(rows("kit-model")).toHaveLength(2);
    expect(q("found-models-looking")!.textContent).toContain("Looking in the folders of Ollama");
    expect(q<HTMLButtonElement>("found-models-again")!.disabled).toBe(true);
    answer({ files: [], servers: [], passed_over: [] });
    await settle();
    expect(section().textContent).toContain("None: no GGUF file in those apps' folders.");
    expect(section().textContent).toContain("None answered at the ports");

    found = async () => {
      throw { code: "internal", message: "the search stopped", details: null };
    };
    const looked = calls("found_models").length;
    q<HTMLButtonElement>("found-models-again")!.click();
    await settle();
    expect(section().querySelector('[role="alert"]')!.textContent).toContain("the search stopped");
    expect(calls("found_models")).toHaveLength(looked + 1);
  });

  it("renders names from files and servers as text", async () => {
    const names = HOSTILE_PAYLOADS.map((p) => p.text);
    found = async () => ({
      ...onThisComputer,
      files: names.map((name, i) => ({ ...onThisComputer.files[0], name, path: `/m/${i}.gguf` })),
      servers: [{ ...onThisComputer.servers[0], models: names.map((id) => ({ id, capabilities: [id] })) }],
    });
    q<HTMLButtonElement>("found-models-again")!.click();
    await settle();
    expectVisible(section(), HOSTILE_PAYLOADS);
    expectInert(section());
  });
});

describe("SettingsView: serving to other apps", () => {
  it("switches at once, outside the form: Save neither switches nor sends the server's address", async () => {
    const panel = q("server-panel")!;
    expect(panel.closest("form")).toBeNull();
    expect(panel.textContent).toContain("Serve to other apps");
    q<HTMLInputElement>("server-switch")!.click();
    await settle();
    expect(calls("switch_server")).toEqual([{ on: true, address: "127.0.0.1:7733" }]);
    expect(calls("save_settings")).toEqual([]);
    expect(q("server-status")!.textContent).toBe("Serving on http://127.0.0.1:7733");

    q<HTMLButtonElement>("settings-save")!.click();
    await settle();
    expect(calls("switch_server")).toHaveLength(1);
    expect(JSON.stringify(calls("save_settings")[0])).not.toContain("7733");
  });
});

describe("SettingsView: calibrating the model", () => {
  it("sits with the model's sections, and reads the calibration again once a save changes the model", async () => {
    const panel = q("calibrate-panel")!;
    expect(q("found-models")!.compareDocumentPosition(panel) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(panel.textContent).toContain("Not calibrated: CRP-RAG uses its default threshold.");
    expect(calls("model_calibration")).toHaveLength(1);

    // The save goes through: the shell keeps what it is sent.
    const fallback = shell.invoke.getMockImplementation()!;
    shell.invoke.mockImplementation(async (command: string, args: { input: Settings }) => {
      if (command === "save_settings") return { ...stored, backend: args.input.backend, model: args.input.model, base_url: args.input.base_url };
      if (command === "app_info") return null;
      return fallback(command, args);
    });
    q<HTMLButtonElement>("settings-save")!.click();
    await settle();
    expect(calls("save_settings")).toHaveLength(1);
    expect(calls("model_calibration")).toHaveLength(1);

    type(modelInput(), "qwen2.5:7b-instruct");
    q<HTMLButtonElement>("settings-save")!.click();
    await settle();
    expect(calls("save_settings")).toHaveLength(2);
    expect(calls("model_calibration")).toHaveLength(2);
  });
});
