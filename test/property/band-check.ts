/**
 * @module band-check — issue 29's check on the differential run: total bad debt stays zero
 * whenever the book held liquidity within the band. Stated exactly: a liquidation that begins in a
 * command which moved its market's mark by at most `MAX_MOVE_BP` (2 %) and ends in that same
 * command (the book inside its band took the whole position: nothing was left to wait for more
 * liquidity) leaves no bad debt. Why it must hold: it begins at or just under the liquidation line
 * (1.08), a 2 % move takes at most some 2.2 % off the risk rate of a long or short of these
 * leverages, and every fill is at the band's edge or better (mark × 0.97 for a sale, × 1.03 for a
 * purchase), which still pays more than the debt. A liquidation the band stopped (it stayed
 * running) or one that began in a gap (a larger move in one command) may end in bad debt.
 */
import assert from 'node:assert/strict';
import type { SequencedCommand } from '../../src/domain/commands.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { BP } from '../../src/margin/settings.ts';

/** The largest mark move of the starting command for which the check holds, BP of the mark. */
const MAX_MOVE_BP = 200;

export class BandBadDebtCheck {
  readonly #engine: Engine;
  readonly #markets: readonly string[];
  readonly #before = new Map<string, number | undefined>();
  #seen = 0;
  /** Liquidations the check applied to (begun and ended in one command after a small move). */
  checked = 0;

  constructor(engine: Engine) {
    this.#engine = engine;
    this.#markets = engine.markets().map((m) => m.name);
  }

  /** Before a command: each market's mark. */
  before(): void {
    for (const m of this.#markets) this.#before.set(m, this.#engine.risk.markPrice(m));
  }

  /** After a command: the liquidations it began and ended. */
  after(cmd: SequencedCommand, where: string): void {
    const records = this.#engine.liquidations();
    for (let k = this.#seen; k < records.length; k++) {
      const r = records[k];
      if (r === undefined || r.account.kind !== 'isolated' || r.startMs !== cmd.time) continue;
      if (r.status !== 'done' || r.endMs !== cmd.time) continue;
      const before = this.#before.get(r.market);
      if (before === undefined) continue;
      if (Math.abs(r.markAtStart - before) * BP > MAX_MOVE_BP * before) continue;
      this.checked++;
      const bad = r.coins.reduce((sum, c) => sum + c.badDebt, 0);
      assert.equal(
        bad,
        0,
        `${where}: liquidation ${r.id} of ${r.account.userId} in ${r.market} began after a mark move of ` +
          `${before} → ${r.markAtStart} and ended in the same command, yet left bad debt ${bad} ` +
          `(${JSON.stringify(r)})`,
      );
    }
    this.#seen = records.length;
  }
}
