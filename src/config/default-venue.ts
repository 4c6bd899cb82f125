/**
 * @module default-venue — the configuration a fresh start creates: coins, markets, fees, and the
 * chains each coin moves on. The operator changes it afterwards through journaled commands; this
 * is only the genesis.
 */
import { coinFundsFromText, type CoinFunds } from '../domain/chains.ts';
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

/**
 * Chains with fees, minimums and confirmations in the style of their real networks: usdt on two
 * chains (ERC20 and TRC20), xwc on a memo chain (one account, a memo per user), the rest on one
 * chain each. Withdrawals up to `autoApproveLimit` are approved at once.
 */
export const DEFAULT_FUNDS: readonly CoinFunds[] = [
  {
    coin: 'btc',
    dailyWithdrawLimit: '100',
    autoApproveLimit: '1',
    chains: [
      {
        name: 'BTC',
        mainChain: 'BTC',
        confirmations: 2,
        withdrawFee: '0.0005',
        minWithdraw: '0.001',
      },
    ],
  },
  {
    coin: 'eth',
    dailyWithdrawLimit: '1000',
    autoApproveLimit: '10',
    chains: [
      {
        name: 'ETH',
        mainChain: 'ETH',
        confirmations: 12,
        withdrawFee: '0.005',
        minWithdraw: '0.01',
      },
    ],
  },
  {
    coin: 'usdt',
    dailyWithdrawLimit: '1000000',
    autoApproveLimit: '10000',
    chains: [
      {
        name: 'ERC20',
        mainChain: 'ETH',
        confirmations: 12,
        withdrawFee: '15',
        minWithdraw: '20',
      },
      {
        name: 'TRC20',
        mainChain: 'TRX',
        confirmations: 20,
        withdrawFee: '1',
        minWithdraw: '10',
      },
    ],
  },
  {
    coin: 'qc',
    dailyWithdrawLimit: '1000000',
    autoApproveLimit: '10000',
    chains: [
      {
        name: 'ERC20',
        mainChain: 'ETH',
        confirmations: 12,
        withdrawFee: '10',
        minWithdraw: '20',
      },
    ],
  },
  {
    coin: 'zb',
    dailyWithdrawLimit: '10000000',
    autoApproveLimit: '100000',
    chains: [
      {
        name: 'ERC20',
        mainChain: 'ETH',
        confirmations: 12,
        withdrawFee: '20',
        minWithdraw: '50',
      },
    ],
  },
  ...['bch', 'bsv'].map((coin) => ({
    coin,
    dailyWithdrawLimit: '100',
    autoApproveLimit: '5',
    chains: [
      {
        name: coin.toUpperCase(),
        mainChain: coin.toUpperCase(),
        confirmations: 6,
        withdrawFee: '0.001',
        minWithdraw: '0.01',
      },
    ],
  })),
  {
    coin: 'hc',
    dailyWithdrawLimit: '100000',
    autoApproveLimit: '1000',
    chains: [
      {
        name: 'HC',
        mainChain: 'HC',
        confirmations: 6,
        withdrawFee: '0.01',
        minWithdraw: '0.1',
      },
    ],
  },
  {
    coin: 'xwc',
    dailyWithdrawLimit: '1000000',
    autoApproveLimit: '10000',
    chains: [
      {
        name: 'XWC',
        mainChain: 'XWC',
        memo: true,
        confirmations: 3,
        withdrawFee: '0.01',
        minWithdraw: '0.1',
      },
    ],
  },
].map((f) => coinFundsFromText(f, decimals(f.coin)));

export const DEFAULT_VENUE: VenueConfig = {
  // markRule 'depth': issue 29's mark (src/margin/depth-mark.ts). A genesis written before it has
  // no markRule and keeps issue 15's median, so its journal replays as it ran.
  settings: { platformCoin: 'zb', platformFeeDiscount: 250_000, cancelAllAfterMs: 60_000, markRule: 'depth' },
  coins: DEFAULT_COINS,
  markets: [
    { base: 'btc', quote: 'usdt', priceScale: 2, amountScale: 4, minAmount: '0.0001', minSize: '5' },
    { base: 'eth', quote: 'usdt', priceScale: 2, amountScale: 4, minAmount: '0.001', minSize: '5' },
    { base: 'eth', quote: 'btc', priceScale: 6, amountScale: 2, minAmount: '0.01', minSize: '0.0001' },
    { base: 'zb', quote: 'usdt', priceScale: 4, amountScale: 2, minAmount: '0.01', minSize: '5' },
    { base: 'zb', quote: 'qc', priceScale: 4, amountScale: 2, minAmount: '0.01', minSize: '5' },
  ].map((m) => marketFromText({ ...m, makerFee: '0.002', takerFee: '0.002' }, decimals(m.quote))),
  funds: DEFAULT_FUNDS,
};
