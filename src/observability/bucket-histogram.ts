/**
 * @module bucket-histogram — a Prometheus histogram whose observations cost a few array writes (no
 * label hashing, no allocation), for the hot path: counts kept in a plain array and turned into
 * prom-client's exposition values only when scraped. Unlabelled: one series per family.
 */
import type { Metric } from 'prom-client';

/** One exposition line as prom-client's registry formats it. */
interface SeriesValue {
  readonly metricName: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/**
 * A histogram registered in a prom-client Registry as a custom metric
 * (`registry.registerMetric(histogram.asMetric())`): prom-client calls `get()` when scraped.
 */
export class BucketHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: readonly number[];
  /** Observations per bucket, not cumulative; the last slot is above the last bound (+Inf). */
  readonly #counts: Float64Array;
  #sum = 0;
  #count = 0;

  constructor(options: { name: string; help: string; bounds: readonly number[] }) {
    this.name = options.name;
    this.help = options.help;
    this.#bounds = options.bounds;
    this.#counts = new Float64Array(options.bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.#counts[i] = (this.#counts[i] as number) + 1;
    this.#sum += value;
    this.#count++;
  }

  get(): { name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: SeriesValue[] } {
    const values: SeriesValue[] = [];
    let cumulative = 0;
    for (let i = 0; i <= this.#bounds.length; i++) {
      cumulative += this.#counts[i] as number;
      const le = i < this.#bounds.length ? String(this.#bounds[i]) : '+Inf';
      values.push({ metricName: `${this.name}_bucket`, labels: { le }, value: cumulative });
    }
    values.push({ metricName: `${this.name}_sum`, labels: {}, value: this.#sum });
    values.push({ metricName: `${this.name}_count`, labels: {}, value: this.#count });
    return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values };
  }

  /** As prom-client's registry takes it. */
  asMetric(): Metric<string> {
    return this as unknown as Metric<string>;
  }
}
