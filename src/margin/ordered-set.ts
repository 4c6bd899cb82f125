/**
 * @module ordered-set — a set of (price, key) entries ordered by price then key, with insert and
 * delete in O(log n) and the walk of the entries at or beyond a price in O(log n + k): a treap whose
 * priorities come from a fixed-seed generator, so its answers never depend on its shape and a run
 * is reproducible.
 */

interface Node {
  readonly price: number;
  readonly key: string;
  readonly prio: number;
  left: Node | undefined;
  right: Node | undefined;
}

const before = (p: number, k: string, n: Node): boolean => p < n.price || (p === n.price && k < n.key);

export class OrderedSet {
  #root: Node | undefined;
  #size = 0;
  #seed = 0x2545f491;
  /** `maxPrice` and `minPrice`, recomputed after a change that may have moved them. */
  #max: number | undefined;
  #min: number | undefined;
  #maxDirty = false;
  #minDirty = false;

  get size(): number {
    return this.#size;
  }

  insert(price: number, key: string): void {
    this.#root = this.#insert(this.#root, {
      price,
      key,
      prio: this.#nextPrio(),
      left: undefined,
      right: undefined,
    });
    this.#size++;
    if (this.#max === undefined || price >= this.#max) this.#maxDirty = true;
    if (this.#min === undefined || price <= this.#min) this.#minDirty = true;
  }

  /** Removes an entry; false when absent. */
  delete(price: number, key: string): boolean {
    const before = this.#size;
    this.#root = this.#delete(this.#root, price, key);
    if (price === this.#max) this.#maxDirty = true;
    if (price === this.#min) this.#minDirty = true;
    return this.#size < before;
  }

  /** The highest price held, `undefined` when empty (kept between changes: a move asks it often). */
  maxPrice(): number | undefined {
    if (this.#maxDirty) {
      let n = this.#root;
      while (n?.right !== undefined) n = n.right;
      this.#max = n?.price;
      this.#maxDirty = false;
    }
    return this.#max;
  }

  /** The lowest price held, `undefined` when empty. */
  minPrice(): number | undefined {
    if (this.#minDirty) {
      let n = this.#root;
      while (n?.left !== undefined) n = n.left;
      this.#min = n?.price;
      this.#minDirty = false;
    }
    return this.#min;
  }

  /** Keys of the entries with price ≥ `min`, highest price first (ties: key descending). */
  atOrAbove(min: number): string[] {
    const out: string[] = [];
    const walk = (n: Node | undefined): void => {
      if (n === undefined) return;
      walk(n.right);
      if (n.price >= min) {
        out.push(n.key);
        walk(n.left);
      }
    };
    walk(this.#root);
    return out;
  }

  /** Keys of the entries with price ≤ `max`, lowest price first (ties: key ascending). */
  atOrBelow(max: number): string[] {
    const out: string[] = [];
    const walk = (n: Node | undefined): void => {
      if (n === undefined) return;
      walk(n.left);
      if (n.price <= max) {
        out.push(n.key);
        walk(n.right);
      }
    };
    walk(this.#root);
    return out;
  }

  /** Every entry in order, for tests. */
  entries(): [number, string][] {
    const out: [number, string][] = [];
    const walk = (n: Node | undefined): void => {
      if (n === undefined) return;
      walk(n.left);
      out.push([n.price, n.key]);
      walk(n.right);
    };
    walk(this.#root);
    return out;
  }

  #nextPrio(): number {
    // xorshift32: deterministic priorities.
    let x = this.#seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#seed = x >>> 0;
    return this.#seed;
  }

  #insert(n: Node | undefined, m: Node): Node {
    if (n === undefined) return m;
    if (before(m.price, m.key, n)) {
      n.left = this.#insert(n.left, m);
      if ((n.left as Node).prio > n.prio) return rotateRight(n);
    } else {
      n.right = this.#insert(n.right, m);
      if ((n.right as Node).prio > n.prio) return rotateLeft(n);
    }
    return n;
  }

  #delete(n: Node | undefined, price: number, key: string): Node | undefined {
    if (n === undefined) return undefined;
    if (n.price === price && n.key === key) {
      this.#size--;
      return merge(n.left, n.right);
    }
    if (before(price, key, n)) n.left = this.#delete(n.left, price, key);
    else n.right = this.#delete(n.right, price, key);
    return n;
  }
}

function rotateRight(n: Node): Node {
  const l = n.left as Node;
  n.left = l.right;
  l.right = n;
  return l;
}

function rotateLeft(n: Node): Node {
  const r = n.right as Node;
  n.right = r.left;
  r.left = n;
  return r;
}

function merge(a: Node | undefined, b: Node | undefined): Node | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (a.prio > b.prio) {
    a.right = merge(a.right, b);
    return a;
  }
  b.left = merge(a, b.left);
  return b;
}
