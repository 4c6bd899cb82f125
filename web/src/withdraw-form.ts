/**
 * @module withdraw-form — the withdraw tab: the coin's networks from `getFeeInfo` in a picker,
 * the network chosen from the address's form as the trader types it (a TRC20 address starts with
 * T, an ERC20 one with 0x), and that network's fee filled in: `withdraw` takes no chain, the venue
 * finds it from the verified address and refuses any fee but that chain's. A signed `withdraw`.
 */
import { byId, el, type App } from './app.ts';
import { networksOf, type Network } from './address-forms.ts';
import { explain } from './messages.ts';
import { getPublic, type Json } from './rest.ts';

export function withdrawForm(app: App): void {
  const coin = byId<HTMLSelectElement>('withdraw-coin');
  const chain = byId<HTMLSelectElement>('withdraw-chain');
  const address = byId<HTMLInputElement>('withdraw-address');
  const fee = byId<HTMLInputElement>('withdraw-fee');
  const hint = byId('withdraw-chain-hint');
  const result = byId('withdraw-result');
  let networks: Network[] = [];

  const show = (text: string, kind: 'ok' | 'error' | ''): void => {
    result.textContent = text;
    result.className = `result ${kind}`;
  };
  const fillFee = (): void => {
    const n = networks.find((x) => x.chainName === chain.value);
    fee.value = n === undefined ? '' : String(n.fee);
  };
  /** Picks the network of the address's form, unless the one chosen already fits it. */
  const fromAddress = (): void => {
    const text = address.value.trim();
    const fits = networksOf(text, networks);
    if (text === '' || fits.length === 0) {
      hint.textContent = text === '' ? '' : 'choose the network of this address';
      return;
    }
    if (!fits.some((n) => n.chainName === chain.value)) chain.value = (fits[0] as Network).chainName;
    hint.textContent =
      fits.length === 1 ? `a ${chain.value} address` : `one of ${fits.map((n) => n.chainName).join(', ')}`;
    fillFee();
  };
  const loadNetworks = async (): Promise<void> => {
    const name = coin.value;
    const reply = await getPublic(`/api/getFeeInfo?currency=${name}`).catch(() => undefined);
    if (name !== coin.value) return;
    networks = ((reply?.result?.[name.toUpperCase()] as Json[] | undefined) ?? []).map((n) => ({
      chainName: String(n.chainName),
      mainChainName: String(n.mainChainName),
      fee: Number(n.fee),
      canWithdraw: n.canWithdraw !== false,
    }));
    chain.replaceChildren(
      ...networks.map((n) => {
        const option = el(
          'option',
          '',
          `${n.chainName} (fee ${n.fee} ${name.toUpperCase()}${n.canWithdraw ? '' : ', closed'})`,
        ) as HTMLOptionElement;
        option.value = n.chainName;
        option.disabled = !n.canWithdraw;
        return option;
      }),
    );
    fillFee();
    fromAddress();
  };

  coin.addEventListener('change', () => void loadNetworks());
  chain.addEventListener('change', fillFee);
  address.addEventListener('input', fromAddress);
  void loadNetworks();

  byId<HTMLFormElement>('withdraw').addEventListener('submit', (event) => {
    event.preventDefault();
    const api = app.api.value;
    if (api === undefined) return;
    const password = byId<HTMLInputElement>('withdraw-password');
    const amount = byId<HTMLInputElement>('withdraw-amount').value.trim();
    if (address.value.trim() === '') return show('Give the address to send to.', 'error');
    if (!(Number(amount) > 0)) return show('Amount: how much to send, a number above 0.', 'error');
    const params: [string, string][] = [
      ['currency', coin.value],
      ['amount', amount],
      ['fees', fee.value.trim()],
      ['receiveAddr', address.value.trim()],
      ['safePwd', password.value],
      ['itransfer', byId<HTMLInputElement>('withdraw-internal').checked ? '1' : '0'],
    ];
    password.value = '';
    api.call('withdraw', params).then(
      (reply: Json) =>
        show(
          `Withdrawal ${String(reply.id)} submitted on ${chain.value}: ${amount} ${coin.value.toUpperCase()} plus the ${fee.value} fee.`,
          'ok',
        ),
      (error: unknown) => show(explain(error, 'withdraw'), 'error'),
    );
  });
}
