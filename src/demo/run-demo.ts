/**
 * @module run-demo — whether and how the demo market runs on a started venue (docs/sandbox.md):
 * decided from the operator's settings and the data directory (demo-market.ts, `decideDemo`),
 * started against the listening API, its trader's key said once, and stopped for good when a
 * `StopDemo` command succeeds. A demo that cannot start is a warning, never a failed start. A
 * sandbox's other bots, the replays of history, start beside it (src/replay/run-replay.ts).
 */
import { demoAsked, type ServerOptions } from '../config/options.ts';
import type { Log } from '../domain/log.ts';
import type { AppliedFeed } from '../sequencer/venue-ports.ts';
import { decideDemo, startDemoMarket, type DemoMarket, type DemoVenue } from './demo-market.ts';

export { runReplay } from '../replay/run-replay.ts';
export { replayStart } from '../replay/load.ts';

export interface DemoStart extends Omit<DemoVenue, 'log' | 'baseUrl'> {
  /** The operator's settings: what they ask (src/config/options.ts, `demoAsked`), and whether to say why it does not run. */
  readonly settings: Pick<ServerOptions, 'demo' | 'sandbox' | 'host' | 'dataDir' | 'replay'>;
  /** Where the public API listens. */
  readonly host: string;
  readonly port: number;
  readonly feed: AppliedFeed;
  readonly log: Log;
}

/** Starts the demo market when it should run (the module comment); undefined when it does not. */
export async function runDemo(start: DemoStart): Promise<DemoMarket | undefined> {
  const { log } = start;
  // The demo's bots would trade the replayed markets on their own price path: a replay goes alone unless asked.
  const replaying = start.settings.replay.length > 0 && start.settings.demo !== true;
  const asked = replaying
    ? {
        run: false as const,
        reason: 'no demo: this sandbox replays history (--demo runs the demo beside it)',
      }
    : demoAsked(start.settings);
  const decision = decideDemo(start.engine, asked);
  if (!decision.run) {
    if (start.settings.demo !== false) log.info(decision.reason);
    return undefined;
  }
  try {
    const demo = await startDemoMarket({
      engine: start.engine,
      submit: (command) => start.submit(command),
      issueKey: start.issueKey,
      ...(start.traderKey === undefined ? {} : { traderKey: start.traderKey }),
      baseUrl: `http://${start.host.includes(':') ? `[${start.host}]` : start.host}:${start.port}`,
      log: (message) => log.info(message),
    });
    log.info(
      { accessKey: demo.trader.accessKey },
      `demo trader: sign in on the page with API key ${demo.trader.accessKey} and secret ` +
        `${demo.trader.secretKey} (${demo.trader.kept ? 'kept' : 'new'}: the same key at each start of this data directory; bourse demo stop ends the demo)`,
    );
    start.feed.subscribe(start.feed.appliedSeq + 1, (batch) => {
      if (batch.some((a) => a.command.type === 'StopDemo' && a.result.result === 'OK')) {
        void demo.stop().then(() => log.info('demo market stopped for good; its users stay'));
      }
    });
    return demo;
  } catch (error) {
    log.warn({ err: error }, `demo market not started: ${(error as Error).message}`);
    return undefined;
  }
}
