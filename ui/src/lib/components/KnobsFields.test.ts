// The shared settings: empty fields mean the method's own values, which the
// placeholders name when one method is chosen, and an emptied field sends
// null so the engine applies them.
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import KnobsFields from "./KnobsFields.svelte";
import { askForm, defaultKnobs, type Knobs } from "$lib/stores/ask-form.svelte";

let instance: ReturnType<typeof mount> | null = null;
const target = document.body;

afterEach(() => {
  if (instance) unmount(instance);
  instance = null;
  target.innerHTML = "";
});

function field(id: string): HTMLInputElement {
  const input = target.querySelector<HTMLInputElement>(`#${id}`);
  if (!input) throw new Error(`no #${id}`);
  return input;
}

describe("KnobsFields", () => {
  it("shows one method's own k and temperature as placeholders", () => {
    const knobs: Knobs = defaultKnobs();
    const defaults = { k: 10, temperature: 0.7, sampling: { top_p: 0.8, top_k: 20 } };
    instance = mount(KnobsFields, { target, props: { knobs, retrieves: true, idPrefix: "t", defaults } });
    expect(field("t-k").placeholder).toBe("10");
    expect(field("t-temperature").placeholder).toBe("0.7");
    expect(field("t-k").value).toBe("");
    expect(field("t-k").required).toBe(false);
  });

  it("says the configured temperature applies to a method without its own, and names neither for several", () => {
    instance = mount(KnobsFields, {
      target,
      props: { knobs: defaultKnobs(), retrieves: true, idPrefix: "one", defaults: { k: 5, temperature: null, sampling: null } },
    });
    expect(field("one-temperature").placeholder).toBe("default");
    unmount(instance);
    target.innerHTML = "";
    instance = mount(KnobsFields, { target, props: { knobs: defaultKnobs(), retrieves: true, idPrefix: "many" } });
    expect(field("many-k").placeholder).toBe("method's");
    expect(field("many-temperature").placeholder).toBe("method's");
  });

  it("sends null for k once the field is emptied", () => {
    askForm.knobs = { ...defaultKnobs(), k: 3 };
    instance = mount(KnobsFields, { target, props: { knobs: askForm.knobs, retrieves: true, idPrefix: "e" } });
    const k = field("e-k");
    expect(k.value).toBe("3");
    k.value = "";
    k.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
    expect(askForm.knobs.k).toBeNull();
  });
});
