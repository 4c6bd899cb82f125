/**
 * @module sub-accounts — a main user's sub-accounts (issue 33): users of their own owned by a main
 * user, and the transfers between the users of one family.
 *
 * Commands: AddSubUser, TransferFunds. A sub-account is registered like any user (RegisterUser's
 * name rules, unique regardless of case) and then owned by its main user, for good; the tree has
 * one level (a sub-account owns none). The tree lives in the registry (`User.mainUserId`,
 * `Registry.subsOf`); this module applies the commands and checks the tree's own rules.
 * Transfers move spot `available` only, with a bill on both sides, so every coin's total is
 * unchanged (the ledger's conservation check covers them like any other move).
 */
import type { AddSubUser, SubAccountCommand, TransferFunds } from '../domain/commands.ts';
import { SUB_ACCOUNT_COMMAND_TYPES } from '../domain/commands.ts';
import { formatUnitsTrim } from '../domain/money.ts';
import { refused, type CommandContext } from './command-context.ts';
import { MAX_HASH_LENGTH } from './funds.ts';
import type { ApplyResult } from './results.ts';
import type { Ledger } from './ledger.ts';
import type { Registry, SubUserRecord, User } from './registry.ts';

/** Most sub-accounts one main user may have (a bound on the list and on a family's transfers). */
export const MAX_SUB_USERS = 100;
/** Longest memo kept with a sub-account (printable text). */
export const MAX_SUB_USER_MEMO_LENGTH = 64;
const MEMO = new RegExp(`^[^\\u0000-\\u001f\\u007f]{0,${MAX_SUB_USER_MEMO_LENGTH}}$`, 'u');

const TYPES: ReadonlySet<string> = new Set(SUB_ACCOUNT_COMMAND_TYPES);

/** Whether a command is one of this module's (the engine's dispatch). */
export const isSubAccountCommand = (cmd: { readonly type: string }): cmd is SubAccountCommand =>
  TYPES.has(cmd.type);

/** Read-only: the tree, for the API and the operator's views. */
export interface SubAccountsView {
  /** The main user owning a sub-account; `undefined` for a main user or an unknown id. */
  mainOf(userId: number): number | undefined;
  /** A main user's sub-accounts, in the order they were added. */
  subsOf(mainUserId: number): readonly SubUserRecord[];
}

/** What the module needs besides the registry and ledger: the sub-account's fund password. */
export interface SubAccountHooks {
  /** Applies SetFundPassword for the new sub-account (its events go to the command's). */
  setFundPassword(userId: number, hash: string): ApplyResult;
}

export class SubAccounts implements SubAccountsView {
  readonly #ctx: CommandContext;
  readonly #registry: Registry;
  readonly #ledger: Ledger;
  readonly #hooks: SubAccountHooks;

  constructor(ctx: CommandContext, registry: Registry, ledger: Ledger, hooks: SubAccountHooks) {
    this.#ctx = ctx;
    this.#registry = registry;
    this.#ledger = ledger;
    this.#hooks = hooks;
  }

  apply(cmd: SubAccountCommand): ApplyResult {
    switch (cmd.type) {
      case 'AddSubUser':
        return this.#addSubUser(cmd);
      case 'TransferFunds':
        return this.#transferFunds(cmd);
    }
  }

  mainOf(userId: number): number | undefined {
    return this.#registry.user(userId)?.mainUserId;
  }

  subsOf(mainUserId: number): readonly SubUserRecord[] {
    return this.#registry.subsOf(mainUserId);
  }

  /**
   * The main user of a command: registered, not a sub-account, not frozen. Refusals:
   * USER_NOT_FOUND, INVALID_STATE (a sub-account has no sub-accounts), ACCOUNT_FROZEN.
   */
  #main(mainUserId: number): User | ApplyResult {
    const main = this.#registry.user(mainUserId);
    if (main === undefined) return refused('USER_NOT_FOUND');
    if (main.mainUserId !== undefined)
      return refused('INVALID_STATE', 'a sub-account cannot have sub-accounts of its own');
    if (this.#registry.isFrozen(main)) return refused('ACCOUNT_FROZEN');
    return main;
  }

