// Citation markers as models write them: `[2]`, `[1, 3]`, `[2-3]` (a range).
// Mirrors the engine's `cited_numbers` so the buttons in an answer match the
// citations the run stored.

const MAX_RANGE = 20;

/** The numbers inside one bracket group, or null when it is not a citation. */
export function parseCitationGroup(inside: string): number[] | null {
  const numbers: number[] = [];
  for (const raw of inside.split(/[,;]/)) {
    const part = raw.trim();
    const range = /^(\d+)\s*[-–]\s*(\d+)$/.exec(part);
    if (range) {
      const a = Number(range[1]);
      const b = Number(range[2]);
      if (b < a || b - a > MAX_RANGE) return null;
      for (let n = a; n <= b; n++) numbers.push(n);
    } else if (/^\d+$/.test(part)) {
      numbers.push(Number(part));
    } else {
      return null;
    }
  }
  return numbers;
}
