// The suite's rule for a new scenario: a passing example and a deliberately broken one. The
// examples are mcp-once's own ledger fixture (rmcp) over Streamable HTTP: `key-durable` keeps
// SEP-3182 keys in a durable store (the key scenarios pass), `plain` ignores the key and runs
// every call (they fail). The keyless scenarios find a duplicate on both (the client sends no
// key, so nothing tells a retry from a new call), which no MUST or SHOULD forbids: INFO, with
// mcp-once's own FAILURE in details.mcpOnceStatus. Needs MCP_ONCE, the binary.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mcpOnceScenarios } from '../src/scenarios/mcp-once.js';

const mrtr = 'mcp-once-request-state-single-use';
const keyScenarios = mcpOnceScenarios.filter((s) => s.name.startsWith('sep-3182-')).map((s) => s.name);
const keylessScenarios = mcpOnceScenarios
  .filter((s) => !s.name.startsWith('sep-3182-') && s.name !== mrtr)
  .map((s) => s.name);

const bin = process.env.MCP_ONCE;
if (!bin) throw new Error('MCP_ONCE must name the mcp-once binary');

/** A fixture server on a port the system picks: its URL once it says it listens (bounded). */
function startFixture(variant: string, ledger: string, extra: string[]): Promise<{ url: string; child: ChildProcess }> {
  const args = ['fixture', '--transport', 'http', '--port', '0', '--variant', variant, '--ledger', ledger, ...extra];
  const child = spawn(bin!, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${variant} fixture did not listen within 20 s`));
    }, 20_000);
    let seen = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const m = seen.match(/listening (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${variant} fixture exited ${code}: ${seen}`));
    });
  });
}

/** The checks of `names` (every scenario but the MRTR one by default) on one fixture variant
 * (started with `extra` flags), with the key at params. */
function onVariant(variant: string, extra: string[] = [], names: string[] = [...keyScenarios, ...keylessScenarios]) {
  const results = new Map<string, { status: string; mcpOnce: unknown; untestable: boolean }[]>();
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), `mcp-once-suite-${variant}-`));
    const ledger = join(dir, 'ledger.jsonl');
    const fixture = await startFixture(variant, ledger, extra);
    child = fixture.child;
    Object.assign(process.env, {
      MCP_ONCE_ARGS: '{"amount":42}',
      MCP_ONCE_OBSERVE: `ledger:${ledger}`,
      MCP_ONCE_KEY_AT: 'params',
    });
    for (const s of mcpOnceScenarios.filter((s) => names.includes(s.name))) {
      const checks = await s.run({
        serverUrl: fixture.url,
        specVersion: '2025-11-25',
        connect: () => Promise.reject(new Error('not used')),
      });
      results.set(
        s.name,
        checks
          .filter((c) => c.id === s.name)
          .map((c) => ({ status: c.status, mcpOnce: c.details?.mcpOnceStatus, untestable: c.details?.untestable === true })),
      );
    }
  }, 600_000);
  afterAll(() => {
    child?.kill('SIGKILL');
  });
  return results;
}


describe('passing example: a server with durable SEP-3182 keys', () => {
  const results = onVariant('key-durable');
  test.each(keyScenarios)('%s passes', (name) => {
    expect(results.get(name)).toEqual([{ status: 'SUCCESS', mcpOnce: 'SUCCESS', untestable: false }]);
  });
  test.each(keylessScenarios)('%s finds a duplicate: the client sends no key (INFO)', (name) => {
    expect(results.get(name)).toEqual([{ status: 'INFO', mcpOnce: 'FAILURE', untestable: false }]);
  });
});

describe('broken example: a server that ignores the key and runs every call', () => {
  const results = onVariant('plain');
  test.each(keyScenarios)('%s fails', (name) => {
    expect(results.get(name)).toEqual([{ status: 'FAILURE', mcpOnce: 'FAILURE', untestable: false }]);
  });
  test.each(keylessScenarios)('%s finds a duplicate (INFO)', (name) => {
    expect(results.get(name)).toEqual([{ status: 'INFO', mcpOnce: 'FAILURE', untestable: false }]);
  });
});

// MRTR: a tool that asks for input before its effect; the fixture with
// --single-use-request-state refuses a requestState consumed before, the one without runs it.
describe('passing example: a server that enforces single use of a requestState', () => {
  const results = onVariant('plain', ['--handler', 'input-before-effect', '--single-use-request-state'], [mrtr]);
  test(`${mrtr} passes`, () => {
    expect(results.get(mrtr)).toEqual([{ status: 'SUCCESS', mcpOnce: 'SUCCESS', untestable: false }]);
  });
});

describe('broken example: a server that runs a requestState twice', () => {
  const results = onVariant('plain', ['--handler', 'input-before-effect'], [mrtr]);
  test(`${mrtr} fails`, () => {
    expect(results.get(mrtr)).toEqual([{ status: 'FAILURE', mcpOnce: 'FAILURE', untestable: false }]);
  });
});

describe('a missing prerequisite', () => {
  test('no observer: every scenario is a FAILURE marked untestable', async () => {
    const saved = process.env.MCP_ONCE_OBSERVE;
    delete process.env.MCP_ONCE_OBSERVE;
    try {
      for (const s of mcpOnceScenarios) {
        const [c] = await s.run({ serverUrl: 'http://127.0.0.1:9/mcp', specVersion: '2025-11-25', connect: async () => undefined });
        expect(c.status).toBe('FAILURE');
        expect(c.details?.untestable).toBe(true);
      }
    } finally {
      if (saved !== undefined) process.env.MCP_ONCE_OBSERVE = saved;
    }
  });
});
