// tests/clients/sdk_client.mjs - the official MCP TypeScript SDK client (v1, StdioClientTransport
// and Client, on the machine's Node.js) against the real safepy server over stdio: connect,
// list tools, call run_python (success, Python error, timeout, state kept across calls in the
// default session), cancel a call through an AbortSignal and check that its worker is gone,
// then close and check that the server exits; with --imports data, a figure arrives intact as
// an image item, and show_figures gives it again.
//   node tests/clients/sdk_client.mjs NPM_DIR SAFEPY_BINARY
// NPM_DIR is the folder tests/clients/install filled. Exit 0 on success, 77 (skip) when the
// clients are not installed, 1 with a message on any failure.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const SKIP = 77;
const [npmDir, safepy] = process.argv.slice(2);
if (!npmDir || !safepy) {
  console.error('usage: node sdk_client.mjs NPM_DIR SAFEPY_BINARY');
  process.exit(2);
}
const sdkDir = join(npmDir, 'node_modules', '@modelcontextprotocol', 'sdk');
if (!existsSync(join(npmDir, '.installed')) || !existsSync(join(sdkDir, 'package.json'))) {
  console.error(`SKIP: the MCP clients are not installed in ${npmDir} (the clients_install test skipped or failed)`);
  process.exit(SKIP);
}

// The SDK lives in the build tree, not next to this file, so a bare specifier would not resolve
// from here: map the subpath through the package's "exports" map (its "import" condition).
const sdkPackage = JSON.parse(readFileSync(join(sdkDir, 'package.json'), 'utf8'));
const importSdk = (subpath) => {
  const pattern = sdkPackage.exports['./*'].import; // "./dist/esm/*"
  return import(pathToFileURL(join(sdkDir, pattern.replace('*', subpath))).href);
};
const { Client } = await importSdk('client/index.js');
const { StdioClientTransport } = await importSdk('client/stdio.js');

let step = 'start';
const fail = (message) => {
  console.error(`FAIL (${step}): ${message}`);
  process.exit(1);
};
const check = (condition, message) => { if (!condition) fail(message); };
const show = (value) => JSON.stringify(value)?.slice(0, 2000);
// An exception (a rejected request, a failed connect) is a failure of the current step.
process.on('uncaughtException', (error) => fail(error?.stack ?? String(error)));
// A hung server must not hang the test: give up well before CTest's own timeout.
setTimeout(() => fail('gave up after 100 s'), 100_000).unref();

// Descendants of a process, read from /proc/<pid>/task/*/children recursively.
const children = (pid) => {
  let tasks;
  try { tasks = readdirSync(`/proc/${pid}/task`); } catch { return []; }
  return tasks.flatMap((tid) => {
    try {
      return readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
    } catch { return []; }
  });
};
const descendants = (pid) => children(pid).flatMap((c) => [c, ...descendants(c)]);
// CPU ticks (utime + stime) a process has used, or -1.
const cpuTicks = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch { return -1; }
};
const alive = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch { return false; }
};
// Wait until the descendant count of pid has held still for 300 ms; return it.
const settledCount = async (pid, limitMs = 5000) => {
  let last = -1;
  let since = Date.now();
  for (const end = Date.now() + limitMs; Date.now() < end; await sleep(50)) {
    const n = descendants(pid).length;
    if (n !== last) { last = n; since = Date.now(); } else if (Date.now() - since >= 300) return n;
  }
  return last;
};

console.log(`SDK ${sdkPackage.version} on Node.js ${process.version}; server ${safepy}`);

// Start the server with args through the SDK's stdio transport; return the connected client.
const connect = async (args) => {
  const transport = new StdioClientTransport({ command: safepy, args, stderr: 'inherit' });
  const client = new Client({ name: 'safepy-sdk-test', version: '0.0.1' });
  await client.connect(transport);
  const pid = transport.pid;
  check(Number.isInteger(pid) && pid > 0, `transport.pid is ${pid}`);
  const info = client.getServerVersion();
  check(info?.name, `no serverInfo: ${show(info)}`);
  check(client.getServerCapabilities()?.tools, `no tools capability: ${show(client.getServerCapabilities())}`);
  console.log(`ok connect (${args.join(' ') || 'default limits'}): ${info.name} ${info.version}, pid ${pid}`);
  // callTool validates structuredContent against the outputSchema listTools cached.
  const run = (code, options = {}) =>
    client.callTool({ name: 'run_python', arguments: { code } }, undefined, { timeout: 30_000, ...options });
  return { client, pid, run };
};
// Close the client; the server must exit.
const close = async ({ client, pid }) => {
  const t0 = Date.now();
  await client.close();
  for (const end = Date.now() + 5000; alive(pid) && Date.now() < end;) await sleep(50);
  check(!alive(pid), `server ${pid} still alive 5 s after close()`);
  console.log(`ok close: server exited in ${Date.now() - t0} ms`);
};

