/**
 * @module funds-run — one seeded run of random funds steps on the real venue (journal, recovery,
 * the simulated chain in the data directory, the chain watcher), checking after every step, once
 * the watcher has caught up, for every coin:
 *
 *   what the venue's wallets hold on the chain = users' balances + fee income − withdrawals in flight
 *
 * (in flight: sent on chain, not yet final), that the engine's credits equal the final deposits on
 * the chain (nothing credited twice), and the engine's own invariants. Steps: deposits, blocks,
 * failed transactions, withdrawals (approved at once or by the operator, rejected, cancelled by the
 * user, failing on chain, internal, to another user's address on chain), trades, restarts,
 * downtime while the chain moves on, a watcher dying between send and journal, a cancel racing
 * the send. Used by funds-chain.test.ts and funds-chain.long.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeMasterKeyFile } from '../../src/config/master-key.ts';
import { readGenesis } from '../../src/config/data-dir.ts';
import { joinAddress, type ChainSpec } from '../../src/domain/chains.ts';
import type { Command, RequestWithdrawal } from '../../src/domain/commands.ts';
import type { ApplyResult } from '../../src/engine/engine.ts';
import { FileJournal } from '../../src/journal/file-journal.ts';
import { startVenue, type RunningVenue } from '../../src/main.ts';
import { recover } from '../../src/sequencer/recovery.ts';
import { Rng } from './command-generator.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { testVenueOptions } from '../fixtures/venue-options.ts';

const USERS = ['ann', 'ben', 'cat', 'dan'];
/** The coins moved: usdt on two chains, btc, and xwc on a memo chain; btc_usdt is traded. */
const COINS = ['usdt', 'btc', 'xwc'];

const roots: string[] = [];

/** Deletes the data directories of every run so far. */
export function removeRunDirectories(): void {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
}

/** Every transition both state machines can take (`new` is the first record of it). */
export const DEPOSIT_PATHS = [
  'new→confirming',
  'confirming→confirming',
  'confirming→credited',
  'confirming→failed',
  'new→credited',
  'new→failed',
];
export const WITHDRAWAL_PATHS = [
  'new→submitted',
  'new→approved',
  'new→succeeded',
  'submitted→approved',
  'submitted→cancelled',
  'approved→cancelled',
  'approved→sending',
  'sending→sent',
  'sent→confirmed',
  'sent→succeeded',
  'confirmed→succeeded',
  'sent→failed',
  'confirmed→failed',
];

class FundsRun {
  readonly #rng: Rng;
  readonly #root: string;
  readonly #keyFile: string;
  readonly dataDir: string;
  #venue: RunningVenue | undefined;
  readonly users: number[] = [];
  restarts = 0;

