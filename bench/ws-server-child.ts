/**
 * @module ws-server-child — the real server (`startVenue`, as `npm start` runs it) in a child
 * process for bench:ws, with its event-loop delay measured inside it by
 * `perf_hooks.monitorEventLoopDelay` and reported over the IPC channel: `{type:'reset'}`
 * restarts the histogram and the CPU count, `{type:'stats'}` answers with the delay percentiles
 * (ms), the CPU share since the reset, RSS and the gateway's connection counts.
 *
 * The histogram records the whole interval between two of its timer's runs, sampling interval
 * included (an idle process shows ~10.2 ms at a 10 ms resolution), so the interval is subtracted:
 * what is reported is how late the timer ran.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadOptions } from '../src/config/options.ts';
import { startVenue } from '../src/main.ts';

const venue = await startVenue(loadOptions(process.argv.slice(2), process.env), (message) =>
  console.log(`server: ${message}`),
);
const RESOLUTION_MS = 10;
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
      connections: venue.ws.connections,
      dropped: venue.ws.dropped,
    });
  } else if (message.type === 'stop') {
    void venue.close().then(() => process.exit(0));
  }
});
process.send?.({ type: 'ready', base: `http://${venue.http.host}:${venue.http.port}` });
