/**
 * The venue's identity (issue 13): an edited genesis.json is refused at start, naming what changed;
 * a data directory moved elsewhere keeps its API keys (a signed request succeeds) because its
 * master key is found by the venue's id; a missing or wrong master key is refused with what to do.
 */
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { writeMasterKeyFile } from '../../src/config/master-key.ts';
import { offlineCommands } from '../../src/cli/offline.ts';
import { GENESIS_FILE } from '../../src/config/data-dir.ts';
import type { ServerOptions } from '../../src/config/options.ts';
import { StartRefusedError } from '../../src/config/start-refusal.ts';
import { VENUE_FILE, type VenueIdentity } from '../../src/config/venue-identity.ts';
import type { VenueConfig } from '../../src/domain/specs.ts';
import { startVenue } from '../../src/main.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { startServer } from '../fixtures/server-process.ts';
import { createTrader, ZbClient } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { testVenueOptions } from '../fixtures/venue-options.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-venue-'));
after(() => rmSync(root, { recursive: true, force: true }));

function options(dataDir: string): ServerOptions {
  const masterKeyFile = join(root, 'genesis-test.key');
  if (!existsSync(masterKeyFile)) writeMasterKeyFile(masterKeyFile);
  return testVenueOptions({ dataDir, masterKeyFile, metrics: false });
}

test('genesis.json edited after the first start is refused, naming what changed', async () => {
  const dataDir = join(root, 'genesis');
  await (await startVenue(options(dataDir), SILENT_LOG)).close();
  const identity = JSON.parse(readFileSync(join(dataDir, VENUE_FILE), 'utf8')) as VenueIdentity;
  assert.match(identity.venueId, /^[0-9a-f]{32}$/);
  assert.match(identity.masterKeyId, /^[0-9a-f]{16}$/);
  assert.ok(!JSON.stringify(identity).includes(readFileSync(join(root, 'genesis-test.key'), 'utf8').trim()));

  const path = join(dataDir, GENESIS_FILE);
  const original = readFileSync(path, 'utf8');
  const genesis = JSON.parse(original) as VenueConfig;
  // Laid out differently, the same genesis still starts.
  writeFileSync(path, JSON.stringify(genesis));
  await (await startVenue(options(dataDir), SILENT_LOG)).close();

  const market = genesis.markets[0] as VenueConfig['markets'][number];
  const edited: VenueConfig = {
    ...genesis,
    coins: [...genesis.coins, { ...(genesis.coins[0] as VenueConfig['coins'][number]), name: 'doge' }],
    markets: [{ ...market, makerFee: market.makerFee + 1 }, ...genesis.markets.slice(1)],
  };
  writeFileSync(path, JSON.stringify(edited, null, 2));
  const journalBefore = readdirSync(join(dataDir, 'journal'));
  await assert.rejects(startVenue(options(dataDir), SILENT_LOG), (error: Error) => {
    assert.ok(error instanceof StartRefusedError, error.stack);
    assert.ok(!error.message.includes('\n'), 'one line');
    assert.match(error.message, /genesis\.json was edited after the venue started/);
    assert.match(
      error.message,
      new RegExp(`market ${market.name} makerFee changed from ${market.makerFee} to ${market.makerFee + 1}`),
    );
    assert.match(error.message, /coin doge added/);
    return true;
  });
  assert.deepEqual(readdirSync(join(dataDir, 'journal')), journalBefore);
  const lines: string[] = [];
  assert.equal(
    await offlineCommands.verify(dataDir, { out: (l) => lines.push(l), err: () => undefined }, false),
    1,
  );
  assert.match(
    lines.join('\n'),
    /problem: \S+genesis\.json was edited after the venue started \(.*coin doge added/,
  );
  writeFileSync(path, original);
  await (await startVenue(options(dataDir), SILENT_LOG)).close();

  // A lost genesis.json is put back from venue.json, not replaced by today's defaults.
  rmSync(path);
  await (await startVenue(options(dataDir), SILENT_LOG)).close();
  assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), identity.genesis);
});

test('a moved data directory keeps its API keys; a missing or wrong master key is refused with what to do', async () => {
  // The fixture keeps the default master key in <root>/config (XDG_CONFIG_HOME), beside the data.
  const before = join(root, 'before');
  const moved = join(root, 'moved');
  const server = await startServer(before);
  const ann = await createTrader(server, 'ann', [['usdt', '5']]);
  assert.equal(await server.stop(), 0);
  const venueId = (JSON.parse(readFileSync(join(before, VENUE_FILE), 'utf8')) as VenueIdentity).venueId;
  assert.ok(existsSync(join(root, 'config', 'bourse', `master-${venueId}.key`)));
  renameSync(before, moved);

  const again = await startServer(moved);
  try {
    const info = await new ZbClient(again.base, ann.accessKey, ann.secret).call('getAccountInfo');
    assert.ok(info.result !== undefined, `a signed request on the moved directory: ${JSON.stringify(info)}`);
  } finally {
    assert.equal(await again.stop(), 0);
  }

  // Without the key (another configuration directory): refused, and no fresh key made in silence.
  const elsewhere = join(root, 'elsewhere');
  await assert.rejects(
    startServer(moved, [], { XDG_CONFIG_HOME: elsewhere }),
    new RegExp(
      `bourse: cannot start: no master key at ${elsewhere}/bourse/master-${venueId}\\.key: this venue's API secrets are sealed with master key [0-9a-f]{16}\\. .*--master-key-file or BOURSE_MASTER_KEY_FILE`,
    ),
  );
  assert.equal(existsSync(elsewhere), false);

  // Another key: refused, naming both key ids.
  const wrong = join(root, 'wrong.key');
  writeMasterKeyFile(wrong);
  await assert.rejects(
    startServer(moved, [], { BOURSE_MASTER_KEY_FILE: wrong }),
    /bourse: cannot start: the master key from \S+wrong\.key \(key id [0-9a-f]{16}\) does not open this data directory: its API secrets are sealed with master key [0-9a-f]{16}\. Give that key: name it with --master-key-file/,
  );
});

test('a data directory from before venue.json keeps its path-named master key and its API keys', async () => {
  const dataDir = join(root, 'legacy');
  const server = await startServer(dataDir);
  const ann = await createTrader(server, 'ann', [['usdt', '5']]);
  assert.equal(await server.stop(), 0);
  // As an older version left it: no venue.json, the key named after the directory's path.
  const venueId = (JSON.parse(readFileSync(join(dataDir, VENUE_FILE), 'utf8')) as VenueIdentity).venueId;
  rmSync(join(dataDir, VENUE_FILE));
  const keys = join(root, 'config', 'bourse');
  const legacyName = `master-${dataDir.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '')}.key`;
  renameSync(join(keys, `master-${venueId}.key`), join(keys, legacyName));

  const again = await startServer(dataDir);
  try {
    const info = await new ZbClient(again.base, ann.accessKey, ann.secret).call('getAccountInfo');
    assert.ok(info.result !== undefined, `a signed request after the upgrade: ${JSON.stringify(info)}`);
    const recorded = JSON.parse(readFileSync(join(dataDir, VENUE_FILE), 'utf8')) as VenueIdentity;
    assert.ok(existsSync(join(keys, `master-${recorded.venueId}.key`)), 'the key is not at its new name');
  } finally {
    assert.equal(await again.stop(), 0);
  }
});
