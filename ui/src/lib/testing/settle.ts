// Driving a mounted component in a unit test the way the browser would:
// let its pending promises, timers and effects run, and type into a field.
import { flushSync, tick } from "svelte";

/** Lets `rounds` rounds of pending promises, zero-delay timers and effects run. */
export async function settle(rounds = 4) {
  for (let i = 0; i < rounds; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    await tick();
  }
  flushSync();
}

/** Sets a field's value and fires the input event a person's typing would. */
export function type(input: HTMLInputElement | HTMLTextAreaElement, value: string) {
  input.value = value;
  input.dispatchEvent(new Event("input", { bubbles: true }));
  flushSync();
}
