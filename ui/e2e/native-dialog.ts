// Answers the app's native GTK save dialog the way a person would: wait for
// the window by its title, type the full destination into its name field,
// press Enter. xdotool talks to the same Xvfb display the app runs on.

import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

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
