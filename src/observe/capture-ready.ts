/**
 * How long a capture may take to print tcpdump's "listening on": milliseconds in a lab namespace; seconds
 * beside a real node, where the capture is a container started for it on a loaded machine. Only a capture
 * that never starts waits this long: readiness is the line itself.
 */
export const CAPTURE_READY_MS = 30_000;
