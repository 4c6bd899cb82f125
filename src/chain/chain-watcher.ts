/**
 * @module chain-watcher — keeps the engine in step with the chains. Each pass reports every
 * deposit to a user's address whose confirmations the engine does not have yet (ReportDeposit),
 * sends approved withdrawals (SendWithdrawal first, so that they can no longer be cancelled, then
 * the adapter's send, then MarkWithdrawalSent) and reports how sent ones are doing
 * (ConfirmWithdrawal, FailWithdrawal).
 *
 * It reads the engine and the chains and changes the engine only through journaled commands,
 * which the engine applies once however often they come. After a crash anywhere in a pass, the
 * next pass (at start-up) picks up where it stopped: a deposit is reported again and is a
 * duplicate; a withdrawal left `sending` is sent again, and the adapter, idempotent per
 * withdrawal, returns the transaction it sent the first time.
 */
import { chainDepositId, splitAddress, type CoinFunds } from '../domain/chains.ts';
import type { Command } from '../domain/commands.ts';
import type { ApplyResult } from '../engine/engine.ts';
import type { VenueState } from '../sequencer/venue-ports.ts';
import type { WithdrawalView } from '../engine/funds.ts';
import type { AppliedCommand } from '../sequencer/sequencer.ts';
import type { ChainAdapter } from './chain-port.ts';

/** After a BUSY answer or a chain error, the next pass comes this much later (ms). */
const RETRY_MS = 200;

export interface ChainWatcherOptions {
  /** Read for deposit addresses, deposit records and withdrawals in progress. */
  readonly engine: VenueState;
  /** Sequences a command; resolves once it is durable and applied. */
  readonly submit: (command: Command) => Promise<ApplyResult>;
  readonly adapters: readonly ChainAdapter[];
  /**
   * The adapters of a coin's chains that `adapters` lacks, for a coin added or changed at run
   * time (a CoinFundsSet event in an applied batch); absent: chains stay those of the start.
   */
  readonly carry?: (funds: CoinFunds) => readonly ChainAdapter[];
  readonly log: (message: string) => void;
  /** Also run a pass this often (ms; 0: only when told or when a chain announces news). */
  readonly pollMs?: number;
}

export class ChainWatcher {
  readonly #options: ChainWatcherOptions;
  readonly #adapters = new Map<string, ChainAdapter>();
  #current: Promise<void> = Promise.resolve();
  #queued: Promise<void> | undefined;
  #retry = false;
  #stopped = false;
  #poll: NodeJS.Timeout | undefined;
  #started = false;

  constructor(options: ChainWatcherOptions) {
    this.#options = options;
    for (const a of options.adapters) this.#adapters.set(`${a.coin}/${a.chain.name}`, a);
  }

