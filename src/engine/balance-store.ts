/**
 * @module balance-store — every account's per-coin balances in flat typed arrays, off the object
 * heap.
 *
 * One `Float64Array` per coin (a plane). Each account has a row, numbered in the order accounts
 * were opened, and in every plane the row has four cells: available, frozen, borrowed, interest.
 * Reading a balance touches the plane's one cache line for that account, not an account's four
 * arrays and their four backing stores scattered over the heap, and a plane holds only the
 * coins in use: the btc and usdt cells of 15,000 accounts fit in 1 MB. This layout is the
 * measured cause of the margin stream's gain in bench/README.md (issue 14).
 *
 * Values are integers of a coin's units, exact in a double up to 2^53 (the ledger checks that
 * they stay safe integers). A cell never written reads 0; a coin's plane is made on its first
 * write, and every plane grows (doubling) as rows are added. Memory: 32 bytes per account for
 * each coin any account ever held or owed, up to twice that while a plane has room to grow
 * (1,000,000 accounts and 15 such coins: 480 MB to 960 MB).
 */

/** The four cells of a row, in order. */
export const AVAILABLE = 0;
export const FROZEN = 1;
export const BORROWED = 2;
export const INTEREST = 3;
export type BalanceField = typeof AVAILABLE | typeof FROZEN | typeof BORROWED | typeof INTEREST;

const CELLS = 4;
const EMPTY = new Float64Array(0);

export class BalanceStore {
  /** Plane per coin index; `EMPTY` for a coin nothing was ever written to. */
  #planes: Float64Array[] = [];
  #rows = 0;
  /** Rows each plane has room for. */
  #capacity = 1024;

  /** A new row, all cells 0. */
  addRow(): number {
    if (this.#rows === this.#capacity) {
      this.#capacity *= 2;
      this.#planes = this.#planes.map((p) => (p === EMPTY ? p : grown(p, this.#capacity * CELLS)));
    }
    return this.#rows++;
  }

  /** One cell: 0 if never written. */
  get(row: number, coin: number, field: BalanceField): number {
    const plane = coin < this.#planes.length ? (this.#planes[coin] as Float64Array) : EMPTY;
    const i = row * CELLS + field;
    return i < plane.length ? (plane[i] as number) : 0;
  }

  set(row: number, coin: number, field: BalanceField, value: number): void {
    let plane = coin < this.#planes.length ? (this.#planes[coin] as Float64Array) : EMPTY;
    if (plane === EMPTY) plane = this.#plane(coin);
    plane[row * CELLS + field] = value;
  }

  /** Whether any cell of the row is non-zero. */
  anyNonZero(row: number): boolean {
    for (const plane of this.#planes) {
      if (plane === EMPTY) continue;
      for (let f = 0; f < CELLS; f++) if (plane[row * CELLS + f] !== 0) return true;
    }
    return false;
  }

  #plane(coin: number): Float64Array {
    while (this.#planes.length <= coin) this.#planes.push(EMPTY);
    const plane = new Float64Array(this.#capacity * CELLS);
    this.#planes[coin] = plane;
    return plane;
  }
}

function grown(plane: Float64Array, length: number): Float64Array {
  const out = new Float64Array(length);
  out.set(plane);
  return out;
}
