/**
 * @module default-venue — the configuration a fresh start creates: coins, markets and fees.
 * The operator changes it afterwards through journaled commands; this is only the genesis.
 */
import { marketFromText, type CoinSpec, type VenueConfig } from '../domain/specs.ts';

const coin = (
  name: string,
  unitDecimal: number,
  enName: string,
  cnName: string,
  fundsType: number,
): CoinSpec => ({
  name,
  unitDecimal,
  enName,
  cnName,
  showName: enName,
  fundsType,
  canDeposit: true,
  canWithdraw: true,
});

/**
 * Stablecoins use 6 decimals (as USDT does on its chains), which keeps one balance exact up to
 * 9·10^9 coins; the others use 8.
 */
export const DEFAULT_COINS: readonly CoinSpec[] = [
  coin('btc', 8, 'BTC', '比特币', 2),
  coin('eth', 8, 'ETH', '以太坊', 5),
  coin('usdt', 6, 'USDT', '泰达币', 13),
  coin('qc', 6, 'QC', '量子链', 15),
  coin('zb', 8, 'ZB', 'ZB', 51),
  coin('bch', 8, 'BCH', '比特现金', 3),
  coin('bsv', 8, 'BSV', '比特币SV', 59),
  coin('hc', 8, 'HC', '超级现金', 31),
  coin('xwc', 8, 'XWC', '韭菜币', 60),
];

const decimals = (name: string): number => DEFAULT_COINS.find((c) => c.name === name)?.unitDecimal ?? 8;

export const DEFAULT_VENUE: VenueConfig = {
  settings: { platformCoin: 'zb', platformFeeDiscount: 250_000, cancelAllAfterMs: 60_000 },
  coins: DEFAULT_COINS,
  markets: [
    { base: 'btc', quote: 'usdt', priceScale: 2, amountScale: 4, minAmount: '0.0001', minSize: '5' },
    { base: 'eth', quote: 'usdt', priceScale: 2, amountScale: 4, minAmount: '0.001', minSize: '5' },
    { base: 'eth', quote: 'btc', priceScale: 6, amountScale: 2, minAmount: '0.01', minSize: '0.0001' },
    { base: 'zb', quote: 'usdt', priceScale: 4, amountScale: 2, minAmount: '0.01', minSize: '5' },
    { base: 'zb', quote: 'qc', priceScale: 4, amountScale: 2, minAmount: '0.01', minSize: '5' },
  ].map((m) => marketFromText({ ...m, makerFee: '0.002', takerFee: '0.002' }, decimals(m.quote))),
};
