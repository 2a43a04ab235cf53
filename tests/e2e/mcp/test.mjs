// End-to-end tests of `cordon mcp` driven by the official MCP TypeScript SDK, as an MCP client
// (Claude Code, editors, ...) would drive it, plus raw JSON-RPC for hostile input.
//
//   node test.mjs /path/to/cordon        (run ./setup.sh once first: it installs the SDK)
//
// Exit 77 (ctest SKIP_RETURN_CODE) when the SDK is not installed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const cordon = process.argv[2] ?? process.env.CORDON_BIN;
if (!fs.existsSync(path.join(here, 'node_modules', '@modelcontextprotocol', 'sdk'))) {
  console.log('SKIP: @modelcontextprotocol/sdk is not installed; run tests/e2e/mcp/setup.sh');
  process.exit(77);
}
if (!cordon || !fs.existsSync(cordon)) {
  console.error(`usage: node test.mjs /path/to/cordon (got ${cordon})`);
  process.exit(2);
}

const { test, after } = await import('node:test');
const assert = (await import('node:assert/strict')).default;
const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');

// A private workspace and config home: the test never reads the user's own cordon config.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-mcp-e2e-'));
const workspace = path.join(scratch, 'workspace');
const configHome = path.join(scratch, 'config');
fs.mkdirSync(workspace);
fs.mkdirSync(configHome);
// CORDON_RUN_SERVER=off: the `cordon run`s here neither use a run server the machine may have
// nor start one that would outlive the test (decision 0030).
// XDG_STATE_HOME: where a server that cannot start logs why (docs/mcp.md).
const stateHome = path.join(scratch, 'state');
const env = { ...process.env, XDG_CONFIG_HOME: configHome, XDG_STATE_HOME: stateHome, CORDON_RUN_SERVER: 'off' };
const clients = [];
after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  fs.rmSync(scratch, { recursive: true, force: true });
});

// The person in the loop: approves when the justification says APPROVE, declines otherwise.
async function connect({ elicitation = true, args = ['mcp', '--structured-output', '--workspace', workspace], extraEnv = {} } = {}) {
  const transport = new StdioClientTransport({
    command: cordon,
    args,
    env: { ...env, ...extraEnv },
    stderr: 'ignore',
  });
  const client = new Client(
    { name: 'cordon-e2e', version: '1.0.0' },
    { capabilities: elicitation ? { elicitation: {} } : {} },
  );
  if (elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const approve = request.params.message.includes('APPROVE');
      return approve ? { action: 'accept', content: { approve: true } } : { action: 'decline' };
    });
  }
  await client.connect(transport);
  clients.push(client);
  return client;
}

function run(client, args, options) {
  return client.callTool({ name: 'run_command', arguments: args }, undefined, options);
}

// Processes on this machine whose command line contains `needle` (the sandbox's PID namespace
// is nested in ours, so its processes are visible here).
function processesMatching(needle) {
  const found = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmdline.includes(needle)) found.push(pid);
    } catch {}
  }
  return found;
}

async function waitUntil(predicate, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await predicate()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return predicate();
}

// Offered in every session besides run_command (docs/mcp.md).
const backgroundTools = ['read_background', 'start_background', 'stop_background'];
const toolNames = async (client) => (await client.listTools()).tools.map((t) => t.name).sort();

const shared = await connect();

// Killing a running command on notifications/cancelled or EOF goes through
// CommandRequest::cancel_fd (docs/mcp.md).
const cancelTodo = false;

test('initialize reports the server and the sandbox capabilities', () => {
  assert.equal(shared.getServerVersion().name, 'cordon');
  const caps = shared.getServerCapabilities();
  assert.ok(caps.tools);
  const sandbox = caps.experimental['cordon/sandbox'];
  assert.equal(sandbox.mode, 'workspace_write');
  assert.equal(sandbox.network, 'deny');
  assert.equal(sandbox.can_run, true, `this machine cannot run the sandbox: ${sandbox.missing}`);
  assert.match(shared.getInstructions(), /run_command/);
});

