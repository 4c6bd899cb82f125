/**
 * @module cli/main — the `bourse` program: parses the command line and runs it.
 */
import { runCli } from './bourse.ts';
import { offlineCommands } from './offline.ts';

const code = await runCli(
  process.argv.slice(2),
  { out: (l) => console.log(l), err: (l) => console.error(l) },
  offlineCommands,
);
process.exit(code);
