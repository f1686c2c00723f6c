// In-app confirmation for destructive actions. Native window.confirm is not
// reliable inside every webview, and a dialog of our own can be styled,
// reached by keyboard and driven by end-to-end tests.
export type ConfirmRequest = {
  title: string;
  message: string;
  confirmLabel: string;
  resolve: (confirmed: boolean) => void;
};

export const confirmation = $state<{ current: ConfirmRequest | null }>({ current: null });

export function confirmAction(title: string, message: string, confirmLabel: string): Promise<boolean> {
  confirmation.current?.resolve(false);
  return new Promise((resolve) => {
    confirmation.current = { title, message, confirmLabel, resolve };
  });
}

export function settleConfirmation(confirmed: boolean): void {
  const current = confirmation.current;
  confirmation.current = null;
  current?.resolve(confirmed);
}
