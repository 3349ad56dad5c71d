// mcp-once's duplicate-execution checks as conformance-suite server scenarios. Each scenario
// runs one check of `mcp-once probe` on the server under test over Streamable HTTP: it calls the
// server's side-effecting tool, injects the fault (a client timeout and cancellation, a broken
// response stream, a framework re-run), retries as real clients do, and counts the tool's
// effects with an observer. The checks are those that need no server restart (the suite only
// has a URL); the MRTR one needs a tool that asks for input before its effect. The probe's JSON is already in the suite's check shape; a scenario returns its
// check (and the probe's preflight when that failed).
//
// What the suite cannot know by itself is configured in the environment:
//   MCP_ONCE          the mcp-once binary (default: `mcp-once` on PATH)
//   MCP_ONCE_TOOL     the side-effecting tool (default: charge)
//   MCP_ONCE_ARGS     its arguments, a JSON object (default: {})
//   MCP_ONCE_OBSERVE  how effects are counted (mcp-once's --observe: ledger:PATH, sh:"...",
//                     tool:NAME...); without it every check is reported not testable
//   MCP_ONCE_KEY_AT   where the server reads an idempotency key (params, meta:NAME, arg:NAME);
//                     the SEP-3182 scenarios need it
// A missing prerequisite is a FAILURE marked untestable, never a pass or a skip (the suite's
// rule).

import { execFile } from 'node:child_process';
import type { ClientScenario, ConformanceCheck, RunContext } from '../types.js';

/** The longest one probe check may take, start to end (its own steps are bounded too). */
const PROBE_BOUND_MS = 240_000;

interface CheckSpec {
  id: string;
  name: string;
  description: string;
  /** The SEP-3182 key checks need the server's key placement. */
  needsKey: boolean;
  /** The suite's status for a duplicate found, by the keyword of the text the check traces
   * to (MUST → FAILURE, SHOULD → WARNING): INFO where no MUST or SHOULD asks for it. */
  onDuplicate: 'FAILURE' | 'WARNING' | 'INFO';
  /** The revision the check needs, whatever the run's (multi round-trip requests are
   * 2026-07-28's); the scenario's source says so. */
  revision?: '2026-07-28';
}

// No MUST or SHOULD of 2025-11-25 or 2026-07-28 asks that a retried tools/call take effect at
// most once (there is no dedup key and no delivery guarantee), so a duplicate the keyless
// checks find is INFO for the suite, though mcp-once reports it as a failure; SEP-3182's
// checks trace to its MUSTs, and the single use of a requestState to mrtr.mdx's MUST (for a
// tool whose effect must happen at most once, which is what the scenario is given).

const CHECKS: CheckSpec[] = [
  {
    id: 'mcp-once-retry-after-timeout',
    name: 'RetryAfterTimeout',
    description:
      'A tools/call whose client times out and sends notifications/cancelled, then retries with a new id, takes effect at most once',
    needsKey: false,
    onDuplicate: 'INFO',
  },
  {
    id: 'mcp-once-retry-after-stream-break',
    name: 'RetryAfterStreamBreak',
    description:
      "A tools/call whose HTTP response stream breaks, re-issued as a new request (the 2026-07-28 changelog's rule), takes effect at most once",
    needsKey: false,
    onDuplicate: 'INFO',
  },
  {
    id: 'mcp-once-framework-rerun',
    name: 'FrameworkRerun',
    description:
      'A tools/call re-run by an agent framework retrying its step (LangGraph-style, three attempts) takes effect at most once',
    needsKey: false,
    onDuplicate: 'INFO',
  },
  {
    id: 'sep-3182-completed-key-replay',
    name: 'Sep3182CompletedKeyReplay',
    description: 'A tools/call repeated with the idempotency key of a completed call returns its result and does not run again (SEP-3182, a proposal)',
    needsKey: true,
    onDuplicate: 'FAILURE',
  },
  {
    id: 'sep-3182-in-progress-rejected',
    name: 'Sep3182InProgressRejected',
    description: 'A tools/call repeated with the key of a call still running does not start a second execution (SEP-3182, a proposal)',
    needsKey: true,
    onDuplicate: 'FAILURE',
  },
  {
    id: 'sep-3182-key-conflict',
    name: 'Sep3182KeyConflict',
    description: 'A key reused with other arguments is rejected, and nothing runs (SEP-3182, a proposal)',
    needsKey: true,
    onDuplicate: 'FAILURE',
  },
  {
    id: 'mcp-once-request-state-single-use',
    name: 'RequestStateSingleUse',
    description:
      'A continuation re-issued after its response stream broke, carrying the same requestState, does not take the tool\'s effect a second time (mrtr.mdx: servers for which a requestState must be consumed at most once MUST enforce it); MCP_ONCE_TOOL must be a tool that asks for input before an effect that must happen at most once',
    needsKey: false,
    onDuplicate: 'FAILURE',
    revision: '2026-07-28',
  },
];