// The default result is lean: the text the model reads, no outputSchema and no
// structuredContent, which Claude Code and Codex hand to the model in the text's place (issue 27,
// decision 0059). Its twin, --structured-output, is the shared client every other test uses.
test('without --structured-output a result is its text alone', async () => {
  const lean = await connect({ args: ['mcp', '--workspace', workspace] });
  for (const tool of (await lean.listTools()).tools) {
    assert.equal(tool.outputSchema, undefined, `${tool.name} declares an outputSchema`);
  }
  const ran = await run(lean, { command: 'echo lean-hi' });
  assert.equal(ran.structuredContent, undefined);
  assert.equal(ran.isError, false);
  assert.match(ran.content[0].text, /exit code 0[\s\S]*lean-hi/);
  const refused = await run(lean, { command: 'sudo id' });
  assert.equal(refused.structuredContent, undefined);
  assert.equal(refused.isError, true);
  assert.match(refused.content[0].text, /NOT RUN: denied/);
  const structured = (await shared.listTools()).tools.find((t) => t.name === 'run_command');
  assert.ok(structured.outputSchema, 'the --structured-output twin declares an outputSchema');
});

// A server that cannot start (a workspace it refuses, a malformed config) still answers
// initialize, so that the client connects and shows why (issue 27: every client said only
// "failed to connect"); every call is refused with the reason, and it exits 125 at EOF. The
// twin, a server that starts, is the shared client above.
test('a cordon mcp that cannot start connects and says why on every call', async () => {
  const log = path.join(stateHome, 'cordon', 'mcp.log');
  // The twin: the servers that started (the shared one, the lean one) logged nothing.
  assert.equal(fs.existsSync(log), false, 'a server that started wrote mcp.log');
  const rooted = await connect({ args: ['mcp', '--structured-output', '--workspace', '/'] });
  assert.equal(rooted.getServerCapabilities().experimental['cordon/sandbox'].can_run, false);
  assert.match(rooted.getInstructions(), /the workspace cannot be \//);
  const refused = await run(rooted, { command: 'echo hi > ran.txt' });
  assert.equal(refused.isError, true);
  assert.match(refused.content[0].text, /the workspace cannot be \//);
  const badHome = path.join(scratch, 'config-bad');
  fs.mkdirSync(path.join(badHome, 'cordon'), { recursive: true });
  fs.writeFileSync(path.join(badHome, 'cordon', 'config.json'), '{"sandbox": {"mode": "sideways"}}');
  const broken = await connect({ extraEnv: { XDG_CONFIG_HOME: badHome } });
  const said = await run(broken, { command: 'echo hi > ran.txt' });
  assert.equal(said.isError, true);
  assert.match(said.content[0].text, /sideways/);
  assert.equal(fs.existsSync(path.join(workspace, 'ran.txt')), false);
  const initialize = JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });
  const exited = spawnSync(cordon, ['mcp', '--workspace', '/'], { env, input: initialize + '\n', encoding: 'utf8' });
  assert.equal(exited.status, 125, exited.stderr);
  assert.match(exited.stdout, /"protocolVersion"/);
  assert.match(exited.stderr, /the workspace cannot be \//);
  assert.match(exited.stderr, new RegExp(`the reason is also in ${log}`));
  // Each server that could not start left its reason, with the time and its directory.
  const lines = fs.readFileSync(log, 'utf8').trim().split('\n');
  assert.equal(lines.length, 3, lines.join('\n'));
  assert.match(lines[0], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ cordon mcp \(pid \d+\) in .*: .*the workspace cannot be \//);
  assert.match(lines[1], /sideways/);
  assert.equal(fs.statSync(log).mode & 0o777, 0o600);
});

test('tools/list offers run_command with input and output schemas', async () => {
  const { tools } = await shared.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), [...backgroundTools, 'run_command'].sort());
  const runCommand = tools.find((t) => t.name === 'run_command');
  assert.deepEqual(runCommand.inputSchema.required, ['command']);
  assert.ok(runCommand.outputSchema.properties.exit_code);
  assert.match(runCommand.description, /network deny/);
  const start = tools.find((t) => t.name === 'start_background');
  assert.match(start.description, /share one private network namespace/);
  assert.equal(start.inputSchema.properties.outside_sandbox, undefined);
});

test('a command runs and returns text and structured content', async () => {
  const result = await run(shared, { command: 'echo hi' });
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.stdout, 'hi\n');
  assert.equal(result.structuredContent.exit_code, 0);
  assert.match(result.content[0].text, /hi/);
});

