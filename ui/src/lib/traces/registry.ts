// Which component draws a run's trace, by method id. Each method's renderer
// lives in its own file next to this one and is registered in builtin.ts;
// methods without one fall back to a collapsible JSON view.
import type { Component } from "svelte";
import type { RunRecord } from "$lib/bindings/RunRecord";
import type { SourceTarget } from "$lib/source";
import GenericTrace from "./GenericTrace.svelte";

export type TraceProps = {
  // Each renderer narrows this to its method's variant of the generated Trace type.
  trace: any;
  run?: RunRecord;
  onCite?: (target: SourceTarget) => void;
  // Set while a live trace is drawn, so unfinished parts can read as pending.
  running?: boolean;
};

export type TraceRenderer = Component<TraceProps>;

const renderers = new Map<string, TraceRenderer>();

export function registerTraceRenderer(method: string, component: TraceRenderer): void {
  renderers.set(method, component);
}

export function rendererFor(method: string): TraceRenderer {
  return renderers.get(method) ?? GenericTrace;
}
