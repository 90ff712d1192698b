/** What the embedded Functions host counts, per function and in total. */
export interface FunctionStats {
  invocations: number;
  succeeded: number;
  failed: number;
  crashesInjected: number;
  /** Calls to Service Bus the pumps waited out (receive, settlement, session accept); 0 at no latency. */
  brokerRoundTrips: number;
  /** Most sessions held at once. */
  maxConcurrentSessions: number;
  activeSessions: number;
}

export interface FunctionsHostStats extends FunctionStats {
  byFunction: Record<string, FunctionStats>;
}

export type CountedEvent = 'invocations' | 'succeeded' | 'failed' | 'crashesInjected' | 'brokerRoundTrips';

function emptyFunctionStats(): FunctionStats {
  return {
    invocations: 0,
    succeeded: 0,
    failed: 0,
    crashesInjected: 0,
    brokerRoundTrips: 0,
    maxConcurrentSessions: 0,
    activeSessions: 0,
  };
}

export interface HostCounters {
  count(functionName: string, event: CountedEvent): void;
  sessionOpened(functionName: string): void;
  sessionClosed(functionName: string): void;
  snapshot(): FunctionsHostStats;
}

export function createHostCounters(functionNames: readonly string[]): HostCounters {
  const totals = emptyFunctionStats();
  const byFunction = new Map<string, FunctionStats>(
    functionNames.map((name) => [name, emptyFunctionStats()]),
  );
  const statsOf = (name: string): FunctionStats => {
    const stats = byFunction.get(name);
    if (!stats) throw new Error(`no stats for function ${name}`);
    return stats;
  };
  return {
    count(name, event) {
      statsOf(name)[event] += 1;
      totals[event] += 1;
    },
    sessionOpened(name) {
      const stats = statsOf(name);
      stats.activeSessions += 1;
      stats.maxConcurrentSessions = Math.max(stats.maxConcurrentSessions, stats.activeSessions);
      totals.activeSessions += 1;
      totals.maxConcurrentSessions = Math.max(totals.maxConcurrentSessions, totals.activeSessions);
    },
    sessionClosed(name) {
      statsOf(name).activeSessions -= 1;
      totals.activeSessions -= 1;
    },
    snapshot() {
      const perFunction: Record<string, FunctionStats> = {};
      for (const [name, stats] of byFunction) perFunction[name] = { ...stats };
      return { ...totals, byFunction: perFunction };
    },
  };
}
