#!/usr/bin/env node
// @ts-check
// The one program the lab starts inside pods. Plain JavaScript so it starts in ~50 ms without a loader.
// Real clusters run it; the netns lab runs its native twin, pod-agent.c (same subcommands, arguments and
// output; test/lab/native-agent.test.ts), and this one only where gcc cannot build that.
//   http      --port P --name POD                      HTTP echo that answers with its pod name (and the client's
//             address:port as it saw it, header x-client-address); GET /bytes/N streams N bytes
//   udp       --port P --name POD                      answers every datagram with one line: its pod name and the
//             sender's address:port as it saw it (`web 10.244.1.2:20001`)
//   dns       --port P --name POD --record NAME=IP ... [--records FILE]
//             authoritative A-record server; FILE holds NAME=IP lines, read anew for each query
//   dns-query --server IP --port P --qname NAME --timeout MS [--sport P]
//             a resolver that reads the source of every reply (unconnected socket), so a reply from
//             an unexpected source is observed exactly, like old nslookup's "reply from unexpected source".
//   udp-query --server IP --port P --timeout MS [--sport P]
//             one datagram, then the first reply from anywhere (unconnected socket, as dns-query), the name
//             and client address a udp server answered with read from it
//   connect   --server IP --port P --timeout MS
//             one TCP connect(); prints the errno it failed with (curl 7.88 does not name it when no
//             packet left the pod: a local EHOSTUNREACH/ENETUNREACH/ECONNREFUSED)
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { parseArgs } from 'node:util';

const [command, ...rest] = process.argv.slice(2);
const { values } = parseArgs({
  args: rest,
  options: {
    port: { type: 'string' },
    name: { type: 'string' },
    record: { type: 'string', multiple: true },
    records: { type: 'string' },
    server: { type: 'string' },
    qname: { type: 'string' },
    timeout: { type: 'string' },
    sport: { type: 'string' },
  },
});
const port = Number(values.port ?? 0);

if (command === 'http') {
  const chunk = Buffer.alloc(256 * 1024, 0x61);
  const server = createServer((req, res) => {
    res.setHeader('x-served-by', values.name ?? '');
    res.setHeader('x-client-address', `${req.socket.remoteAddress}:${req.socket.remotePort}`);
    req.resume();
    // GET /bytes/N streams N bytes (a large download), honouring backpressure
    const bytes = /^\/bytes\/(\d+)$/.exec(req.url ?? '');
    if (!bytes) return res.end(`${values.name}\n`);
    let left = Number(bytes[1]);
    res.setHeader('content-length', String(left));
    res.setHeader('content-type', 'application/octet-stream');
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('error', () => {});
    pump();
  });
  server.keepAliveTimeout = 1000;
  server.listen(port, '0.0.0.0', () => console.log(`ready http ${port}`));
} else if (command === 'udp') {
  const socket = createSocket('udp4');
  socket.on('message', (_msg, peer) =>
    socket.send(`${values.name ?? ''} ${peer.address}:${peer.port}\n`, peer.port, peer.address),
  );
  socket.bind(port, '0.0.0.0', () => console.log(`ready udp ${port}`));
} else if (command === 'dns') {
  // every record of a name is answered, in the order given (a headless Service: one per endpoint); a
  // --records file is read anew for each query, so a change shows at once (CoreDNS's watch)
  const byName = (/** @type {string[]} */ lines) => {
    /** @type {Map<string, string[]>} */
    const out = new Map();
    for (const r of lines) {
      const [name = '', ip = ''] = r.trim().toLowerCase().split('=');
      if (name) out.set(name, [...(out.get(name) ?? []), ...(ip ? [ip] : [])]);
    }
    return out;
  };
  const fixed = byName(values.record ?? []);
  const file = values.records;
  const current = () => (file ? byName(readFileSync(file, 'utf8').split('\n')) : fixed);
  const socket = createSocket('udp4');
  socket.on('message', (msg, peer) => {
    const q = parseQuestion(msg);
    if (!q) return;
    // a known name without a record of the asked type is NODATA (NOERROR, no answer), not NXDOMAIN
    const records = current();
    const known = records.has(q.name);
    const ips = q.type === 1 ? (records.get(q.name) ?? []) : [];
    socket.send(answer(msg, q, ips, known), peer.port, peer.address);
  });
  socket.bind(port, '0.0.0.0', () => console.log(`ready dns ${port}`));
} else if (command === 'dns-query') {
  const server = String(values.server);
  const deadline = Number(values.timeout ?? 1000);
  const id = Math.floor(Math.random() * 0xffff);
  const socket = createSocket('udp4');
  const started = performance.now();
  /** @type {{from: string, rcode: number, answers: string[]}[]} */
  const replies = [];
  const finish = (/** @type {string} */ outcome) => {
    console.log(
      JSON.stringify({
        outcome,
        server: `${server}#${port}`,
        replies,
        // the port the kernel chose: the probe knows its own reply by it, whatever NAT did to the reply's source
        sport: socket.address().port,
        durationMs: Math.round(performance.now() - started),
      }),
    );
    socket.close();
  };
  const timer = setTimeout(() => finish(replies.length > 0 ? 'unexpected-source' : 'timeout'), deadline);
  socket.on('message', (msg, peer) => {
    if (msg.readUInt16BE(0) !== id) return;
    const reply = { from: `${peer.address}#${peer.port}`, rcode: (msg[3] ?? 0) & 0x0f, answers: parseAnswers(msg) };
    replies.push(reply);
    // either reply is conclusive: from the server it is the answer; from anywhere else it is the symptom
    // (old nslookup printed "reply from unexpected source" and kept waiting for a reply that never came)
    clearTimeout(timer);
    finish(peer.address === server && peer.port === port ? 'ok' : 'unexpected-source');
  });
  const send = () => socket.send(query(id, String(values.qname)), port, server);
  // a fixed source port: the same conntrack entry for every query, as a resolver reusing its socket
  if (values.sport) socket.bind(Number(values.sport), '0.0.0.0', send);
  else send();
} else if (command === 'udp-query') {
  const server = String(values.server);
  const socket = createSocket('udp4');
  const started = performance.now();
  /** @type {{from: string, bytes: number, servedBy?: string, clientAddress?: string}[]} */
  const replies = [];
  const finish = (/** @type {string} */ outcome) => {
    console.log(
      JSON.stringify({
        outcome,
        server: `${server}#${port}`,
        replies,
        durationMs: Math.round(performance.now() - started),
      }),
    );
    socket.close();
  };
  const timer = setTimeout(() => finish('timeout'), Number(values.timeout ?? 1000));
  // the first datagram to this socket is the reply, wherever it came from: from the server it is the answer,
  // from anywhere else the symptom
  socket.on('message', (msg, peer) => {
    replies.push({ from: `${peer.address}#${peer.port}`, bytes: msg.length, ...echoFields(msg) });
    clearTimeout(timer);
    finish(peer.address === server && peer.port === port ? 'ok' : 'unexpected-source');
  });
  const send = () => socket.send('hostname\n', port, server);
  // a fixed source port: the same conntrack entry for every datagram, as a client reusing its socket (nc -u -p)
  if (values.sport) socket.bind(Number(values.sport), '0.0.0.0', send);
  else send();
} else if (command === 'connect') {
  const started = performance.now();
  const socket = connect({ host: String(values.server), port });
  const done = (/** @type {string | null} */ errno) => {
    console.log(JSON.stringify({ errno, durationMs: Math.round(performance.now() - started) }));
    socket.destroy();
  };
  socket.setTimeout(Number(values.timeout ?? 1000), () => done('ETIMEDOUT'));
  socket.on('connect', () => done(null));
  socket.on('error', (/** @type {NodeJS.ErrnoException} */ e) => done(e.code ?? e.message));
} else {
  console.error('usage: pod-agent http|udp|dns|dns-query|udp-query|connect ...');
  process.exit(2);
}

