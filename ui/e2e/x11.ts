// What a person does to the app's native windows, done on the Xvfb display
// the app runs on: answer a GTK save dialog, close the main window.

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Waits for the dialog by its title, types the full destination into its name field, presses Enter. */
export async function answerSaveDialog(title: string, destination: string, timeoutMs = 20_000) {
  const { stdout } = await run("xdotool", ["search", "--sync", "--onlyvisible", "--name", title], {
    timeout: timeoutMs,
  });
  const window = stdout.trim().split("\n")[0];
  // No window manager runs under Xvfb, so focus the dialog directly and
  // type into whatever has focus there: the name field, suggested name selected.
  await run("xdotool", ["windowfocus", "--sync", window]);
  await run("xdotool", ["key", "ctrl+a"]);
  await run("xdotool", ["type", "--delay", "20", destination]);
  await run("xdotool", ["key", "Return"]);
}

/** Asks the visible windows of process `pid` to close, as their close button would. */
export async function closeWindowsOf(pid: number) {
  const { stdout } = await run("xdotool", ["search", "--onlyvisible", "--pid", String(pid)]);
  const windows = stdout.trim().split("\n").filter(Boolean);
  // Debian's python3-xlib lives with the system interpreter.
  await run("/usr/bin/python3", [fileURLToPath(new URL("./wm_close.py", import.meta.url)), ...windows]);
}
