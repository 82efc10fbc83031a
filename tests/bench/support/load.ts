import autocannon from 'autocannon';

export interface LoadResult {
  rps: number;
  /** Answers received in all. */
  requests: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than 2xx, plus connection errors and timeouts. */
  failures: number;
}

/** Closed-loop HTTP load with autocannon: `connections` keep-alive connections for `seconds`. */
export async function loadTest(
  url: string,
  options: { connections: number; seconds: number; headers?: Record<string, string> },
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.seconds,
    headers: options.headers,
  });
  return {
    rps: result.requests.average,
    requests: result['2xx'] + result.non2xx,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}