  /** Listens to the chains (and polls, if asked) and runs a first pass; resolves when it is done. */
  start(): Promise<void> {
    this.#started = true;
    for (const a of this.#adapters.values()) a.onChange(() => void this.sync());
    const pollMs = this.#options.pollMs ?? 0;
    if (pollMs > 0) {
      this.#poll = setInterval(() => void this.sync(), pollMs);
      this.#poll.unref();
    }
    return this.sync();
  }

  /**
   * Runs a pass after the one running, if any; calls made before that pass starts share it.
   * Resolves when it has run. Never rejects: a failure is logged and retried shortly.
   */
  sync(): Promise<void> {
    if (this.#stopped) return this.#current;
    if (this.#queued !== undefined) return this.#queued;
    const next = this.#current.then(async () => {
      this.#queued = undefined;
      if (this.#stopped) return;
      await this.#pass();
      if (this.#retry && !this.#stopped) {
        this.#retry = false;
        setTimeout(() => void this.sync(), RETRY_MS).unref();
      }
    });
    this.#queued = next;
    this.#current = next;
    return next;
  }

  /** Every adapter watched, those of chains added at run time included. */
  adapters(): ChainAdapter[] {
    return [...this.#adapters.values()];
  }

  /** Watches one more chain (added at run time). */
  add(adapter: ChainAdapter): void {
    const k = `${adapter.coin}/${adapter.chain.name}`;
    if (this.#adapters.has(k)) return;
    this.#adapters.set(k, adapter);
    if (this.#started) adapter.onChange(() => void this.sync());
  }

  /**
   * For the sequencer: a withdrawal approved in this batch is sent without waiting for a poll, and
   * a coin's chains set at run time are watched from now on.
   */
  readonly onApplied = (batch: readonly AppliedCommand[]): void => {
    let pass = false;
    for (const { result } of batch) {
      for (const e of result.events) {
        if (e.type === 'WithdrawalUpdated' && e.state === 'approved') pass = true;
        if (e.type === 'CoinFundsSet' && this.#options.carry !== undefined) {
          for (const a of this.#options.carry(e.funds)) this.add(a);
        }
      }
    }
    if (pass) void this.sync();
  };

  /** Stops passes and polling; resolves once the running pass is over. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#poll !== undefined) clearInterval(this.#poll);
    await this.#current;
  }

  async #pass(): Promise<void> {
    for (const adapter of this.#adapters.values()) {
      try {
        await this.#deposits(adapter);
      } catch (error) {
        this.#failed(`deposits of ${adapter.coin}/${adapter.chain.name}`, error);
      }
    }
    for (const w of this.#options.engine.funds.withdrawals(true)) {
      const adapter = this.#adapters.get(`${w.coin}/${w.chain}`);
      if (adapter === undefined || w.itransfer) continue;
      try {
        await this.#withdrawal(adapter, w);
      } catch (error) {
        this.#failed(`withdrawal ${w.withdrawalId}`, error);
      }
    }
  }

  async #deposits(adapter: ChainAdapter): Promise<void> {
    const funds = this.#options.engine.funds;
    const chain = adapter.chain.name;
    for (const d of await adapter.deposits()) {
      if (this.#stopped) return;
      // Not (yet) a user's address: the engine would refuse it; a later pass reports it.
      if (funds.depositAddressOwner(adapter.coin, chain, d.address, d.memo) === undefined) continue;
      const known = funds.deposit(chainDepositId(adapter.coin, chain, d.txHash, d.output));
      if (known !== undefined && known.state !== 'confirming') continue;
      if (known !== undefined && !d.failed && known.confirmations === d.confirmations) continue;
      await this.#submit({ type: 'ReportDeposit', coin: adapter.coin, chain, ...d });
    }
  }

  async #withdrawal(adapter: ChainAdapter, w: WithdrawalView): Promise<void> {
    const { withdrawalId } = w;
    let state = w.state;
    if (state === 'approved') {
      // Claimed before the send: from here on a cancel is refused, so nothing is paid twice.
      if (!(await this.#submit({ type: 'SendWithdrawal', withdrawalId }))) return;
      state = 'sending';
    }
    if (state === 'sending') {
      const to = splitAddress(w.address, adapter.chain.memo);
      if (to === undefined) throw new Error(`its address ${w.address} is not a ${w.chain} address`);
      const txHash = await adapter.send({
        withdrawalId,
        address: to.address,
        memo: to.memo,
        amount: w.amount,
      });
      await this.#submit({ type: 'MarkWithdrawalSent', withdrawalId, txHash });
      return;
    }
    if (state !== 'sent' && state !== 'confirmed') return;
    const t = await adapter.transfer(w.txHash);
    if (t === undefined) throw new Error(`the chain does not know its transaction ${w.txHash}`);
    if (t.failed)
      await this.#submit({ type: 'FailWithdrawal', withdrawalId, reason: 'the transaction failed on chain' });
    else if (t.confirmations !== w.confirmations)
      await this.#submit({ type: 'ConfirmWithdrawal', withdrawalId, confirmations: t.confirmations });
  }

  /** Submits a command; true when the engine applied it (a duplicate included). */
  async #submit(command: Command): Promise<boolean> {
    const r = await this.#options.submit(command);
    if (r.result === 'OK') return true;
    if (r.result === 'BUSY') this.#retry = true;
    // Any other refusal means the state moved on since it was read (a cancel, say): nothing to do.
    else this.#options.log(`chain watcher: ${command.type} refused: ${r.result} ${r.message ?? ''}`);
    return false;
  }

  #failed(what: string, error: unknown): void {
    this.#options.log(`chain watcher: ${what}: ${(error as Error).message ?? String(error)}`);
    this.#retry = true;
  }
}