test('a denied command is a tool result explaining itself, and did not run', async () => {
  const result = await run(shared, { command: 'sudo true' });
  assert.equal(result.isError, true);
  assert.equal(result.structuredContent.denied, true);
  assert.equal(result.structuredContent.exit_code, 126);
  assert.ok(result.structuredContent.reason.length > 0);
  assert.match(result.content[0].text, /NOT RUN: denied/);
});

test('a cwd outside the workspace is refused as a tool error', async () => {
  const result = await run(shared, { command: 'pwd', cwd: '/etc' });
  assert.equal(result.isError, true);
  assert.match(result.content[0].text, /outside the workspace/);
});

test('output streams as progress notifications while the command runs', async () => {
  const progress = [];
  const result = await run(
    shared,
    { command: 'for i in 1 2 3; do echo tick $i; sleep 0.3; done' },
    { onprogress: (p) => progress.push(p) },
  );
  assert.equal(result.isError, false);
  assert.ok(progress.length >= 2, `expected several progress notifications, got ${progress.length}`);
  for (let i = 1; i < progress.length; ++i) assert.ok(progress[i].progress > progress[i - 1].progress);
  const streamed = progress.map((p) => p.message ?? '').join('');
  assert.match(streamed, /tick 1/);
  assert.match(streamed, /tick 3/);
});

test('cancelling a call kills its whole process tree promptly', { todo: cancelTodo }, async () => {
  const controller = new AbortController();
  const call = run(shared, { command: 'sleep 3017 & sleep 3017; wait' }, { signal: controller.signal });
  assert.ok(await waitUntil(() => processesMatching('sleep 3017').length >= 2, 5000), 'never started');
  const started = Date.now();
  controller.abort('test cancels');
  await assert.rejects(call);
  assert.ok(Date.now() - started < 1000);
  assert.ok(await waitUntil(() => processesMatching('sleep 3017').length === 0, 3000),
            'the cancelled command is still running');
  // The server still serves afterwards.
  assert.equal((await run(shared, { command: 'echo after' })).structuredContent.stdout, 'after\n');
});

// A TCP port nothing on the host listens on right now.
async function freeHostPort() {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function hostConnects(port) {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.on('connect', () => (socket.destroy(), resolve(true)));
    socket.on('error', () => resolve(false));
  });
}

function background(client, name, args) {
  return client.callTool({ name, arguments: args });
}

test('a background server is reached by the next run_command, never by the host, and stops', async () => {
  const port = await freeHostPort();
  const fetch = `python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:${port}/').status)"`;
  // Twin first: before the server, the fetch fails.
  assert.notEqual((await run(shared, { command: fetch })).structuredContent.exit_code, 0);
  const started = await background(shared, 'start_background', {
    command: `exec python3 -u -m http.server ${port} --bind 127.0.0.1`,
  });
  assert.equal(started.isError, false, JSON.stringify(started));
  const { id } = started.structuredContent;
  assert.match(id, /^bg-\d+$/);
  let log = started.structuredContent.stdout;
  for (let i = 0; i < 20 && !log.includes('Serving HTTP'); ++i) {
    const read = await background(shared, 'read_background', { id, wait_seconds: 1 });
    assert.equal(read.structuredContent.running, true, JSON.stringify(read));
    log += read.structuredContent.stdout;
  }
  assert.match(log, /Serving HTTP/);
  const fetched = await run(shared, { command: fetch });
  assert.equal(fetched.structuredContent.stdout, '200\n', JSON.stringify(fetched.structuredContent));
  assert.equal(await hostConnects(port), false, 'the host reached the session\'s server');
  // The request shows in the server's log, read once.
  const logged = await background(shared, 'read_background', { id, wait_seconds: 2 });
  assert.match(logged.structuredContent.stderr, /"GET \/ HTTP\/1\.1" 200/);
  const again = await background(shared, 'read_background', { id });
  assert.equal(again.structuredContent.stderr, '');

  const stopped = await background(shared, 'stop_background', { id });
  assert.equal(stopped.structuredContent.status, 'stopped');
  assert.equal(processesMatching(`http.server ${port}`).length, 0, 'the server outlived stop');
  assert.notEqual((await run(shared, { command: fetch })).structuredContent.exit_code, 0);
});

test('a refused background command is the answer of start_background; bad ids are tool errors', async () => {
  const refused = await background(shared, 'start_background', { command: 'sudo id' });
  assert.equal(refused.isError, true);
  assert.equal(refused.structuredContent.status, 'denied');
  const unknown = await background(shared, 'read_background', { id: 'bg-999' });
  assert.equal(unknown.isError, true);
  assert.match(unknown.content[0].text, /no background command 'bg-999'/);
});

