/**
 * @module risk-steps — the scenario grammar's risk expectations (issue 15), parsed here and handed
 * to the runner through margin-steps.ts. They change nothing. Amounts are decimal text at the coin's
 * scale, prices at the market's, rates with up to 4 decimals; each is compared exactly.
 *
 *     mark btc_usdt: 24100.00                          the market's mark price (or `none`): under the
 *                                                      depth rule every traded market's, owed in or not
 *     risk alice isolated btc_usdt: rate 1.1274 level 2 [unwind 24202.77]
 *                                                      risk rate at the mark ("-" without debt),
 *                                                      level 1 normal, 2 flagged at the notice
 *                                                      line, 3 locked for liquidation; unwind price
 *     risk alice cross: rate 1.0629 level 3            a cross account's, at the marks (the engine's
 *                                                      flag and lock, src/engine/risk-cross.ts)
 *     liquidations: 2                                  how many liquidations began so far
 *     liquidation 1: alice isolated btc_usdt done      whose, and running or done
 *     liquidation 2: alice cross done                  (a cross account's)
 *     liquidation 1 usdt: repaid 3000.0625 shortfall 0 insurance 0 bad debt 0 fee 30.000625
 *     insurance usdt: 30.006875                        the insurance fund's balance
 */
import { formatUnits, parseDecimal } from '../../src/domain/money.ts';
import { formatRiskRate } from '../../src/api/wire/margin-wire.ts';
import type { MarginPort, MarginStep } from './margin-steps.ts';

const expect = (check: (port: MarginPort) => void): MarginStep => ({ kind: 'marginExpect', check });

/** The market's price text as ticks, or the port fails. */
function ticks(port: MarginPort, market: string, text: string): number {
  const spec = port.engine.market(market) ?? port.fail(`no market ${market}`);
  return (
    parseDecimal(text, spec.priceScale) ??
    port.fail(`price '${text}' must have at most ${spec.priceScale} decimals`)
  );
}