  constructor(seed: number) {
    this.#rng = new Rng(seed);
    this.#root = mkdtempSync(join(tmpdir(), `bourse-funds-${seed}-`));
    this.dataDir = join(this.#root, 'data');
    roots.push(this.#root);
    this.#keyFile = join(this.#root, 'master.key');
    writeMasterKeyFile(this.#keyFile);
  }

  get venue(): RunningVenue {
    return this.#venue as RunningVenue;
  }

  async start(): Promise<void> {
    const options = testVenueOptions({ dataDir: join(this.#root, 'data'), masterKeyFile: this.#keyFile });
    this.#venue = await startVenue(options, SILENT_LOG);
  }

  async restart(): Promise<void> {
    await this.venue.close();
    this.restarts++;
    await this.start();
  }

  async must(command: Command): Promise<ApplyResult> {
    const r = await this.venue.sequencer.submit(command);
    assert.equal(r.result, 'OK', `${command.type}: ${r.result} ${r.message ?? ''}`);
    return r;
  }

  chains(coin: string): readonly ChainSpec[] {
    return this.venue.sequencer.engine.funds.coinFunds(coin)?.chains ?? [];
  }

  /** Users with deposit addresses on every chain, fund passwords, and books of external and each other's addresses. */
  async setUp(): Promise<void> {
    for (const name of USERS)
      this.users.push((await this.must({ type: 'RegisterUser', name })).userId as number);
    for (const userId of this.users) {
      await this.must({ type: 'SetFundPassword', userId, hash: 'checked-at-the-edge' });
      for (const coin of COINS) {
        for (const chain of this.chains(coin)) {
          const address = await this.venue.chain.adapter(coin, chain.name).depositAddress(userId);
          await this.must({ type: 'AssignDepositAddress', userId, coin, chain: chain.name, ...address });
        }
      }
    }
    for (const userId of this.users) {
      for (const coin of COINS) {
        for (const chain of this.chains(coin)) {
          const next = this.users[(this.users.indexOf(userId) + 1) % this.users.length] as number;
          const theirs = await this.venue.chain.adapter(coin, chain.name).depositAddress(next);
          for (const address of [externalAddress(chain, userId), joinAddress(theirs.address, theirs.memo)]) {
            await this.must({ type: 'AddWithdrawAddress', userId, coin, chain: chain.name, address });
            await this.must({ type: 'VerifyWithdrawAddress', userId, coin, address });
          }
        }
      }
    }
    // Everyone starts with coins to trade and withdraw, deposited on chain while the venue is
    // down: the first pass after the restart finds them final.
    await this.venue.watcher.stop();
    for (const userId of this.users) {
      await this.deposit(userId, 'usdt', 'TRC20', 200_000_000_000);
      await this.deposit(userId, 'btc', 'BTC', 500_000_000);
      await this.deposit(userId, 'xwc', 'XWC', 100_000_000_000);
    }
    this.venue.chain.mine(20);
    await this.restart();
  }

  async deposit(userId: number, coin: string, chain: string, amount: number): Promise<void> {
    const to = await this.venue.chain.adapter(coin, chain).depositAddress(userId);
    this.venue.chain.deposit(coin, chain, to.address, to.memo, amount);
  }

  /** One random step. */
  async step(): Promise<void> {
    const rng = this.#rng;
    const engine = this.venue.sequencer.engine;
    const userId = rng.pick(this.users);
    const coin = rng.pick(COINS);
    const chain = rng.pick(this.chains(coin));
    const action = rng.weighted({
      deposit: 14,
      mine: 14,
      fail: 7,
      downtime: 3,
      withdraw: 18,
      internal: 5,
      approve: 6,
      reject: 3,
      cancel: 4,
      trade: 8,
      restart: 3,
      crashAfterSend: 2,
      cancelRace: 2,
    });
    switch (action) {
      case 'deposit':
        await this.deposit(userId, coin, chain.name, rng.int(1, 50) * 10 ** (coin === 'usdt' ? 6 : 7));
        return;
      case 'mine':
        this.venue.chain.mine(rng.int(1, 8));
        return;
      case 'fail':
        await this.#failOne();
        return;
      case 'downtime': {
        // The chain moves on while the venue is down: the first pass after the restart sees
        // deposits already final, or already failed, and withdrawals further along.
        await this.venue.watcher.stop();
        for (let k = rng.int(1, 3); k > 0; k--) {
          const r = rng.next() % 4;
          const amount = rng.int(1, 50) * 10 ** (coin === 'usdt' ? 6 : 7);
          if (r === 0) await this.deposit(userId, coin, chain.name, amount);
          else if (r === 1) this.venue.chain.mine(rng.int(1, 25));
          else if (r === 2) await this.#failOne();
          else {
            const to = await this.venue.chain.adapter(coin, chain.name).depositAddress(userId);
            const tx = this.venue.chain.deposit(coin, chain.name, to.address, to.memo, amount);
            this.venue.chain.fail(tx.hash);
          }
        }
        await this.restart();
        return;
      }
      case 'withdraw':
      case 'internal': {
        const internal = action === 'internal';
        const book = engine.funds.withdrawAddresses(userId, coin).filter((e) => e.chain === chain.name);
        const entry = internal ? book[1] : rng.chance(20) ? book[1] : book[0];
        const available = engine.balance(userId, coin)?.available ?? 0;
        // Mostly small; sometimes over the auto-approve limit, so that the operator decides.
        const limit = engine.funds.coinFunds(coin)?.autoApproveLimit ?? 0;
        const wanted = rng.chance(25)
          ? limit + rng.int(1, 1000)
          : Math.max(chain.minWithdraw, Math.floor(available / rng.int(5, 40)));
        if (entry === undefined || wanted + chain.withdrawFee > available) return;
        await this.venue.sequencer.submit({
          type: 'RequestWithdrawal',
          userId,
          coin,
          address: entry.address,
          amount: wanted,
          fee: internal && rng.chance(50) ? 0 : chain.withdrawFee,
          itransfer: internal,
        });
        return;
      }
      case 'cancelRace': {
        // A cancel right behind the request, before the watcher has claimed it: the claim
        // (SendWithdrawal) comes after the cancel in the journal, and is refused.
        const smallest = this.#smallestWithdrawal(userId, coin, chain);
        if (smallest === undefined) return;
        const withdrawalId = String(engine.funds.withdrawals(false).length + 1);
        const [request, cancel] = await Promise.all([
          this.venue.sequencer.submit(smallest),
          this.venue.sequencer.submit({ type: 'CancelWithdrawal', withdrawalId, userId }),
        ]);
        assert.deepEqual([request.withdrawalId, cancel.result], [withdrawalId, 'OK']);
        return;
      }
      case 'approve':
      case 'reject':
      case 'cancel': {
        const states = action === 'approve' ? ['submitted'] : ['submitted', 'approved'];
        const open = engine.funds.withdrawals(true).filter((w) => states.includes(w.state));
        if (open.length === 0) return;
        const w = rng.pick(open);
        const command: Command =
          action === 'approve'
            ? { type: 'ApproveWithdrawal', withdrawalId: w.withdrawalId }
            : action === 'reject'
              ? { type: 'CancelWithdrawal', withdrawalId: w.withdrawalId }
              : { type: 'CancelWithdrawal', withdrawalId: w.withdrawalId, userId: w.userId };
        await this.must(command);
        return;
      }
      case 'trade': {
        const seller = userId;
        const buyer = this.users[(this.users.indexOf(userId) + 1) % this.users.length] as number;
        const price = rng.int(2_900_000, 3_100_000);
        const amount = rng.int(1, 50) * 10;
        const order = {
          market: 'btc_usdt',
          kind: 'limit',
          price,
          amount,
          acctType: 0,
          clientOrderId: '',
        } as const;
        await this.venue.sequencer.submit({ type: 'PlaceOrder', userId: seller, side: 0, ...order });
        await this.venue.sequencer.submit({ type: 'PlaceOrder', userId: buyer, side: 1, ...order });
        return;
      }
      case 'restart':
        await this.restart();
        return;
      case 'crashAfterSend': {
        // The watcher dies after the chain has the withdrawal but before the engine knows its
        // hash: after the restart it must find the same transaction, not pay twice.
        const smallest = this.#smallestWithdrawal(userId, coin, chain);
        if (smallest === undefined) return;
        await this.venue.watcher.stop();
        const withdrawalId = (await this.must(smallest)).withdrawalId as string;
        await this.must({ type: 'SendWithdrawal', withdrawalId });
        const [address, memo] = chain.memo ? smallest.address.split('_') : [smallest.address, ''];
        await this.venue.chain.adapter(coin, chain.name).send({
          withdrawalId,
          address: address as string,
          memo: memo as string,
          amount: chain.minWithdraw,
        });
        await this.restart();
        return;
      }
    }
  }

  /** The chain's smallest withdrawal to the user's external address, if the user can pay it. */
  #smallestWithdrawal(userId: number, coin: string, chain: ChainSpec): RequestWithdrawal | undefined {
    const engine = this.venue.sequencer.engine;
    const entry = engine.funds.withdrawAddresses(userId, coin).find((e) => e.chain === chain.name);
    const available = engine.balance(userId, coin)?.available ?? 0;
    if (entry === undefined || chain.minWithdraw + chain.withdrawFee > available) return undefined;
    const { minWithdraw: amount, withdrawFee: fee } = chain;
    return { type: 'RequestWithdrawal', userId, coin, address: entry.address, amount, fee, itransfer: false };
  }

  /** Hashes of transactions not final yet and not failed: pending withdrawals' and deposits'. */
  async #pendingHashes(): Promise<string[]> {
    const engine = this.venue.sequencer.engine;
    const out = engine.funds
      .withdrawals(true)
      .map((w) => w.txHash)
      .filter((h) => h !== '');
    for (const coin of COINS) {
      for (const chain of this.chains(coin)) {
        for (const d of await this.venue.chain.adapter(coin, chain.name).deposits()) {
          if (!d.failed && d.confirmations < chain.confirmations) out.push(d.txHash);
        }
      }
    }
    return out;
  }

  /** Fails one transaction not final yet, if there is one. */
  async #failOne(): Promise<void> {
    const sim = this.venue.chain;
    const open = (await this.#pendingHashes()).filter((hash) => {
      const tx = sim.transaction(hash);
      const required = this.chains(tx?.coin ?? '').find((c) => c.name === tx?.chain)?.confirmations ?? 0;
      return tx !== undefined && !tx.failed && sim.confirmations(tx) < required;
    });
    if (open.length > 0) sim.fail(this.#rng.pick(open));
  }

  /** The identity, no double credit, and the engine's invariants, once the watcher has caught up. */
  async check(where: string): Promise<void> {
    await this.venue.watcher.sync();
    const engine = this.venue.sequencer.engine;
    engine.assertInvariants();
    const pending = engine.funds.withdrawals(true);
    assert.ok(!pending.some((w) => w.state === 'sending'), `${where}: a withdrawal is left sending`);
    for (const coin of COINS) {
      const totals = engine.totals(coin);
      assert.ok(totals !== undefined);
      const inFlight = pending
        .filter((w) => w.coin === coin && (w.state === 'sent' || w.state === 'confirmed'))
        .reduce((sum, w) => sum + BigInt(w.amount), 0n);
      const books = totals.users + BigInt(totals.feeIncome) - inFlight;
      assert.equal(
        this.venue.chain.holdings(coin),
        books,
        `${where}: ${coin} wallet vs users + fees − in flight`,
      );
      let final = 0n;
      for (const chain of this.chains(coin)) {
        for (const d of await this.venue.chain.adapter(coin, chain.name).deposits()) {
          if (!d.failed && d.confirmations >= chain.confirmations) final += BigInt(d.amount);
        }
      }
      assert.equal(totals.credited, final, `${where}: ${coin} credits vs final deposits on chain`);
    }
  }
}

/**
 * Replays a data directory's journal from genesis: the transitions of every deposit and
 * withdrawal record (`new` for its first), and the state hash it ends in.
 */
async function replay(dataDir: string): Promise<{ paths: Set<string>; stateHash: string }> {
  const journal = FileJournal.open(join(dataDir, 'journal'));
  const last = new Map<string, string>();
  const paths = new Set<string>();
  try {
    const { engine } = await recover({
      genesis: readGenesis(dataDir),
      journal,
      snapshots: undefined,
      log: SILENT_LOG,
      onReplayed: (batch) => {
        for (const { result } of batch) {
          for (const e of result.events) {
            if (e.type !== 'DepositUpdated' && e.type !== 'WithdrawalUpdated') continue;
            const id = e.type === 'DepositUpdated' ? `d:${e.depositId}` : `w:${e.withdrawalId}`;
            paths.add(`${id[0]}:${last.get(id) ?? 'new'}→${e.state}`);
            last.set(id, e.state);
          }
        }
      },
    });
    return { paths, stateHash: engine.stateHash() };
  } finally {
    await journal.close();
  }
}

/** An address outside the venue, in the chain's form. */
function externalAddress(chain: ChainSpec, userId: number): string {
  switch (chain.mainChain) {
    case 'ETH':
      return `0x${String(userId).padStart(40, 'e')}`;
    case 'TRX':
      return `T${String(userId).padStart(33, 'x')}`;
    case 'BTC':
      return `bc1q${String(userId).padStart(38, 'x')}`;
    default:
      return chain.memo ? `outside.acct_${userId}` : `ext${String(userId).padStart(30, 'x')}`;
  }
}

/**
 * Runs `steps` random steps for `seed`, checking after each, then replays the journal from
 * genesis and checks it ends in the same state. Returns the transitions taken. Throws (naming the
 * seed and step) on the first broken rule.
 */
export async function runFundsSeed(seed: number, steps: number): Promise<Set<string>> {
  const run = new FundsRun(seed);
  await run.start();
  try {
    await run.setUp();
    await run.check(`seed ${seed}, setup`);
    for (let i = 1; i <= steps; i++) {
      await run.step();
      await run.check(`seed ${seed}, step ${i} (rerun with SEED=${seed})`);
    }
    run.venue.chain.mine(30);
    await run.check(`seed ${seed}, end`);
    assert.ok(run.restarts > 0, 'the run restarted the venue');
  } finally {
    await run.venue.close();
  }
  const replayed = await replay(run.dataDir);
  assert.equal(
    replayed.stateHash,
    run.venue.sequencer.engine.stateHash(),
    'the journal replays to the same state',
  );
  return replayed.paths;
}

/** The transitions of DEPOSIT_PATHS and WITHDRAWAL_PATHS that `paths` lacks. */
export function missingPaths(paths: ReadonlySet<string>): string[] {
  return [...DEPOSIT_PATHS.map((p) => `d:${p}`), ...WITHDRAWAL_PATHS.map((p) => `w:${p}`)].filter(
    (p) => !paths.has(p),
  );
}