test('background commands end with the session', async () => {
  const client = await connect();
  const started = await background(client, 'start_background', { command: 'sleep 3019 & sleep 3019; wait' });
  assert.equal(started.structuredContent.running, true, JSON.stringify(started));
  assert.ok(await waitUntil(() => processesMatching('sleep 3019').length >= 2, 5000), 'never started');
  await client.close();
  assert.ok(await waitUntil(() => processesMatching('sleep 3019').length === 0, 5000),
            'a background command outlived its session');
});

test('concurrent calls run together and a slow one does not hold up a fast one', async () => {
  const order = [];
  const slow = run(shared, { command: 'sleep 1; echo slow' }).then((r) => (order.push('slow'), r));
  const fast = run(shared, { command: 'echo fast' }).then((r) => (order.push('fast'), r));
  const [s, f] = await Promise.all([slow, fast]);
  assert.equal(s.structuredContent.stdout, 'slow\n');
  assert.equal(f.structuredContent.stdout, 'fast\n');
  assert.deepEqual(order, ['fast', 'slow']);
});

test('an approved outside_sandbox request runs that one command outside the sandbox', async () => {
  const marker = path.join(os.tmpdir(), `cordon-e2e-outside-${process.pid}`);
  fs.rmSync(marker, { force: true });
  // Inside the sandbox the host's /tmp is out of reach: the workspace lies in it, so there it is
  // an empty read-only view (the write fails, decision 0046), and the host never sees the file.
  const inside = await run(shared, { command: `echo in > ${marker}` });
  assert.notEqual(inside.structuredContent.exit_code, 0, JSON.stringify(inside.structuredContent));
  assert.equal(fs.existsSync(marker), false);
  const outside = await run(shared, {
    command: `echo out > ${marker}`,
    outside_sandbox: true,
    justification: 'APPROVE: the test needs to write to the host /tmp',
  });
  assert.equal(outside.isError, false, outside.content[0].text);
  assert.equal(outside.structuredContent.outside_sandbox, true);
  assert.equal(fs.readFileSync(marker, 'utf8'), 'out\n');
  fs.rmSync(marker, { force: true });
});

test('a declined outside_sandbox request runs nothing and says why', async () => {
  const marker = path.join(os.tmpdir(), `cordon-e2e-declined-${process.pid}`);
  const result = await run(shared, {
    command: `echo out > ${marker}`,
    outside_sandbox: true,
    justification: 'DECLINE me',
  });
  assert.equal(result.isError, true);
  assert.equal(result.structuredContent.denied, true);
  assert.equal(result.structuredContent.decision.rule_id, 'outside_sandbox.declined');
  assert.match(result.content[0].text, /declined/);
  assert.equal(fs.existsSync(marker), false);
});

test('a client without elicitation cannot get a command out of the sandbox', async () => {
  const client = await connect({ elicitation: false });
  const result = await run(client, {
    command: 'true',
    outside_sandbox: true,
    justification: 'APPROVE',
  });
  assert.equal(result.structuredContent.decision.rule_id, 'outside_sandbox.unsupported');
});

