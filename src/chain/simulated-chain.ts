/**
 * @module simulated-chain — the built-in chain: one simulated network carrying every configured
 * coin and chain, with addresses, transactions, blocks and confirmations, driven by the operator
 * (`bourse chain deposit | mine | fail`) and by tests. Each coin and chain is reached through a
 * ChainAdapter view (`adapter(coin, chain)`), as a real chain would be.
 *
 * ## State and durability
 * The state is a pure function of an append-only log of operations (venue address watched, a
 * transaction, blocks mined, a transaction failed) kept in `<data>/chain/simulated-chain.jsonl`,
 * one JSON object per line, each written and fsynced before the operation returns. Opening the
 * chain replays the log; a torn last line (a crash mid-write) is dropped. Transaction hashes and
 * deposit addresses are derived from the log position and the user id, so a replay gives the
 * same ones.
 *
 * ## Rules
 * - One block height for the whole network: `mine(n)` puts every pending transaction into the
 *   next block and adds n blocks in all. A transaction in block b has height − b + 1
 *   confirmations; a pending one has 0.
 * - A deposit from outside may only pay a deposit address the venue watches (a memo chain: its
 *   account with a memo the venue gave out), so that a mistyped address is an error, not lost coins.
 * - A transaction can fail (be dropped or reverted) until it has the chain's required
 *   confirmations; after that it is final.
 * - The venue's wallet of a coin holds the final deposits to its addresses less every withdrawal
 *   it sent that did not fail (`holdings`). A withdrawal to another user's deposit address is, on
 *   chain, also a deposit to that address.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { ADDRESS_TEXT, joinAddress, splitAddress, type ChainSpec, type CoinFunds } from '../domain/chains.ts';
import type { CoinUnits } from '../domain/money.ts';
import type { ResultName } from '../domain/result-codes.ts';
import type {
  ChainAdapter,
  ChainAddress,
  ChainDeposit,
  ChainTransfer,
  WithdrawalOrder,
} from './chain-port.ts';

export const SIMULATED_CHAIN_FILE = 'simulated-chain.jsonl';

/** A transaction on the simulated network (every one has a single output). */
export interface SimulatedTx {
  readonly hash: string;
  readonly coin: string;
  readonly chain: string;
  readonly to: string;
  readonly memo: string;
  readonly amount: CoinUnits;
  /** The withdrawal it pays out; '' for a deposit from outside. */
  readonly withdrawalId: string;
  /** The block it is in; 0 while pending. */
  block: number;
  failed: boolean;
}

type Operation =
  | { op: 'watch'; coin: string; chain: string; address: string; memo: string }
  | { op: 'tx'; coin: string; chain: string; to: string; memo: string; amount: number; withdrawalId: string }
  | { op: 'mine'; blocks: number }
  | { op: 'fail'; hash: string };

/** An operator's request the chain cannot carry out: the result to answer, and a message saying why. */
export class ChainError extends Error {
  readonly result: ResultName;
  constructor(result: ResultName, message: string) {
    super(message);
    this.result = result;
  }
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

/** Address forms of the networks the default venue uses; others get a generic one. */
const ADDRESS_FORMS: Readonly<
  Record<string, { readonly make: (digest: Buffer) => string; readonly test: RegExp }>
> = {
  ETH: { make: (d) => `0x${d.toString('hex').slice(0, 40)}`, test: /^0x[0-9a-fA-F]{40}$/ },
  TRX: { make: (d) => `T${encode(d, BASE58, 33)}`, test: /^T[1-9A-HJ-NP-Za-km-z]{33}$/ },
  BTC: {
    make: (d) => `bc1q${encode(d, BECH32, 38)}`,
    test: /^(bc1[02-9ac-hj-np-z]{11,71}|[13][1-9A-HJ-NP-Za-km-z]{25,34})$/,
  },
};
const GENERIC_FORM = { test: /^[A-Za-z0-9.:-]{20,100}$/ };

function encode(digest: Buffer, alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[(digest[i % digest.length] as number) % alphabet.length];
  return out;
}

const digestOf = (text: string): Buffer => createHash('sha256').update(text).digest();
const key = (coin: string, chain: string, address: string, memo: string): string =>
  `${coin}/${chain}/${address}/${memo}`;

export class SimulatedChain {
  readonly #specs = new Map<string, ChainSpec>();
  readonly #path: string | undefined;
  #height = 0;
  readonly #txs: SimulatedTx[] = [];
  readonly #byHash = new Map<string, SimulatedTx>();
  /** `${coin}/${chain}/${withdrawalId}` → the transaction that pays it. */
  readonly #byWithdrawal = new Map<string, SimulatedTx>();
  /** Watched deposit addresses: key(coin, chain, address, memo). */
  readonly #watched = new Set<string>();
  readonly #listeners: (() => void)[] = [];

