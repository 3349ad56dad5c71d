// Runs mcp-once's scenarios against a server as the suite's runner runs its own (its npm
// package cannot load a scenario from outside it): a RunContext for the URL and revision, each
// scenario's run(ctx), the checks printed as JSON ({"scenarios": {name: checks}}) and a line
// per check on stderr; exit 1 when a check is a FAILURE or a WARNING (the suite's CI rule).
// Usage: tsx src/run.ts --url URL [--spec-version 2025-11-25|2026-07-28] [--scenario NAME]...

import { parseArgs } from 'node:util';
import { mcpOnceScenarios } from './scenarios/mcp-once.js';
import type { ConformanceCheck, RunContext } from './types.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    'spec-version': { type: 'string', default: '2025-11-25' },
    scenario: { type: 'string', multiple: true },
  },
});
if (!values.url) {
  console.error('run.ts: --url URL is required');
  process.exit(2);
}
const wanted = values.scenario ?? mcpOnceScenarios.map((s) => s.name);
const unknown = wanted.filter((n) => !mcpOnceScenarios.some((s) => s.name === n));
if (unknown.length > 0) {
  console.error(`run.ts: unknown scenario ${unknown.join(', ')}`);
  process.exit(2);
}
const ctx: RunContext = {
  serverUrl: values.url,
  specVersion: values['spec-version']!,
  connect: () => Promise.reject(new Error('mcp-once connects by itself')),
};
const out: Record<string, ConformanceCheck[]> = {};
let failed = false;
for (const s of mcpOnceScenarios.filter((s) => wanted.includes(s.name))) {
  const checks = await s.run(ctx);
  out[s.name] = checks;
  for (const c of checks) {
    failed ||= c.status === 'FAILURE' || c.status === 'WARNING';
    console.error(`[${s.name}] ${c.status} ${c.id}${c.errorMessage ? `: ${c.errorMessage}` : ''}`);
  }
}
console.log(JSON.stringify({ scenarios: out }));
process.exit(failed ? 1 : 0);