// Raw JSON-RPC over the child's stdio, for what no SDK would send.
function rawServer() {
  const child = spawn(cordon, ['mcp', '--structured-output', '--workspace', workspace], {
    env,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  let buffer = '';
  const messages = [];
  const waiters = [];
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      messages.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
      for (const w of waiters.splice(0)) w();
    }
  });
  child.stdin.on('error', () => {});
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    send: (line) => child.stdin.write(line + '\n'),
    async next(predicate, ms = 10000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const i = messages.findIndex(predicate);
        if (i >= 0) return messages.splice(i, 1)[0];
        if (Date.now() > deadline) throw new Error('no matching message');
        await new Promise((r) => { waiters.push(r); setTimeout(r, 100); });
      }
    },
  };
}
const init = JSON.stringify({
  jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

test('hostile input gets JSON-RPC errors and a 100 MB line costs bounded memory', async () => {
  const s = rawServer();
  s.send(init);
  await s.next((m) => m.id === 0);
  s.send('{"jsonrpc":"2.0","id":1,');
  assert.equal((await s.next((m) => m.error?.code === -32700)).id, null);
  s.send('[{"jsonrpc":"2.0","id":2,"method":"ping"}]');
  assert.equal((await s.next((m) => m.error?.code === -32600)).id, null);
  s.send('{"jsonrpc":"2.0","id":3,"method":"no/such/method"}');
  assert.equal((await s.next((m) => m.id === 3)).error.code, -32601);
  s.send('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":7}}');
  assert.equal((await s.next((m) => m.id === 4)).error.code, -32602);

  const chunk = Buffer.alloc(1 << 20, 'a');
  for (let i = 0; i < 100; ++i) {
    if (!s.child.stdin.write(chunk)) await new Promise((r) => s.child.stdin.once('drain', r));
  }
  s.send('');
  const oversized = await s.next((m) => m.error?.code === -32600 && /longer than/.test(m.error.message));
  assert.equal(oversized.id, null);
  s.send('{"jsonrpc":"2.0","id":5,"method":"ping"}');
  assert.deepEqual((await s.next((m) => m.id === 5)).result, {});
  const status = fs.readFileSync(`/proc/${s.child.pid}/status`, 'utf8');
  const peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)[1]);
  assert.ok(peakKb < 64 * 1024, `peak resident memory ${peakKb} kB after a 100 MB line`);
  s.child.stdin.end();
  assert.equal(await s.exited, 0);
});

test('EOF on stdin kills running commands and exits 0', { todo: cancelTodo }, async () => {
  const s = rawServer();
  s.send(init);
  await s.next((m) => m.id === 0);
  s.send(JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'tools/call',
    params: { name: 'run_command', arguments: { command: 'sleep 3018' } },
  }));
  assert.ok(await waitUntil(() => processesMatching('sleep 3018').length > 0, 5000), 'never started');
  const started = Date.now();
  s.child.stdin.end();
  assert.equal(await s.exited, 0);
  assert.ok(Date.now() - started < 5000, 'the server took too long to exit');
  assert.equal(processesMatching('sleep 3018').length, 0);
});

// Worktree mode: a main repository with one commit and a linked worktree beside it.
const identity = {
  GIT_AUTHOR_NAME: 'Cordon E2E',
  GIT_AUTHOR_EMAIL: 'e2e@cordon.invalid',
  GIT_COMMITTER_NAME: 'Cordon E2E',
  GIT_COMMITTER_EMAIL: 'e2e@cordon.invalid',
};
function git(dir, ...args) {
  return execFileSync('git', ['-C', dir, ...args], { env: { ...env, ...identity }, encoding: 'utf8' }).trim();
}
// A repository at `dir` with one commit of README on main.
function makeRepository(dir) {
  fs.mkdirSync(dir);
  git(dir, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(dir, 'README'), 'hello\n');
  git(dir, 'add', 'README');
  git(dir, 'commit', '-q', '-m', 'initial');
}
const mainRepo = path.join(scratch, 'wt-main');
const linked = path.join(scratch, 'wt-linked');
makeRepository(mainRepo);
git(mainRepo, 'worktree', 'add', '-q', '-b', 'feature', linked);
const worktreeClient = await connect({ args: ['mcp', '--structured-output', '--worktree', '--workspace', linked], extraEnv: identity });

test('worktree mode lists git_commit; the ordinary server does not', async () => {
  assert.deepEqual(await toolNames(worktreeClient), ['git_commit', ...backgroundTools, 'run_command'].sort());
  assert.deepEqual(await toolNames(shared), [...backgroundTools, 'run_command'].sort());
  const refused = await shared.callTool({ name: 'git_commit', arguments: { message: 'x' } }).catch((e) => e);
  assert.ok(refused instanceof Error, 'git_commit must not be callable outside worktree mode');
});

test('worktree mode: a command writes the worktree, git_commit commits it onto the branch', async () => {
  const wrote = await worktreeClient.callTool({ name: 'run_command', arguments: { command: 'echo made > made.txt' } });
  assert.equal(wrote.structuredContent.exit_code, 0, JSON.stringify(wrote));
  const result = await worktreeClient.callTool({ name: 'git_commit', arguments: { message: 'Add made.txt' } });
  assert.equal(result.isError, false, JSON.stringify(result));
  const { commit, summary } = result.structuredContent;
  assert.match(commit, /^[0-9a-f]{40}$/);
  assert.match(summary, /Add made\.txt/);
  assert.equal(git(mainRepo, 'rev-parse', 'feature'), commit);
  assert.equal(git(mainRepo, 'show', 'feature:made.txt'), 'made');
});

