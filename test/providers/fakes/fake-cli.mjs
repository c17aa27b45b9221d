#!/usr/bin/env node
// @ts-check
// Stands in for kind, minikube, helm, kubectl and docker in the provider contract tests: appends
// {tool, argv[, stdin][, config]} as a JSON line to $NETREPRO_FAKE_LOG and answers from the canned
// replies in $NETREPRO_FAKE_REPLIES ([{tool, args: leading argv, stdout, stderr, exitCode}], first match wins).
import { appendFileSync, readFileSync } from 'node:fs';

/** @typedef {{ tool: string, args: string[], stdout?: string, stderr?: string, exitCode?: number }} Reply */
const [tool = '', ...argv] = process.argv.slice(2);
/** @type {{ tool: string, argv: string[], stdin?: string, config?: string }} */
const entry = { tool, argv };
// only `tee` reads its input; reading stdin for every call could wait on an open pipe
if (argv.includes('tee')) entry.stdin = readFileSync(0, 'utf8');
// a config file handed over by path (kind --config) is recorded too: it is removed with the run directory
const config = argv[argv.indexOf('--config') + 1];
if (argv.includes('--config') && config) entry.config = readFileSync(config, 'utf8');
appendFileSync(String(process.env.NETREPRO_FAKE_LOG), JSON.stringify(entry) + '\n');
/** @type {Reply[]} */
const replies = process.env.NETREPRO_FAKE_REPLIES ? JSON.parse(readFileSync(process.env.NETREPRO_FAKE_REPLIES, 'utf8')) : [];
const reply = replies.find((r) => r.tool === tool && r.args.every((a, i) => argv[i] === a));
if (reply?.stdout) process.stdout.write(reply.stdout);
if (reply?.stderr) process.stderr.write(reply.stderr);
process.exit(reply?.exitCode ?? 0);
