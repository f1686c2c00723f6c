// Citation buttons in rendered markdown carry only a number; this finds the
// passage or citation it names so the source opens at that place.
import type { SourceTarget } from "$lib/source";
import { showToast } from "$lib/stores/toasts.svelte";

/** Opens what `[n]` names among `targets`, or says that it names nothing. */
export function openCited(
  targets: readonly SourceTarget[],
  n: number,
  open: ((target: SourceTarget) => void) | undefined,
): void {
  const target = targets.find((t) => t.number === n);
  if (target) open?.(target);
  else showToast(`[${n}] names no passage the model was given, so there is no source to open.`, "error");
}
