/**
 * @module chain-port — what Bourse needs of a blockchain, per coin and chain: deposit addresses,
 * the deposits paying them with their confirmations, withdrawals sent, and their progress. The
 * built-in adapter is the simulated chain (simulated-chain.ts); a real one implements the same.
 *
 * Adapters report facts; the engine decides. Whatever an adapter reports reaches the engine as a
 * journaled command (ReportDeposit, MarkWithdrawalSent, ConfirmWithdrawal, FailWithdrawal), which
 * the engine applies once per (coin, chain, transaction, output) however often it is reported.
 */
import type { ChainSpec } from '../domain/chains.ts';
import type { ReportDeposit } from '../domain/commands.ts';
import type { CoinUnits } from '../domain/money.ts';

/** A deposit address: on a memo chain the shared account and the user's memo, else memo ''. */
export interface ChainAddress {
  readonly address: string;
  readonly memo: string;
}

/**
 * One output paying a deposit address of the venue, as the chain sees it now: what the watcher
 * reports as a ReportDeposit (transaction hash, output, address, memo, amount, confirmations,
 * whether it failed), without the coin and chain the adapter stands for.
 */
export type ChainDeposit = Omit<ReportDeposit, 'type' | 'coin' | 'chain'>;

/** A withdrawal to send. */
export interface WithdrawalOrder {
  readonly withdrawalId: string;
  readonly address: string;
  readonly memo: string;
  readonly amount: CoinUnits;
}

/** How a sent transaction is doing. */
export interface ChainTransfer {
  readonly txHash: string;
  readonly confirmations: number;
  readonly failed: boolean;
}

export interface ChainAdapter {
  readonly coin: string;
  readonly chain: ChainSpec;
  /**
   * The deposit address of a user, the same on every call for the same user (as an HD wallet
   * derives one per index), from then on watched for deposits.
   */
  depositAddress(userId: number): Promise<ChainAddress>;
  /** Whether `text` (wire form: `<account>_<memo>` on memo chains) can receive a withdrawal. */
  isAddress(text: string): boolean;
  /**
   * The outputs paying the venue's deposit addresses, with their confirmations. An adapter may
   * leave out deposits it has reported final before; the engine ignores repeats either way.
   */
  deposits(): Promise<readonly ChainDeposit[]>;
  /**
   * Broadcasts a withdrawal and returns its transaction hash. Idempotent per withdrawal id: a
   * second call (after a crash, say) returns the first transaction's hash and sends nothing.
   */
  send(order: WithdrawalOrder): Promise<string>;
  /** The progress of a transaction this adapter sent; undefined for a hash it does not know. */
  transfer(txHash: string): Promise<ChainTransfer | undefined>;
  /** Calls `listener` whenever the chain may have news (a block, a transaction). */
  onChange(listener: () => void): void;
}
