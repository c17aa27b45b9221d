// The loopback address as scenarios name it: a probe's `to: localhost` is the client's own 127.0.0.1, and a
// hostPort's `hostIP: 127.0.0.1` binds it to its node's loopback. 127.0.0.1 means the same on every provider.
export const LOCALHOST = 'localhost';
export const LOOPBACK_ADDRESS = '127.0.0.1';
