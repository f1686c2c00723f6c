// Short confirmations and failures that need no decision ("Exported to …").
export type Toast = { id: number; message: string; kind: "info" | "error" };

export const toasts = $state<Toast[]>([]);

let nextId = 1;

export function showToast(message: string, kind: Toast["kind"] = "info", timeoutMs = 6000): void {
  const id = nextId++;
  toasts.push({ id, message, kind });
  setTimeout(() => dismissToast(id), timeoutMs);
}

export function dismissToast(id: number): void {
  const index = toasts.findIndex((t) => t.id === id);
  if (index >= 0) toasts.splice(index, 1);
}
