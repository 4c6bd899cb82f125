/**
 * @module ws-server-child — the real server (`startVenue`, as `npm start` runs it) in a child
 * process for bench:ws, with its event-loop delay measured inside it and reported over the IPC
 * channel (ws-child-stats.ts).
 */
import { loadOptions } from '../src/config/options.ts';
import { startVenue } from '../src/main.ts';
import { reportStatsOverIpc } from './ws-child-stats.ts';
import { createLogger } from '../src/observability/logger.ts';

// The demo market's bots would add load of their own to the measured server.
const options = loadOptions(['--demo=false', ...process.argv.slice(2)], process.env);
const venue = await startVenue(options, createLogger({ level: options.logLevel, format: 'json' }).log);
reportStatsOverIpc(
  () => ({ connections: venue.ws.connections, dropped: venue.ws.dropped }),
  () => venue.close(),
);
const { admin } = venue;
process.send?.({
  type: 'ready',
  base: `http://${venue.http.host}:${venue.http.port}`,
  adminBase: admin.target.socket === undefined ? `http://${admin.target.host}:${admin.target.port}` : '',
});
