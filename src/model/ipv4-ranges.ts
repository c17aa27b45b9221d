// IPv4 addresses and ranges as scenarios write them (dotted quads, a.b.c.d/len).

/** The netns lab's node network (inside its fabric namespace): no scenario address may fall in it. */
export const LAB_NODE_NETWORK = '172.18.0.0/24';

export function ipToInt(ip: string): number {
  return ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}

export function overlaps(a: string, b: string): boolean {
  return cidrContains(a, b) || cidrContains(b, a);
}

export function cidrContains(outer: string, inner: string): boolean {
  const [oIp, oLen] = outer.split('/') as [string, string];
  const [iIp, iLen] = inner.split('/') as [string, string];
  if (Number(iLen) < Number(oLen)) return false;
  const mask = Number(oLen) === 0 ? 0 : (0xffffffff << (32 - Number(oLen))) >>> 0;
  return (ipToInt(oIp) & mask) >>> 0 === (ipToInt(iIp) & mask) >>> 0;
}
