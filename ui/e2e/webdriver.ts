// A small W3C WebDriver client: just the commands the app's end-to-end
// tests use, spoken over fetch to tauri-driver (which forwards to
// WebKitWebDriver driving the real app window).

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

export class WebDriverError extends Error {}

/**
 * The session is gone: WebKit's page process died (under Xvfb, Mesa's
 * software rasterizer has segfaulted in its compositor thread), and took the
 * session with it. Waiting cannot bring it back.
 */
export class SessionGone extends WebDriverError {}

async function call(url: string, method: string, body?: unknown): Promise<any> {
  const response = await fetch(url, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as { value: any };
  if (!response.ok) {
    const Failure = json.value?.error === "invalid session id" ? SessionGone : WebDriverError;
    throw new Failure(`${method} ${url}: ${json.value?.error}: ${json.value?.message}`);
  }
  return json.value;
}

export class Element {
  constructor(
    private session: Session,
    readonly id: string,
  ) {}

  private path(rest: string) {
    return `element/${this.id}/${rest}`;
  }

  click() {
    return this.session.post(this.path("click"), {});
  }

  type(text: string) {
    return this.session.post(this.path("value"), { text });
  }

  clear() {
    return this.session.post(this.path("clear"), {});
  }

  text(): Promise<string> {
    return this.session.get(this.path("text"));
  }

  attribute(name: string): Promise<string | null> {
    return this.session.get(this.path(`attribute/${name}`));
  }
}

/** The special keys the tests press (WebDriver's code points). */
export const Keys = { Enter: "\uE007", Escape: "\uE00C" };

export class Session {
  private constructor(
    private base: string,
    readonly id: string,
  ) {}

  /** Starts the app at `application` in a new window. */
  static start(driverUrl: string, application: string): Promise<Session> {
    return Session.startWith(driverUrl, { "tauri:options": { application } });
  }

  static async startWith(driverUrl: string, capabilities: Record<string, unknown>): Promise<Session> {
    const value = await call(`${driverUrl}/session`, "POST", { capabilities: { alwaysMatch: capabilities } });
    return new Session(driverUrl, value.sessionId);
  }

  post(path: string, body: unknown) {
    return call(`${this.base}/session/${this.id}/${path}`, "POST", body);
  }

  get(path: string) {
    return call(`${this.base}/session/${this.id}/${path}`, "GET");
  }

  async all(css: string): Promise<Element[]> {
    const found: Record<string, string>[] = await this.post("elements", { using: "css selector", value: css });
    return found.map((e) => new Element(this, e[ELEMENT]));
  }

  /** Waits for an element matching `css` (and `accept`, when given). */
  async find(css: string, timeoutMs = 10_000, accept?: (e: Element) => Promise<boolean>): Promise<Element> {
    let found: Element | undefined;
    await this.waitFor(`element ${css}`, timeoutMs, async () => {
      for (const e of await this.all(css)) {
        if (!accept || (await accept(e))) {
          found = e;
          return true;
        }
      }
      return false;
    });
    return found!;
  }

  byTestId(id: string, timeoutMs?: number) {
    return this.find(`[data-testid="${id}"]`, timeoutMs);
  }

  async waitFor(what: string, timeoutMs: number, condition: () => Promise<boolean>, pollMs = 250) {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
      try {
        if (await condition()) return;
      } catch (e) {
        if (e instanceof SessionGone) throw e;
        last = e;
      }
      await new Promise((r) => setTimeout(r, pollMs));
    }
    throw new WebDriverError(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last})` : ""}`);
  }

  execute<T>(script: string, ...args: unknown[]): Promise<T> {
    return this.post("execute/sync", { script, args });
  }

  /** The window as a PNG. */
  async screenshot(): Promise<Buffer> {
    return Buffer.from(await this.get("screenshot"), "base64");
  }

  async end() {
    await call(`${this.base}/session/${this.id}`, "DELETE").catch(() => undefined);
  }
}