// First server: a 2 s wall-clock limit, for the timeout case.
step = 'connect';
let server = await connect(['--timeout', '2']);
let { run } = server;

step = 'tools/list';
const { tools } = await server.client.listTools();
const tool = tools.find((t) => t.name === 'run_python');
check(tool, `run_python not listed: ${show(tools.map((t) => t.name))}`);
check(tool.inputSchema?.type === 'object' && tool.inputSchema.properties?.code, `bad inputSchema: ${show(tool.inputSchema)}`);
check(tool.inputSchema.required?.includes('code'), `inputSchema does not require code: ${show(tool.inputSchema)}`);
check(tool.outputSchema?.type === 'object' && tool.outputSchema.properties?.status, `bad outputSchema: ${show(tool.outputSchema)}`);
console.log(`ok tools/list: ${tools.map((t) => t.name).join(', ')}, with inputSchema and outputSchema`);

step = 'call: success';
let r = await run('print(1+1)');
check(!r.isError, `isError on success: ${show(r)}`);
check(r.content?.[0]?.type === 'text' && r.content[0].text.includes('2'), `content: ${show(r.content)}`);
check(r.structuredContent?.status === 'ok' && r.structuredContent.stdout === '2\n', `structuredContent: ${show(r.structuredContent)}`);
console.log('ok print(1+1): text and status ok');

step = 'call: Python error';
r = await run('1/0');
check(r.isError === true, `isError is ${r.isError}: ${show(r)}`);
check(r.structuredContent?.status === 'error', `status: ${show(r.structuredContent)}`);
check(r.structuredContent.error?.type === 'ZeroDivisionError', `error: ${show(r.structuredContent.error)}`);
check(r.content?.[0]?.text?.includes('ZeroDivisionError'), `content: ${show(r.content)}`);
console.log('ok 1/0: isError, status error, ZeroDivisionError');

step = 'call: timeout';
let t0 = Date.now();
r = await run('while True: pass');
check(r.isError === true, `isError is ${r.isError}: ${show(r)}`);
check(r.structuredContent?.status === 'timeout', `status: ${show(r.structuredContent)}`);
console.log(`ok while True (--timeout 2): isError, status timeout after ${Date.now() - t0} ms`);

step = 'call: state across calls';
r = await run('x = 21');
check(!r.isError, `x = 21: ${show(r)}`);
r = await run('x * 2');
check(!r.isError && r.structuredContent?.result === 42, `x * 2: ${show(r.structuredContent)}`);
console.log('ok x = 21; x * 2 -> 42 in the default session');

step = 'close';
await close(server);

// Second server, default limits (30 s): a worker gone within seconds of the abort was killed by
// the cancellation, not by the wall-clock limit.
step = 'connect';
server = await connect([]);
({ run } = server);
r = await run('x = 21');
check(!r.isError, `x = 21: ${show(r)}`);

step = 'call: cancel through an AbortSignal';
const before = await settledCount(server.pid);
// CPU each descendant had before the call: the zygote's start-up can outweigh the spinning
// worker's first 0.7 s on a loaded machine, so the worker is the one that gained the most.
const ticksBefore = new Map(descendants(server.pid).map((p) => [p, cpuTicks(p)]));
const controller = new AbortController();
t0 = Date.now();
const pending = run('while True: pass', { signal: controller.signal }).then(
  (result) => ({ result }), (error) => ({ error }));
await sleep(700);
// The process running the call is the one spinning: the descendant that gained the most CPU
// since the call started. (A session forks it ahead of the call, so it need not be new.)
const busiest = descendants(server.pid)
  .map((p) => [p, cpuTicks(p) - Math.max(0, ticksBefore.get(p) ?? 0)])
  .sort((a, b) => b[1] - a[1])[0];
