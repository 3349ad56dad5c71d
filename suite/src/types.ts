// The shapes of the official MCP conformance suite's server scenarios, declared here because
// its npm package (0.2.0-alpha.11) exports no types and no runner: a scenario that tests a
// server is a `ClientScenario` (the suite plays the client), run with a `RunContext`, and
// returns `ConformanceCheck`s. Field names and status values are the suite's (src/types.ts,
// src/connection/index.ts at its 0.2.0-alpha.11 commit); the declarations are ours.

/** A check's outcome, as the suite spells it. */
export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';

/** Where in the specification a check's requirement is written. */
export interface SpecReference {
  id: string;
  url?: string;
}

/** The revisions a scenario applies to: from one (and until one), or an extension's. */
export type ScenarioSource =
  | { introducedIn: string; removedIn?: string }
  | { extensionId: string };

/** One check's result. */
export interface ConformanceCheck {
  id: string;
  name: string;
  description: string;
  status: CheckStatus;
  timestamp: string;
  specReferences?: SpecReference[];
  source?: ScenarioSource;
  details?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  errorMessage?: string;
  logs?: string[];
}

/** What the suite's runner hands a server scenario. `connect` opens an MCP connection the
 * suite's way; these scenarios leave connecting to mcp-once, which must also kill its own
 * connections, hold responses and count effects. */
export interface RunContext {
  serverUrl: string;
  specVersion: string;
  connect(opts?: Record<string, unknown>): Promise<unknown>;
}

/** A scenario that tests a server. */
export interface ClientScenario {
  name: string;
  description: string;
  source: ScenarioSource;
  run(ctx: RunContext): Promise<ConformanceCheck[]>;
}
