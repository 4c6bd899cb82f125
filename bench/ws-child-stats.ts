/**
 * @module ws-child-stats — what bench:ws's server children (ws-server-child.ts, the real server;
 * ws-baseline-child.ts, a bare `ws` server) report over their IPC channel: `{type:'reset'}`
 * restarts the event-loop delay histogram and the CPU count, `{type:'stats'}` answers with the
 * delay percentiles (ms), the CPU share since the reset, RSS and the connection counts, and
 * `{type:'stop'}` stops the child.
 *
 * The histogram records the whole interval between two of its timer's runs, sampling interval
 * included (an idle process shows ~10.2 ms at a 10 ms resolution), so the interval is subtracted:
 * what is reported is how late the timer ran.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

const RESOLUTION_MS = 10;

/** Answers the parent's reset/stats/stop messages; `counts` gives the connection figures. */
export function reportStatsOverIpc(
  counts: () => { connections: number; dropped: number },
  stop: () => Promise<void> | void,
): void {
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();
  let cpu = process.cpuUsage();
  let since = performance.now();
  process.on('message', (message: { type: string }) => {
    if (message.type === 'reset') {
      delay.reset();
      cpu = process.cpuUsage();
      since = performance.now();
    } else if (message.type === 'stats') {
      const used = process.cpuUsage(cpu);
      const ms = (ns: number): number => Number(Math.max(0, ns / 1e6 - RESOLUTION_MS).toFixed(2));
      process.send?.({
        type: 'stats',
        lagP50Ms: ms(delay.percentile(50)),
        lagP99Ms: ms(delay.percentile(99)),
        lagMaxMs: ms(delay.max),
        cpuShare: Number(((used.user + used.system) / 1000 / (performance.now() - since)).toFixed(3)),
        rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
        ...counts(),
      });
    } else if (message.type === 'stop') {
      void Promise.resolve(stop()).then(() => process.exit(0));
    }
  });
}
