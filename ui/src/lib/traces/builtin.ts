// The trace renderers that ship with the app; a new method adds its
// component next to these and one line here.
import ActiveRagTrace from "./ActiveRagTrace.svelte";
import CrpRagTrace from "./CrpRagTrace.svelte";
import Ig2RagTrace from "./Ig2RagTrace.svelte";
import IrcotTrace from "./IrcotTrace.svelte";
import LlmOnlyTrace from "./LlmOnlyTrace.svelte";
import PagerTrace from "./PagerTrace.svelte";
import Rdr2Trace from "./Rdr2Trace.svelte";
import { registerTraceRenderer } from "./registry";
import VanillaRagTrace from "./VanillaRagTrace.svelte";
import WholeDocumentTrace from "./WholeDocumentTrace.svelte";

export function registerBuiltinTraceRenderers(): void {
  registerTraceRenderer("llm-only", LlmOnlyTrace);
  registerTraceRenderer("vanilla-rag", VanillaRagTrace);
  registerTraceRenderer("pager", PagerTrace);
  registerTraceRenderer("activerag", ActiveRagTrace);
  registerTraceRenderer("rdr2", Rdr2Trace);
  registerTraceRenderer("ig2rag", Ig2RagTrace);
  registerTraceRenderer("crp-rag", CrpRagTrace);
  registerTraceRenderer("whole-document", WholeDocumentTrace);
  registerTraceRenderer("ircot", IrcotTrace);
}
