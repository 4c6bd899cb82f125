/**
 * @module venue-info — `/data/v1/venueInfo`, a Bourse extension for clients such as the trading
 * page: what the ZB endpoints do not tell, namely each market's maker and taker fee rates and
 * status, the platform coin's fee discount, the demo market and its faucet, and the clock.
 */
import { PPM, formatUnitsTrim } from '../../../domain/money.ts';
import type { VenueState } from '../../../sequencer/venue-ports.ts';
import type { ClockMode } from '../../../domain/clock-speed.ts';
import type { Route } from '../types.ts';

export interface VenueInfoDeps {
  readonly engine: VenueState;
  /** The venue's clock: `manual` under `--clock=manual`, `speed` under `--clock=speed:<n>`, and its time. */
  readonly clock: { readonly mode: ClockMode; now(): number };
}

const rate = (ppm: number): string => formatUnitsTrim(ppm, Math.log10(PPM));

/**
 * The body (decimal text for rates and amounts):
 * `{"markets":{"btc_usdt":{"makerFee":"0.002","takerFee":"0.002","status":"trading"},…},
 *   "platformCoin":"zb","platformFeeDiscount":"0.25",
 *   "demo":{"stopped":false,"faucet":{"usdt":"10000",…}} (null without the demo),
 *   "clock":{"mode":"real","time":<ms>},"seq":<n>}`. `seq` is the last command this server has
 * applied: on a gateway, its replica's (docs/scale-out.md), so a client or a probe sees how far
 * behind the engine it is.
 */
export function venueInfo(deps: VenueInfoDeps): Record<string, unknown> {
  const { engine } = deps;
  const demo = engine.demo;
  return {
    markets: Object.fromEntries(
      engine
        .markets()
        .map((m) => [m.name, { makerFee: rate(m.makerFee), takerFee: rate(m.takerFee), status: m.status }]),
    ),
    platformCoin: engine.settings.platformCoin,
    platformFeeDiscount: rate(engine.settings.platformFeeDiscount),
    demo: demo.started
      ? {
          stopped: demo.stopped,
          faucet: Object.fromEntries(
            demo
              .faucet()
              .map((a) => [a.coin, formatUnitsTrim(a.perHour, engine.coin(a.coin)?.unitDecimal ?? 0)]),
          ),
        }
      : null,
    clock: { mode: deps.clock.mode, time: deps.clock.now() },
    seq: engine.lastSeq,
  };
}

export function venueInfoRoutes(deps: VenueInfoDeps): Route[] {
  return [{ path: '/data/v1/venueInfo', handler: () => ({ json: venueInfo(deps) }) }];
}