/** Parses one risk expectation, or returns undefined when the line is not one. */
export function parseRiskStep(body: string): MarginStep | undefined {
  let m: RegExpExecArray | null;
  if ((m = /^mark (\S+): (\S+)$/.exec(body))) {
    const [, market, price] = m as unknown as [string, string, string];
    return expect((p) => {
      const actual = p.engine.risk.runningMark(market);
      const expected = price === 'none' ? undefined : ticks(p, market, price);
      if (actual !== expected)
        p.fail(`mark ${market} in ticks: expected ${expected ?? 'none'}, got ${actual ?? 'none'}`);
    });
  }
  if ((m = /^risk (\S+) isolated (\S+): rate (\S+) level ([123])(?: unwind (\S+))?$/.exec(body))) {
    const [, user, market, rate, level, unwind] = m as unknown as [
      string,
      string,
      string,
      string,
      string,
      string?,
    ];
    return expect((p) => {
      const risk = p.engine.risk.accountRisk(p.userId(user), market) ?? p.fail(`no market ${market}`);
      const actual = [formatRiskRate(risk.riskRateBp), risk.level];
      const expectedRate =
        rate === '-' ? '-' : formatRiskRate(parseDecimal(rate, 4) ?? p.fail(`rate '${rate}'`));
      if (actual.join() !== [expectedRate, Number(level)].join())
        p.fail(`risk rate, level: expected ${expectedRate}, ${level}, got ${actual.join(', ')}`);
      if (unwind !== undefined && risk.unwindPrice?.priceTicks !== ticks(p, market, unwind))
        p.fail(
          `unwind price in ticks: expected ${ticks(p, market, unwind)}, got ${risk.unwindPrice?.priceTicks ?? 'none'}`,
        );
      if (risk.repayLock !== (risk.level === 3)) p.fail(`repayLock ${risk.repayLock} at level ${risk.level}`);
    });
  }
  if ((m = /^risk (\S+) cross: rate (\S+) level ([123])$/.exec(body))) {
    const [, user, rate, level] = m as unknown as [string, string, string, string];
    return expect((p) => {
      const risk = p.engine.risk.crossRisk(p.userId(user));
      const actual = [formatRiskRate(risk.riskRateBp), risk.level];
      const expectedRate =
        rate === '-' ? '-' : formatRiskRate(parseDecimal(rate, 4) ?? p.fail(`rate '${rate}'`));
      if (actual.join() !== [expectedRate, Number(level)].join())
        p.fail(`cross risk rate, level: expected ${expectedRate}, ${level}, got ${actual.join(', ')}`);
      if (risk.repayLock !== (risk.level === 3)) p.fail(`repayLock ${risk.repayLock} at level ${risk.level}`);
    });
  }
  if ((m = /^liquidation (\d+): (\S+) cross (running|done)$/.exec(body))) {
    const [, id, user, status] = m as unknown as [string, string, string, string];
    return expect((p) => {
      const r = p.engine.liquidations().find((x) => x.id === Number(id)) ?? p.fail(`no liquidation ${id}`);
      const who = r.account.kind === 'cross' ? r.account.userId : -1;
      if (who !== p.userId(user) || r.status !== status)
        p.fail(
          `liquidation ${id}: expected ${user} cross ${status}, got ${r.account.kind} ${who} ${r.status}`,
        );
    });
  }
  if ((m = /^liquidations: (\d+)$/.exec(body))) {
    const count = Number(m[1]);
    return expect((p) => {
      const n = p.engine.liquidations().length;
      if (n !== count) p.fail(`liquidations: expected ${count}, got ${n}`);
    });
  }
  if ((m = /^liquidation (\d+): (\S+) isolated (\S+) (running|done)$/.exec(body))) {
    const [, id, user, market, status] = m as unknown as [string, string, string, string, string];
    return expect((p) => {
      const r = p.engine.liquidations().find((x) => x.id === Number(id)) ?? p.fail(`no liquidation ${id}`);
      const who = r.account.kind === 'isolated' ? r.account.userId : -1;
      if (who !== p.userId(user) || r.market !== market || r.status !== status)
        p.fail(
          `liquidation ${id}: expected ${user} ${market} ${status}, got user ${who} ${r.market} ${r.status}`,
        );
    });
  }
  if (
    (m =
      /^liquidation (\d+) (\S+): repaid (\S+) shortfall (\S+) insurance (\S+) bad debt (\S+) fee (\S+)$/.exec(
        body,
      ))
  ) {
    const [, id, coin, ...amounts] = m as unknown as string[];
    return expect((p) => {
      const r = p.engine.liquidations().find((x) => x.id === Number(id)) ?? p.fail(`no liquidation ${id}`);
      const o = r.coins.find((c) => c.coin === coin) ?? p.fail(`liquidation ${id} has no ${coin}`);
      const actual = [o.repaid, o.shortfall, o.insurance, o.badDebt, o.fee];
      const expected = amounts.map((a) => p.coinUnits(a, coin as string));
      if (actual.join() !== expected.join()) {
        const d = p.engine.coin(coin as string)?.unitDecimal ?? 0;
        p.fail(
          `repaid, shortfall, insurance, bad debt, fee: expected ${expected.map((u) => formatUnits(u, d)).join(', ')}, ` +
            `got ${actual.map((u) => formatUnits(u, d)).join(', ')}`,
        );
      }
    });
  }
  if ((m = /^insurance (\S+): (\S+)$/.exec(body))) {
    const [, coin, amount] = m as unknown as [string, string, string];
    return expect((p) => {
      const actual = p.engine.insurance().find((c) => c.coin === coin)?.available ?? 0;
      const expected = p.coinUnits(amount, coin);
      if (actual !== expected) p.fail(`insurance ${coin} in units: expected ${expected}, got ${actual}`);
    });
  }
  return undefined;
}