test('worktree mode: the main working tree and the git dir stay read-only', async () => {
  const result = await worktreeClient.callTool({
    name: 'run_command',
    arguments: { command: `echo x > ${mainRepo}/planted; echo x > ${mainRepo}/.git/worktrees/wt-linked/planted` },
  });
  assert.notEqual(result.structuredContent.exit_code, 0);
  assert.equal(fs.existsSync(path.join(mainRepo, 'planted')), false);
  assert.equal(fs.existsSync(path.join(mainRepo, '.git', 'worktrees', 'wt-linked', 'planted')), false);
});

test('worktree mode: the worktree\'s .git file cannot be overwritten, removed or replaced', async () => {
  const gitFile = path.join(linked, '.git');
  const original = fs.readFileSync(gitFile, 'utf8');
  for (const command of [
    `echo "gitdir: /tmp/evil" > .git`,
    'rm -f .git',
    'mv .git moved-git',
    'echo "[core]" >> .git',
  ]) {
    const result = await worktreeClient.callTool({ name: 'run_command', arguments: { command } });
    assert.notEqual(result.structuredContent.exit_code, 0, `${command} succeeded`);
    assert.equal(fs.readFileSync(gitFile, 'utf8'), original, `${command} changed .git`);
  }
});

test('git_commit refuses an empty message and nothing to commit, as tool results', async () => {
  fs.writeFileSync(path.join(linked, 'pending.txt'), 'pending\n');
  const empty = await worktreeClient.callTool({ name: 'git_commit', arguments: { message: '   ' } });
  assert.equal(empty.isError, true);
  assert.match(empty.content[0].text, /message is empty/);
  const committed = await worktreeClient.callTool({ name: 'git_commit', arguments: { message: 'pending' } });
  assert.equal(committed.isError, false, JSON.stringify(committed));
  const before = git(mainRepo, 'rev-parse', 'feature');
  const nothing = await worktreeClient.callTool({ name: 'git_commit', arguments: { message: 'again' } });
  assert.equal(nothing.isError, true);
  assert.match(nothing.content[0].text, /nothing to commit/);
  assert.equal(git(mainRepo, 'rev-parse', 'feature'), before);
});

test('worktree mode refuses a main working tree and a plain directory (exit 125)', () => {
  for (const [dir, why] of [[mainRepo, /a main working tree, not a linked worktree/], [workspace, /not a git repository/]]) {
    let failure;
    try {
      execFileSync(cordon, ['run', '--worktree', '--workspace', dir, '--', 'true'], { env, stdio: 'pipe' });
    } catch (e) {
      failure = e;
    }
    assert.ok(failure, `cordon run --worktree accepted ${dir}`);
    assert.equal(failure.status, 125);
    assert.match(failure.stderr.toString(), why);
  }
});

test('worktree mode overrides a configured mode off and drops extra writable roots, saying so', () => {
  // A config that asks for no sandbox at all and an extra writable root.
  const offHome = path.join(scratch, 'config-off');
  const extra = path.join(scratch, 'extra-root');
  fs.mkdirSync(path.join(offHome, 'cordon'), { recursive: true });
  fs.mkdirSync(extra);
  fs.writeFileSync(
    path.join(offHome, 'cordon', 'config.json'),
    JSON.stringify({ sandbox: { mode: 'off', writable_roots: [extra] } }),
  );
  const offEnv = { ...env, XDG_CONFIG_HOME: offHome };
  const result = spawnSync(
    cordon,
    ['run', '--worktree', '--workspace', linked, '-c', `echo x > ${extra}/f; echo x > ${mainRepo}/f; echo ok > in-worktree`],
    { env: offEnv, encoding: 'utf8' },
  );
  assert.match(result.stderr, /ignoring the configured writable roots/);
  assert.match(result.stderr, new RegExp(extra.replaceAll('/', '\\/')));
  assert.equal(fs.existsSync(path.join(extra, 'f')), false, 'the dropped root was writable');
  assert.equal(fs.existsSync(path.join(mainRepo, 'f')), false, 'mode off was not overridden');
  assert.equal(fs.readFileSync(path.join(linked, 'in-worktree'), 'utf8'), 'ok\n');
  // Without --worktree the same config really is unconfined: the twin that shows the override.
  const plain = spawnSync(cordon, ['run', '--workspace', linked, '-c', `echo x > ${extra}/f`], {
    env: offEnv,
    encoding: 'utf8',
  });
  assert.equal(plain.status, 0, plain.stderr);
  assert.equal(fs.existsSync(path.join(extra, 'f')), true);
  fs.rmSync(path.join(linked, 'in-worktree'));
});

