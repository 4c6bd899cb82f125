/**
 * @module venue-reader — what the operator's views read from the venue that the engine's public
 * reads do not give one by one: every user and resting orders per market
 * (per-coin sums come from `engine.books`). `engineReader` answers them from the engine's own reads (records by
 * id, per-coin sums, book sizes): nothing copies the state (docs/operations.md, "What the views
 * read").
 */
import type { UserStatus } from '../../domain/commands.ts';
import type { VenueState } from '../../sequencer/venue-ports.ts';

/** One registered user, as the views list them. */
export interface UserRecord {
  readonly userId: number;
  readonly name: string;
  /**
   * When the user was registered (ms, the RegisterUser command's time), or undefined for a user
   * registered before the venue kept it (issue 16).
   */
  readonly created: number | undefined;
  /** `active`, or `frozen`: orders and withdrawals refused (SetUserStatus). */
  readonly status: UserStatus;
}

/** The reads the views need beyond the engine's public methods. */
export interface VenueReader {
  /** Every user, by id ascending. */
  users(): UserRecord[];
  /** One user, or undefined for an unknown id. */
  user(userId: number): UserRecord | undefined;
  /** Resting orders per market name (a market without any is absent). */
  openOrdersByMarket(): Map<string, number>;
}

/** The reader over the engine's public reads. */
export function engineReader(engine: VenueState): VenueReader {
  const record = (userId: number): UserRecord | undefined => {
    const name = engine.userName(userId);
    const r = engine.userRecord(userId);
    if (name === undefined || r === undefined) return undefined;
    return { userId, name, created: r.created === 0 ? undefined : r.created, status: r.status };
  };
  return {
    users: () =>
      engine
        .userIds()
        .sort((a, b) => a - b)
        .map((userId) => record(userId) as UserRecord),
    user: (userId) => record(userId),
    openOrdersByMarket: () => engine.openOrdersByMarket(),
  };
}
