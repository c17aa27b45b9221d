// Runs inside a namespace of the run where the API server's address is (the `local` cluster's fabric, a
// private Docker engine's network): a unix socket (a file, reachable from the harness in the root namespace
// without any address there) forwarded to that address.
// Usage: node api-forwarder.mjs SOCKET HOST PORT. Prints `ready SOCKET` once listening.
import { createConnection, createServer } from 'node:net';
import { rmSync } from 'node:fs';

const [socket = '', host = '', port = ''] = process.argv.slice(2);
rmSync(socket, { force: true });
const server = createServer((client) => {
  const upstream = createConnection({ host, port: Number(port) });
  client.pipe(upstream).pipe(client);
  const end = () => (client.destroy(), upstream.destroy());
  client.on('error', end);
  upstream.on('error', end);
  client.on('close', end);
  upstream.on('close', end);
});
server.listen(socket, () => console.log(`ready ${socket}`));
// nothing to flush: clients reconnect or are gone with the cluster
for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => process.exit(0));