const worker = busiest && busiest[1] > 0 ? [busiest[0]] : [];
controller.abort('test cancels the call');
const outcome = await pending;
check(outcome.error, `the aborted call resolved instead of rejecting: ${show(outcome.result)}`);
check(worker.length > 0, `no process under the server ran the call (${before} before)`);
let after = -1;
let left = worker;
for (const end = Date.now() + 5000; Date.now() < end; await sleep(50)) {
  left = worker.filter(alive);
  after = descendants(server.pid).length;
  if (left.length === 0 && after <= before) break;
}
check(left.length === 0, `worker process(es) ${left.join(' ')} still alive 5 s after the abort`);
check(after <= before, `server has ${after} descendants 5 s after the abort, ${before} before the call`);
console.log(`ok abort after 0.5 s: ${outcome.error.name ?? 'error'}; worker ${worker.join(' ')} gone, ` +
  `descendants back to ${after} (was ${before}) ${Date.now() - t0} ms after the call started`);

step = 'call after the cancel';
r = await run('x * 2');
check(!r.isError && r.structuredContent?.result === 42, `x * 2 after the cancel: ${show(r.structuredContent)}`);
console.log('ok the server still serves; the session is as before the cancelled call (x * 2 -> 42)');

step = 'close';
await close(server);

// Third server, --imports data: a figure comes back as an image item the SDK validates with the
// output schema, whose PNG decodes whole (every chunk's CRC, the pixels' rows inflate to the
// size the header says); show_figures gives the same bytes as content only.
step = 'connect (--imports data)';
server = await connect(['--imports', 'data']);
({ run } = server);
step = 'figure';
r = await run('import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title("growth")\n"drawn"',
  { timeout: 60_000 });
if (r.structuredContent?.error?.message?.includes('is not installed')) {
  console.log(`skip the figure: ${r.structuredContent.error.message}`);
} else {
  check(!r.isError && r.structuredContent?.status === 'ok', `figure call: ${show(r.structuredContent)}`);
  const described = r.structuredContent.images;
  check(Array.isArray(described) && described.length === 1, `structuredContent.images: ${show(described)}`);
  const item = r.content?.[1];
  check(item?.type === 'image' && item.mimeType === 'image/png', `content[1]: ${show(item)?.slice(0, 200)}`);
  const png = Buffer.from(item.data, 'base64');
  check(png.length === described[0].bytes, `${png.length} bytes, described ${described[0].bytes}`);
  check(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'no PNG signature');
  const { inflateSync } = await import('node:zlib');
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc32 = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  let off = 8, width = 0, height = 0, colorType = -1, depth = 0, chunks = 0;
  const idat = [];
  while (off < png.length) {
    const len = png.readUInt32BE(off);
    const type = png.toString('latin1', off + 4, off + 8);
    const body = png.subarray(off + 8, off + 8 + len);
    check(crc32(png.subarray(off + 4, off + 8 + len)) === png.readUInt32BE(off + 8 + len), `bad CRC in ${type}`);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0); height = body.readUInt32BE(4); depth = body[8]; colorType = body[9];
    }
    if (type === 'IDAT') idat.push(body);
    chunks++;
    off += 12 + len;
    if (type === 'IEND') break;
  }
  check(off === png.length, `${png.length - off} bytes after IEND`);
  check(width === described[0].width && height === described[0].height,
    `IHDR ${width}x${height}, described ${described[0].width}x${described[0].height}`);
  const channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[colorType];
  check(depth === 8 && channels, `depth ${depth}, color type ${colorType}`);
  const rows = inflateSync(Buffer.concat(idat));
  check(rows.length === height * (1 + width * channels), `pixels inflate to ${rows.length} bytes`);
  console.log(`ok figure: a ${width}x${height} PNG image item after the text, ${chunks} chunks, CRCs and pixels intact`);

  step = 'show_figures';
  const { tools: dataTools } = await server.client.listTools();
  const figuresTool = dataTools.find((t) => t.name === 'show_figures');
  check(figuresTool && !figuresTool.outputSchema, `show_figures: ${show(figuresTool)}`);
  const again = await server.client.callTool({ name: 'show_figures', arguments: {} });
  check(!again.isError && again.structuredContent === undefined, `show_figures: ${show(again).slice(0, 300)}`);
  check(again.content?.[1]?.type === 'image' && again.content[1].data === item.data, 'show_figures gave other bytes');
  console.log('ok show_figures: the same image, content only');
}
step = 'close';
await close(server);
console.log('PASS: SDK client');
process.exit(0);