  /**
   * The chain for the given funds configuration, its log in `dir` (created if missing), or kept
   * in memory only without one. `log` hears about a torn last line dropped on opening.
   */
  static open(
    funds: readonly CoinFunds[],
    dir?: string,
    log: (message: string) => void = () => {},
  ): SimulatedChain {
    return new SimulatedChain(funds, dir, log);
  }

  private constructor(funds: readonly CoinFunds[], dir: string | undefined, log: (message: string) => void) {
    for (const f of funds) for (const c of f.chains) this.#specs.set(`${f.coin}/${c.name}`, c);
    if (dir === undefined) return;
    mkdirSync(dir, { recursive: true });
    this.#path = join(dir, SIMULATED_CHAIN_FILE);
    if (!existsSync(this.#path)) return;
    const text = readFileSync(this.#path, 'utf8');
    const lines = text.split('\n');
    const torn = lines.pop() as string;
    if (torn !== '') {
      // Cut it off, so that the next record starts on a line of its own.
      truncateSync(this.#path, Buffer.byteLength(text) - Buffer.byteLength(torn));
      log(`simulated chain: dropped a torn last record (${torn.length} characters)`);
    }
    for (const line of lines) this.#replay(JSON.parse(line) as Operation);
  }

  /**
   * Carries a coin's chains from now on (a coin added or changed at run time: CoinFundsSet) and
   * returns the adapters of the chains it did not carry before. A chain it carried keeps its
   * adapter; its spec here is only what the adapter reports, the engine keeps the rules.
   */
  carry(funds: CoinFunds): ChainAdapter[] {
    const added: ChainAdapter[] = [];
    for (const c of funds.chains) {
      const k = `${funds.coin}/${c.name}`;
      const known = this.#specs.has(k);
      this.#specs.set(k, c);
      if (!known) added.push(this.adapter(funds.coin, c.name));
    }
    return added;
  }

  /** The adapter for one coin and chain of the configuration. */
  adapter(coin: string, chain: string): ChainAdapter {
    const spec = this.#specs.get(`${coin}/${chain}`);
    if (spec === undefined) throw new Error(`the simulated chain carries no ${coin} on ${chain}`);
    return new SimulatedChainAdapter(this, coin, spec);
  }

  /** One adapter per coin and chain of the configuration, in its order. */
  adapters(): ChainAdapter[] {
    return [...this.#specs.keys()].map((k) => {
      const [coin, chain] = k.split('/') as [string, string];
      return this.adapter(coin, chain);
    });
  }

  get height(): number {
    return this.#height;
  }

  // ───────────────────────────── driving it ─────────────────────────────

  /**
   * A deposit from outside: a pending transaction paying `amount` to a watched deposit address.
   * Throws a ChainError when the coin and chain are not carried or the address is not watched.
   */
  deposit(coin: string, chain: string, to: string, memo: string, amount: CoinUnits): SimulatedTx {
    const spec = this.#specs.get(`${coin}/${chain}`);
    if (spec === undefined)
      throw new ChainError('INVALID_PARAMETER', `the simulated chain carries no ${coin} on ${chain}`);
    if (!this.#watched.has(key(coin, chain, to, memo))) {
      throw new ChainError(
        'INVALID_PARAMETER',
        `${joinAddress(to, memo)} is not a deposit address of this venue on ${coin}/${chain}`,
      );
    }
    if (!Number.isSafeInteger(amount) || amount <= 0)
      throw new ChainError('INVALID_AMOUNT', 'the amount must be positive');
    return this.#record({ op: 'tx', coin, chain, to, memo, amount, withdrawalId: '' }) as SimulatedTx;
  }

  /** Mines `blocks` blocks (1 to 10,000), the first with every pending transaction. Returns the new height. */
  mine(blocks: number): number {
    if (!Number.isInteger(blocks) || blocks < 1 || blocks > 10_000)
      throw new ChainError('INVALID_PARAMETER', 'mine 1 to 10000 blocks');
    this.#record({ op: 'mine', blocks });
    return this.#height;
  }

  /** Fails a transaction that is not final yet (dropped while pending, or reverted). */
  fail(hash: string): SimulatedTx {
    const tx = this.#byHash.get(hash);
    if (tx === undefined) throw new ChainError('UNKNOWN_REFERENCE', `no transaction '${hash.slice(0, 100)}'`);
    if (tx.failed) throw new ChainError('INVALID_STATE', `transaction ${hash} has failed already`);
    const required = (this.#specs.get(`${tx.coin}/${tx.chain}`) as ChainSpec).confirmations;
    if (this.confirmations(tx) >= required) {
      throw new ChainError(
        'INVALID_STATE',
        `transaction ${hash} is final (${this.confirmations(tx)} of ${required} confirmations)`,
      );
    }
    this.#record({ op: 'fail', hash });
    return tx;
  }

  /** The coins and chains on which `address` (with `memo`) is a watched deposit address. */
  watchedAddress(address: string, memo: string): { coin: string; chain: ChainSpec }[] {
    const found: { coin: string; chain: ChainSpec }[] = [];
    for (const [k, spec] of this.#specs) {
      const [coin, chain] = k.split('/') as [string, string];
      if (this.#watched.has(key(coin, chain, address, memo))) found.push({ coin, chain: spec });
    }
    return found;
  }

  /** Whether `address` is the shared account of a memo chain (deposits to it need a memo). */
  isMemoAccount(address: string): boolean {
    for (const watched of this.#watched) {
      const [, , account, memo] = watched.split('/');
      if (account === address && memo !== '') return true;
    }
    return false;
  }

  transaction(hash: string): SimulatedTx | undefined {
    return this.#byHash.get(hash);
  }

  confirmations(tx: SimulatedTx): number {
    return tx.block === 0 ? 0 : this.#height - tx.block + 1;
  }

  /**
   * What the venue's wallets hold of a coin: final deposits to its addresses, less every
   * withdrawal it sent that has not failed.
   */
  holdings(coin: string): bigint {
    let held = 0n;
    for (const tx of this.#txs) {
      if (tx.coin !== coin || tx.failed) continue;
      const spec = this.#specs.get(`${tx.coin}/${tx.chain}`) as ChainSpec;
      if (tx.withdrawalId !== '') held -= BigInt(tx.amount);
      if (
        this.#watched.has(key(tx.coin, tx.chain, tx.to, tx.memo)) &&
        this.confirmations(tx) >= spec.confirmations
      )
        held += BigInt(tx.amount);
    }
    return held;
  }

  // ───────────────────────────── what the adapters use ─────────────────────────────

  /** Watches a derived deposit address (logged once, so that it is watched after a restart too). */
  watch(coin: string, chain: string, address: ChainAddress): void {
    if (!this.#watched.has(key(coin, chain, address.address, address.memo)))
      this.#record({ op: 'watch', coin, chain, ...address });
  }

  depositsOf(coin: string, chain: string): ChainDeposit[] {
    const out: ChainDeposit[] = [];
    for (const tx of this.#txs) {
      if (tx.coin !== coin || tx.chain !== chain || !this.#watched.has(key(coin, chain, tx.to, tx.memo)))
        continue;
      out.push({
        txHash: tx.hash,
        output: 0,
        address: tx.to,
        memo: tx.memo,
        amount: tx.amount,
        confirmations: this.confirmations(tx),
        failed: tx.failed,
      });
    }
    return out;
  }

  /** Sends a withdrawal once; a repeat returns the transaction already sent. */
  send(coin: string, chain: string, order: WithdrawalOrder): SimulatedTx {
    const sent = this.#byWithdrawal.get(`${coin}/${chain}/${order.withdrawalId}`);
    if (sent !== undefined) return sent;
    const { withdrawalId, address: to, memo, amount } = order;
    return this.#record({ op: 'tx', coin, chain, to, memo, amount, withdrawalId }) as SimulatedTx;
  }

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  // ───────────────────────────── the log ─────────────────────────────

  /** Writes the operation (fsynced) and applies it, then tells the listeners. */
  #record(op: Operation): SimulatedTx | undefined {
    if (this.#path !== undefined) {
      const fd = openSync(this.#path, 'a');
      try {
        writeSync(fd, `${JSON.stringify(op)}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    const tx = this.#replay(op);
    for (const listener of this.#listeners) listener();
    return tx;
  }

  #replay(op: Operation): SimulatedTx | undefined {
    switch (op.op) {
      case 'watch':
        this.#watched.add(key(op.coin, op.chain, op.address, op.memo));
        return undefined;
      case 'tx': {
        const digest = digestOf(`bourse-sim/tx/${op.coin}/${op.chain}/${this.#txs.length}`).toString('hex');
        const spec = this.#specs.get(`${op.coin}/${op.chain}`);
        const hash = spec?.mainChain === 'ETH' ? `0x${digest}` : digest;
        const { coin, chain, to, memo, amount, withdrawalId } = op;
        const tx: SimulatedTx = {
          hash,
          coin,
          chain,
          to,
          memo,
          amount,
          withdrawalId,
          block: 0,
          failed: false,
        };
        this.#txs.push(tx);
        this.#byHash.set(hash, tx);
        if (tx.withdrawalId !== '') this.#byWithdrawal.set(`${tx.coin}/${tx.chain}/${tx.withdrawalId}`, tx);
        return tx;
      }
      case 'mine':
        for (const tx of this.#txs) if (tx.block === 0 && !tx.failed) tx.block = this.#height + 1;
        this.#height += op.blocks;
        return undefined;
      case 'fail': {
        const tx = this.#byHash.get(op.hash) as SimulatedTx;
        tx.failed = true;
        return tx;
      }
    }
  }
}

/** One coin and chain of the simulated network, seen through the chain port. */
class SimulatedChainAdapter implements ChainAdapter {
  readonly coin: string;
  readonly chain: ChainSpec;
  readonly #network: SimulatedChain;

  constructor(network: SimulatedChain, coin: string, chain: ChainSpec) {
    this.#network = network;
    this.coin = coin;
    this.chain = chain;
  }

  /**
   * Derived from the coin, chain and user (like an HD wallet's index): an address in the
   * network's form; on a memo chain the account `bourse.<coin>` and the memo 100000 + user id.
   */
  async depositAddress(userId: number): Promise<ChainAddress> {
    const form = ADDRESS_FORMS[this.chain.mainChain];
    const digest = digestOf(`bourse-sim/address/${this.coin}/${this.chain.name}/${userId}`);
    const address: ChainAddress = this.chain.memo
      ? { address: `bourse.${this.coin}`, memo: String(100_000 + userId) }
      : {
          address:
            form?.make(digest) ?? `${this.chain.mainChain.toLowerCase()}1${encode(digest, BECH32, 38)}`,
          memo: '',
        };
    this.#network.watch(this.coin, this.chain.name, address);
    return address;
  }

  isAddress(text: string): boolean {
    const parts = splitAddress(text, this.chain.memo);
    if (parts === undefined) return false;
    if (this.chain.memo) return ADDRESS_TEXT.test(parts.address);
    return (ADDRESS_FORMS[this.chain.mainChain] ?? GENERIC_FORM).test.test(parts.address);
  }

  async deposits(): Promise<readonly ChainDeposit[]> {
    return this.#network.depositsOf(this.coin, this.chain.name);
  }

  async send(order: WithdrawalOrder): Promise<string> {
    return this.#network.send(this.coin, this.chain.name, order).hash;
  }

  async transfer(txHash: string): Promise<ChainTransfer | undefined> {
    const tx = this.#network.transaction(txHash);
    if (tx === undefined || tx.coin !== this.coin || tx.chain !== this.chain.name) return undefined;
    return { txHash, confirmations: this.#network.confirmations(tx), failed: tx.failed };
  }

  onChange(listener: () => void): void {
    this.#network.onChange(listener);
  }
}
