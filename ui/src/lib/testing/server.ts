// The library's server as the shell reports it (`server_view`), for
// component and store tests: off, or serving at an address.
import type { ServerView } from "$lib/bindings/ServerView";

/** Not serving; the token kept in the OS keyring. */
export const notServing: ServerView = {
  on: false,
  running: false,
  address: "127.0.0.1:7733",
  error: null,
  token: null,
  token_kept_in: "the OS keyring",
  clients: null,
};

/** Serving at `address` (the real one: port 0 has become a port) with `token`. */
export function serving(address: string, token: string): ServerView {
  const base = `http://${address}`;
  return {
    on: true,
    running: true,
    address,
    error: null,
    token,
    token_kept_in: "/home/me/.local/share/folio/server-token",
    clients: {
      base_url: base,
      openai_base_url: `${base}/v1`,
      mcp_url: `${base}/mcp`,
      curl: `curl -s -H 'Authorization: Bearer ${token}' -H 'Content-Type: application/json' -d '{"query": "ownership", "k": 5}' ${base}/api/search`,
    },
  };
}