/** @param {number} id @param {string} name */
function query(id, name) {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2); // recursion desired
  header.writeUInt16BE(1, 4);
  return Buffer.concat([header, encodeName(name), Buffer.from([0, 1, 0, 1])]);
}

/** @param {string} name */
function encodeName(name) {
  const parts = name
    .replace(/\.$/, '')
    .split('.')
    .map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  return Buffer.concat([...parts, Buffer.from([0])]);
}

/** @param {Buffer} msg */
function parseQuestion(msg) {
  if (msg.length < 17 || msg.readUInt16BE(4) !== 1) return undefined;
  const labels = [];
  let o = 12;
  while (o < msg.length && msg[o] !== 0) {
    const len = /** @type {number} */ (msg[o]);
    labels.push(msg.subarray(o + 1, o + 1 + len).toString());
    o += len + 1;
  }
  if (o + 5 > msg.length) return undefined;
  return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(o + 1), end: o + 5 };
}

/** @param {Buffer} msg @param {{end: number}} q @param {string[]} ips @param {boolean} known */
function answer(msg, q, ips, known) {
  const header = Buffer.from(msg.subarray(0, 12));
  header.writeUInt16BE(0x8400 | (known ? 0 : 3), 2); // response, authoritative, NOERROR or NXDOMAIN
  header.writeUInt16BE(ips.length, 6);
  header.writeUInt32BE(0, 8);
  const question = msg.subarray(12, q.end);
  const rrs = ips.map((ip) => {
    const rr = Buffer.alloc(16);
    rr.writeUInt16BE(0xc00c, 0); // pointer to the question name
    rr.writeUInt16BE(1, 2);
    rr.writeUInt16BE(1, 4);
    rr.writeUInt32BE(5, 6);
    rr.writeUInt16BE(4, 10);
    for (const [i, b] of ip.split('.').entries()) rr.writeUInt8(Number(b), 12 + i);
    return rr;
  });
  return Buffer.concat([header, question, ...rrs]);
}

/** A-record answers of a reply we built ourselves: fixed 16-byte records after the question. @param {Buffer} msg */
function parseAnswers(msg) {
  const q = parseQuestion(msg);
  if (!q) return [];
  const out = [];
  for (let i = 0, o = q.end; i < msg.readUInt16BE(6) && o + 16 <= msg.length; i++, o += 16) {
    if (msg.readUInt16BE(o + 2) === 1 && msg.readUInt16BE(o + 10) === 4)
      out.push([...msg.subarray(o + 12, o + 16)].join('.'));
  }
  return out;
}

/**
 * The name and client address a udp server answered with (`NAME ADDRESS:PORT`, one optional newline); a reply
 * of one word names only the server (agnhost netexec answers `hostname` so); anything else names nothing.
 * @param {Buffer} msg
 */
function echoFields(msg) {
  const m = /^([A-Za-z0-9._-]{1,253})(?: ([0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}:[0-9]{1,5}))?\n?$/.exec(
    msg.toString('latin1'),
  );
  if (!m) return {};
  return m[2] ? { servedBy: m[1], clientAddress: m[2] } : { servedBy: m[1] };
}
