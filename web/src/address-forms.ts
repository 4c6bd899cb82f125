/**
 * @module address-forms — the network of a withdrawal address by its form: the page chooses the
 * coin's network (and so its fee) from what the trader pastes.
 */

/** A network of a coin, as getFeeInfo lists it. */
export interface Network {
  readonly chainName: string;
  readonly mainChainName: string;
  readonly fee: number;
  readonly canWithdraw: boolean;
}

/**
 * Address forms by main chain (the same forms the venue's chains accept, src/chain): a network
 * whose main chain is not here is chosen by hand.
 */
export const ADDRESS_FORMS: Readonly<Record<string, RegExp>> = {
  ETH: /^0x[0-9a-fA-F]{40}$/,
  BSC: /^0x[0-9a-fA-F]{40}$/,
  TRX: /^T[1-9A-HJ-NP-Za-km-z]{33}$/,
  BTC: /^(bc1[02-9ac-hj-np-z]{11,71}|[13][1-9A-HJ-NP-Za-km-z]{25,34})$/,
};

/** The networks `address` has the form of (a memo address `<account>_<memo>` has none here). */
export function networksOf(address: string, networks: readonly Network[]): Network[] {
  return networks.filter((n) => ADDRESS_FORMS[n.mainChainName]?.test(address) === true);
}