test('worktree mode refuses --unsafe and --mode read_only (exit 125)', () => {
  for (const flags of [['--unsafe'], ['--mode', 'read_only']]) {
    const result = spawnSync(cordon, ['run', '--worktree', ...flags, '--workspace', linked, '--', 'true'], {
      env,
      encoding: 'utf8',
    });
    assert.equal(result.status, 125);
    assert.match(result.stderr, /contradicts --worktree/);
  }
});

test('git_commit refuses while a command runs in the worktree, and a nested repository', async () => {
  const slow = worktreeClient.callTool({ name: 'run_command', arguments: { command: 'sleep 1; echo late > late.txt' } });
  await new Promise((r) => setTimeout(r, 300));
  const during = await worktreeClient.callTool({ name: 'git_commit', arguments: { message: 'during' } });
  assert.equal(during.isError, true);
  assert.match(during.content[0].text, /still running/);
  assert.equal((await slow).structuredContent.exit_code, 0);
  const nested = await worktreeClient.callTool({ name: 'run_command', arguments: { command: 'git init -q nested && echo a > nested/a' } });
  assert.equal(nested.structuredContent.exit_code, 0, JSON.stringify(nested.structuredContent));
  const refused = await worktreeClient.callTool({ name: 'git_commit', arguments: { message: 'nested' } });
  assert.equal(refused.isError, true);
  assert.match(refused.content[0].text, /nested\/ is a nested git repository/);
  fs.rmSync(path.join(linked, 'nested'), { recursive: true, force: true });
  const after = await worktreeClient.callTool({ name: 'git_commit', arguments: { message: 'late' } });
  assert.equal(after.isError, false, JSON.stringify(after));
});

// Not only worktree mode: every session whose .git the sandbox keeps read-only offers git_commit,
// the way to commit that does not widen the sandbox (issue 30).
const plainRepo = path.join(scratch, 'plain-repo');
makeRepository(plainRepo);
const hookMarker = path.join(scratch, 'plain-repo-hook-ran');
fs.writeFileSync(path.join(plainRepo, '.git', 'hooks', 'pre-commit'), `#!/bin/sh\ntouch ${hookMarker}\n`, {
  mode: 0o755,
});
const repoClient = await connect({ args: ['mcp', '--structured-output', '--workspace', plainRepo], extraEnv: identity });

test('a session in a repository offers git_commit: git inside cannot commit, the tool can, without hooks', async () => {
  assert.deepEqual(await toolNames(repoClient), ['git_commit', ...backgroundTools, 'run_command'].sort());
  const inside = await repoClient.callTool({
    name: 'run_command',
    arguments: { command: 'echo made > made.txt && git add made.txt' },
  });
  assert.notEqual(inside.structuredContent.exit_code, 0, 'git wrote .git inside the sandbox');
  const result = await repoClient.callTool({ name: 'git_commit', arguments: { message: 'Add made.txt' } });
  assert.equal(result.isError, false, JSON.stringify(result));
  assert.equal(git(plainRepo, 'rev-parse', 'HEAD'), result.structuredContent.commit);
  assert.equal(git(plainRepo, 'show', 'HEAD:made.txt'), 'made');
  assert.equal(fs.existsSync(hookMarker), false, 'the repository hook ran on the host');
});

test('no git_commit where the sandbox does not keep .git read-only (read_only mode, protection off)', async () => {
  const readOnly = await connect({ args: ['mcp', '--structured-output', '--mode', 'read_only', '--workspace', plainRepo] });
  assert.deepEqual(await toolNames(readOnly), [...backgroundTools, 'run_command'].sort());
  const configFile = path.join(scratch, 'unprotected.json');
  fs.writeFileSync(configFile, JSON.stringify({ sandbox: { protect_git_metadata: false } }));
  const unprotected = await connect({ args: ['--config', configFile, 'mcp', '--structured-output', '--workspace', plainRepo] });
  assert.deepEqual(await toolNames(unprotected), [...backgroundTools, 'run_command'].sort());
});