  /**
   * AddSubUser: registers the sub-account (UserRegistered), owns it (SubUserAdded) and sets its
   * fund password (FundPasswordSet), or refuses with nothing changed. Results: OK with `userId`;
   * those of `#main`; INVALID_PARAMETER (memo, password hash, a taken or malformed name: the
   * registry's rules); INVALID_STATE (MAX_SUB_USERS reached).
   */
  #addSubUser(cmd: AddSubUser): ApplyResult {
    const main = this.#main(cmd.mainUserId);
    if ('result' in main) return main;
    if (typeof cmd.memo !== 'string' || !MEMO.test(cmd.memo))
      return refused(
        'INVALID_PARAMETER',
        `memo must be at most ${MAX_SUB_USER_MEMO_LENGTH} printable characters`,
      );
    if (
      typeof cmd.passwordHash !== 'string' ||
      cmd.passwordHash.length === 0 ||
      cmd.passwordHash.length > MAX_HASH_LENGTH
    )
      return refused('INVALID_PARAMETER', 'the sub-account password hash is missing');
    if (this.#registry.subsOf(main.userId).length >= MAX_SUB_USERS)
      return refused('INVALID_STATE', `a user may have at most ${MAX_SUB_USERS} sub-accounts`);
    const registered = this.#registry.apply({
      type: 'RegisterUser',
      name: cmd.name,
      uniqueIgnoringCase: true,
    });
    if (registered.result !== 'OK') return registered;
    const userId = registered.userId as number;
    this.#registry.addSub({ userId, mainUserId: main.userId, memo: cmd.memo });
    this.#ctx.events.push({
      type: 'SubUserAdded',
      mainUserId: main.userId,
      userId,
      memo: cmd.memo,
      time: this.#ctx.time,
    });
    const password = this.#hooks.setFundPassword(userId, cmd.passwordHash);
    // The hash was checked above as SetFundPassword checks it: a refusal here is a broken invariant.
    if (password.result !== 'OK') throw new Error(`sub-account ${userId}: fund password refused`);
    return { result: 'OK', events: this.#ctx.events, userId };
  }

  /**
   * TransferFunds: `amount` of the coin from one user's spot `available` to another's, both of the
   * main user's family (the main user and its sub-accounts), the two different. Events:
   * BalanceChanged (subTransferOut, ref the receiver's name), BalanceChanged (subTransferIn, ref
   * the sender's name). Results: those of `#main`; USER_NOT_FOUND (a user outside the family:
   * unknown, or another main user's, told apart by nobody); INVALID_PARAMETER (the same user
   * twice); UNKNOWN_COIN; INVALID_AMOUNT (not a positive safe integer); ACCOUNT_FROZEN (either
   * side frozen); INSUFFICIENT_BALANCE.
   */
  #transferFunds(cmd: TransferFunds): ApplyResult {
    const main = this.#main(cmd.mainUserId);
    if ('result' in main) return main;
    const from = this.#member(main, cmd.fromUserId);
    const to = this.#member(main, cmd.toUserId);
    if (from === undefined || to === undefined)
      return refused('USER_NOT_FOUND', 'both sides must be this user or one of its sub-accounts');
    if (from === to) return refused('INVALID_PARAMETER', 'a transfer needs two different users');
    const coin = this.#registry.coin(cmd.coin);
    if (coin === undefined) return refused('UNKNOWN_COIN', `unknown coin '${String(cmd.coin)}'`);
    if (!Number.isSafeInteger(cmd.amount) || cmd.amount <= 0)
      return refused('INVALID_AMOUNT', 'amount must be positive');
    if (this.#registry.isFrozen(from) || this.#registry.isFrozen(to)) return refused('ACCOUNT_FROZEN');
    const available = from.spot.available(coin.index);
    if (available < cmd.amount) {
      const text = (units: number): string =>
        `${formatUnitsTrim(units, coin.spec.unitDecimal)} ${coin.spec.name}`;
      return refused(
        'INSUFFICIENT_BALANCE',
        `insufficient balance: ${from.name} has ${text(available)} available, the transfer is ${text(cmd.amount)}`,
      );
    }
    this.#ledger.change(from.spot, coin, -cmd.amount, 0, 'subTransferOut', to.name);
    this.#ledger.change(to.spot, coin, cmd.amount, 0, 'subTransferIn', from.name);
    return { result: 'OK', events: this.#ctx.events };
  }

  /** The user if it is `main` or one of its sub-accounts. */
  #member(main: User, userId: number): User | undefined {
    const user = this.#registry.user(userId);
    if (user === undefined) return undefined;
    return user === main || user.mainUserId === main.userId ? user : undefined;
  }

  /**
   * The tree's rules: every sub-account's main user exists and is not a sub-account itself, the
   * user and the list agree, and no main user has more than MAX_SUB_USERS. Throws on a broken one.
   */
  assertInvariants(): void {
    let listed = 0;
    for (const list of this.#registry.subAccounts()) {
      if (list.length > MAX_SUB_USERS) throw new Error('more sub-accounts than MAX_SUB_USERS');
      for (const sub of list) {
        listed++;
        const main = this.#registry.user(sub.mainUserId);
        const user = this.#registry.user(sub.userId);
        if (main === undefined || main.mainUserId !== undefined)
          throw new Error(`sub-account ${sub.userId}: main user ${sub.mainUserId} missing or a sub-account`);
        if (user?.mainUserId !== sub.mainUserId)
          throw new Error(`sub-account ${sub.userId}: its user does not name main user ${sub.mainUserId}`);
      }
    }
    let owned = 0;
    for (const user of this.#registry.users()) if (user.mainUserId !== undefined) owned++;
    if (owned !== listed) throw new Error(`${owned} users name a main user, ${listed} are listed`);
  }
}
