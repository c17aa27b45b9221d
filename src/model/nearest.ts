// "did you mean ...": the closest known name to a mistyped one, by edit distance. Only close
// matches count (a third of the name's length at most), so an unrelated word suggests nothing.

export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** The known name nearest to `name`, if it is close enough to be a typo of it. */
export function nearest(name: string, known: readonly string[]): string | undefined {
  const limit = Math.max(2, Math.floor(name.length / 3));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of known) {
    // a prefix of a long id (`run br-netfilter-dns`) is as good a hint as a typo
    const distance =
      candidate.startsWith(name) && name.length >= 4 ? 1 : editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}
