// Keeping the end of a growing element in view, as Ask does with the turn
// being answered, until the person scrolls up to read something else;
// scrolling back down to its end follows it again.

/** The nearest ancestor that scrolls, or the document's scroller. */
function scrollParent(element: HTMLElement): HTMLElement {
  for (let el = element.parentElement; el; el = el.parentElement) {
    if (/(auto|scroll)/.test(getComputedStyle(el).overflowY)) return el;
  }
  return (document.scrollingElement as HTMLElement | null) ?? document.documentElement;
}

/** Where the scroller's visible part ends, in viewport coordinates. */
function visibleBottom(scroller: HTMLElement): number {
  return scroller === document.scrollingElement ? window.innerHeight : scroller.getBoundingClientRect().bottom;
}

/** Brings `element`'s end into view now and again each time it grows; returns the stop. */
export function followEnd(element: HTMLElement): () => void {
  const scroller = scrollParent(element);
  let following = true;
  let lastTop = scroller.scrollTop;

  const endHidden = () => element.getBoundingClientRect().bottom > visibleBottom(scroller) + 1;
  const reveal = (behavior: ScrollBehavior) => {
    if (following && endHidden()) element.scrollIntoView({ block: "end", behavior });
  };
  const onScroll = () => {
    const top = scroller.scrollTop;
    // Only the person scrolls up; following only ever scrolls down.
    if (top < lastTop) following = false;
    else if (!endHidden()) following = true;
    lastTop = top;
  };

  // The first report comes as soon as the element is observed: that one
  // glides (unless the person asked for reduced motion); text arriving a
  // few words at a time then reads best when it simply stays at the bottom.
  let first = !window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  const observer = new ResizeObserver(() => {
    reveal(first ? "smooth" : "auto");
    first = false;
  });
  observer.observe(element);
  const target: EventTarget = scroller === document.scrollingElement ? window : scroller;
  target.addEventListener("scroll", onScroll, { passive: true });
  return () => {
    observer.disconnect();
    target.removeEventListener("scroll", onScroll);
  };
}