/** A check that could not be made: a FAILURE marked untestable, as the suite's untestableCheck. */
function notTestable(spec: CheckSpec, reason: string): ConformanceCheck {
  return {
    id: spec.id,
    name: spec.name,
    description: spec.description,
    status: 'FAILURE',
    timestamp: new Date().toISOString(),
    errorMessage: `Not testable: ${reason}`,
    details: { untestable: true, reason },
  };
}

/** `mcp-once ARGS`: its stdout, stderr and exit code, bounded. */
function mcpOnce(args: string[]): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const bin = process.env.MCP_ONCE ?? 'mcp-once';
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: PROBE_BOUND_MS, killSignal: 'SIGKILL', maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err && typeof (err as NodeJS.ErrnoException).code === 'number' ? Number((err as NodeJS.ErrnoException).code) : err ? null : 0;
      resolve({ stdout, stderr: err && code === null ? `${stderr}${err.message}` : stderr, code });
    });
  });
}

/** A probe check with the suite's severity: mcp-once's own status kept in
 * `details.mcpOnceStatus`; a failure the probe measured graded by what the text asks
 * (`onDuplicate`); one it could not make stays a FAILURE marked untestable. */
function graded(spec: CheckSpec, c: ConformanceCheck): ConformanceCheck {
  const untestable = c.details?.untestable === true;
  const status = c.status === 'FAILURE' && !untestable ? spec.onDuplicate : c.status;
  return { ...c, status, details: { ...c.details, mcpOnceStatus: c.status } };
}

/** The scenario of one probe check. */
function scenario(spec: CheckSpec): ClientScenario {
  return {
    name: spec.id,
    description: spec.description,
    source: { introducedIn: spec.revision ?? '2025-11-25' },
    async run(ctx: RunContext): Promise<ConformanceCheck[]> {
      const observe = process.env.MCP_ONCE_OBSERVE;
      if (!observe) {
        return [notTestable(spec, 'no observer: set MCP_ONCE_OBSERVE to how the tool\'s effects are counted (mcp-once --observe)')];
      }
      const keyAt = process.env.MCP_ONCE_KEY_AT;
      if (spec.needsKey && !keyAt) {
        return [notTestable(spec, 'the server\'s key placement is not given: set MCP_ONCE_KEY_AT (params, meta:NAME or arg:NAME)')];
      }
      const revision = spec.revision ?? (ctx.specVersion === '2026-07-28' ? '2026-07-28' : '2025-11-25');
      const args = ['probe', '--http', ctx.serverUrl, '--revision', revision, '--checks', spec.id];
      args.push('--tool', process.env.MCP_ONCE_TOOL ?? 'charge', '--args', process.env.MCP_ONCE_ARGS ?? '{}');
      args.push('--observe', observe, '--format', 'json');
      if (keyAt) args.push('--key-at', keyAt);
      const run = await mcpOnce(args);
      let checks: ConformanceCheck[];
      try {
        checks = (JSON.parse(run.stdout) as { checks: ConformanceCheck[] }).checks;
      } catch {
        const why = run.stderr.trim().split('\n')[0] || `mcp-once exited ${run.code} with no report`;
        return [notTestable(spec, why)];
      }
      const own = checks.filter((c) => c.id === spec.id);
      const preflight = checks.filter((c) => c.id === 'mcp-once-preflight' && c.status !== 'SUCCESS');
      if (own.length === 0) {
        return [...preflight, notTestable(spec, `mcp-once ran no ${spec.id} check (exit ${run.code})`)];
      }
      return [...preflight, ...own.map((c) => graded(spec, c))];
    },
  };
}

/** Every scenario, in the order they run. */
export const mcpOnceScenarios: ClientScenario[] = CHECKS.map(scenario);
