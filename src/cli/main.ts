/**
 * @module cli/main — the `bourse` program: parses the command line and runs it. The offline
 * commands' modules (journal, engine, history stores) are loaded only when one of them runs, so
 * that `--help` and the online commands start at once.
 */
import { runCli, type OfflineCommands } from './bourse.ts';

const offline = (): Promise<OfflineCommands> => import('./offline.ts').then((m) => m.offlineCommands);
const lazyOffline: OfflineCommands = {
  verify: async (...args) => (await offline()).verify(...args),
  rebuildHistory: async (...args) => (await offline()).rebuildHistory(...args),
  journalCopy: async (...args) => (await offline()).journalCopy(...args),
};

const code = await runCli(
  process.argv.slice(2),
  { out: (l) => console.log(l), err: (l) => console.error(l) },
  lazyOffline,
);
process.exit(code);
