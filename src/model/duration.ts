// Durations in scenario files: milliseconds as a number, or a string such as 800ms / 1.5s.
export function durationMs(d: number | string): number {
  if (typeof d === 'number') return d;
  const n = Number.parseFloat(d);
  return d.endsWith('ms') ? n : n * 1000;
}
