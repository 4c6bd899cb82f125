/**
 * @module engine/risk-markets — the bookkeeping that lets the risk step (src/engine/risk.ts) cost
 * nothing where nothing is owed: which markets are active (some isolated account owes something
 * there, or a liquidation runs there). Only active markets take mark steps.
 */

/** The active markets, by market index. */
export class ActiveMarkets {
  readonly #on: boolean[] = [];
  #list: number[] = [];
  count = 0;

  has(index: number): boolean {
    return this.#on[index] === true;
  }

  add(index: number): void {
    if (this.#on[index] === true) return;
    this.#on[index] = true;
    this.count++;
    this.#list = [...this.#list, index].sort((a, b) => a - b);
  }

  delete(index: number): void {
    if (this.#on[index] !== true) return;
    this.#on[index] = false;
    this.count--;
    this.#list = this.#list.filter((i) => i !== index);
  }

  /** The active markets' indexes, ascending (a copy is made only when the set changes). */
  indexes(): readonly number[] {
    return this.#list;
  }

  clear(): void {
    this.#on.length = 0;
    this.#list = [];
    this.count = 0;
  }
}
