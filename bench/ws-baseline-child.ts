/**
 * @module ws-baseline-child — bench:ws's same-run baseline: a bare `ws` server doing the naive
 * fan-out, every 10 ms one `ws.send(text)` per subscribed channel per connection (the text
 * encoded and framed again for each socket, one write each), with messages of the sizes Bourse
 * sends for the same channels and no exchange behind it. Event-loop delay and CPU are measured and
 * reported over IPC (ws-child-stats.ts).
 */
import { WebSocketServer, type WebSocket } from 'ws';
import { reportStatsOverIpc } from './ws-child-stats.ts';

const TICK_MS = 10;
const level = (i: number): string => `[${30_000 + i}.00,0.5000]`;
/** Messages of the sizes Bourse's channels send (ticker ~0.25 KB, depth 50 levels ~2.3 KB, …). */
const PAYLOAD: Readonly<Record<string, string>> = {
  ticker: `{"date":"1700000000000","ticker":{"high":"30100.00","vol":"1234.5678","last":"30000.00","low":"29900.00","buy":"29950.00","sell":"30000.00","turnover":"37037037.000000","open":"29950.00","riseRate":"0.17"},"dataType":"ticker","channel":"btcusdt_ticker"}`,
  depth: `{"asks":[${Array.from({ length: 50 }, (_, i) => level(99 - i)).join(',')}],"bids":[${Array.from({ length: 50 }, (_, i) => level(-i - 50)).join(',')}],"timestamp":1700000000,"dataType":"depth","channel":"btcusdt_depth"}`,
  quick_depth: `{"lastTime":1700000000000,"dataType":"quickDepth","channel":"btcusdt_quick_depth","currentPrice":30000.00,"listDown":[${Array.from({ length: 5 }, (_, i) => level(-i - 50)).join(',')}],"market":"btcusdt","listUp":[${Array.from({ length: 5 }, (_, i) => level(i)).join(',')}],"high":30100.00,"rate":"0.17","low":29900.00,"currentIsBuy":true,"dayNumber":1234.5678,"totalBtc":1234.5678,"showMarket":"btcusdt"}`,
  trades: `{"data":[${Array.from({ length: 10 }, (_, i) => `{"date":1700000000,"amount":"0.0100","price":"30000.00","trade_type":"bid","type":"buy","tid":${1000 + i}}`).join(',')}],"dataType":"trades","channel":"btcusdt_trades"}`,
  kline: `{"symbol":"BTC","moneyType":"USDT","data":[[1700000000000,30000.00,30100.00,29900.00,30000.00,12.3400]],"dataType":"kline","channel":"btcusdt_kline_1min"}`,
};

const subscribed = new Map<WebSocket, string[]>();
const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
wss.on('connection', (ws) => {
  const texts: string[] = [];
  subscribed.set(ws, texts);
  ws.on('message', (data: Buffer) => {
    const channel = String((JSON.parse(data.toString()) as { channel: string }).channel);
    const kind = channel.replace(/^[a-z0-9]+_/, '').replace(/^kline_.*/, 'kline');
    texts.push(PAYLOAD[kind] ?? PAYLOAD['ticker'] ?? '');
  });
  ws.on('close', () => subscribed.delete(ws));
  ws.on('error', () => undefined);
});
setInterval(() => {
  for (const [ws, texts] of subscribed) for (const text of texts) ws.send(text);
}, TICK_MS);

reportStatsOverIpc(
  () => ({ connections: subscribed.size, dropped: 0 }),
  () => undefined,
);
wss.on('listening', () => {
  const address = wss.address();
  process.send?.({
    type: 'ready',
    base: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`,
  });
});
