// What a person does to the app's native windows, done on the Xvfb display
// the app runs on: answer a GTK save dialog, confirm a path typed into the
// app, close the main window.

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Waits for the dialog titled `title` and focuses it. */
async function focusDialog(title: string, timeoutMs: number) {
  const { stdout } = await run("xdotool", ["search", "--sync", "--onlyvisible", "--name", title], {
    timeout: timeoutMs,
  });
  // No window manager runs under Xvfb, so focus the dialog directly; keys
  // then go to whatever has focus inside it.
  await run("xdotool", ["windowfocus", "--sync", stdout.trim().split("\n")[0]]);
}

/** Waits for the dialog by its title, types the full destination into its name field, presses Enter. */
export async function answerSaveDialog(title: string, destination: string, timeoutMs = 20_000) {
  // Focus starts in the name field, the suggested name selected.
  await focusDialog(title, timeoutMs);
  await run("xdotool", ["key", "ctrl+a"]);
  await run("xdotool", ["type", "--delay", "20", destination]);
  await run("xdotool", ["key", "Return"]);
}

/**
 * Confirms a path typed into the app (or a new settings value) in the
 * dialog the app opens from Rust: Enter presses its first button, which
 * has the focus and says go ahead.
 */
export async function confirmDialog(title = "Confirm paths", timeoutMs = 20_000) {
  await focusDialog(title, timeoutMs);
  await run("xdotool", ["key", "Return"]);
}

/** Asks the visible windows of process `pid` to close, as their close button would. */
export async function closeWindowsOf(pid: number) {
  const { stdout } = await run("xdotool", ["search", "--onlyvisible", "--pid", String(pid)]);
  const windows = stdout.trim().split("\n").filter(Boolean);
  // Debian's python3-xlib lives with the system interpreter.
  await run("/usr/bin/python3", [fileURLToPath(new URL("./wm_close.py", import.meta.url)), ...windows]);
}
