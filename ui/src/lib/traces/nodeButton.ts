// A graph's node is an SVG group, which is no control to a keyboard or a
// screen reader; this makes it a toggle button, alike in every graph.

export interface NodeButtonEvents {
  /** The node pointed at or focused, and null when it is left or blurred. */
  hover: (id: number | null) => void;
  /** The node picked, or null to pick none. */
  pick: (id: number | null) => void;
}

/**
 * The attributes and handlers to spread onto node `id`'s `<g>`, with
 * `picked` the node picked now: a click, Enter or Space picks the node, or
 * unpicks it if it is the one picked; Escape unpicks whichever is.
 */
export function nodeButton(id: number, picked: number | null, { hover, pick }: NodeButtonEvents) {
  const toggle = () => pick(picked === id ? null : id);
  return {
    tabindex: 0,
    role: "button" as const,
    "aria-pressed": picked === id,
    onmouseenter: () => hover(id),
    onmouseleave: () => hover(null),
    onfocus: () => hover(id),
    onblur: () => hover(null),
    onclick: toggle,
    onkeydown: (event: KeyboardEvent) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        toggle();
      } else if (event.key === "Escape") {
        pick(null);
      }
    },
  };
}
