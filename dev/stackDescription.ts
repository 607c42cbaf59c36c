import type { Address, Hex } from 'viem';
import type { DevMerchant } from './devMerchant';

/** Addresses of one local chain's deployment, as written to .dev/stack.json (docs/architecture.md "Layers"). */
export interface ChainDeployment {
  chainId: number;
  network: string;
  rpcUrl: string;
  bundlerUrl?: string;
  contracts: Record<string, Address>;
}

/** What the dev stack (and the test harness) describes to its processes and to people. */
export interface StackDescription {
  apiUrl: string;
  temporalAddress: string;
  temporalUiUrl: string;
  signerUrl?: string;
  databaseUrl: string;
  chains: ChainDeployment[];
  /** MailDev: the SMTP server the API mails codes through, and its web UI (REST API under /api). */
  mail: { smtpUrl: string; webUrl: string };
  /**
   * The local DNS server custom-domain verification asks (YIELD_DNS_SERVER): TXT records come from
   * `recordsFile`, a JSON object of name → values, read on every query.
   */
  dns: { host: string; port: number; recordsFile: string };
  devAccount: { address: Address; privateKey: Hex };
  /** The dev account's merchant, ready to use (docs/decisions.md "A newcomer's first hour II (dev merchant, production settings, quiet stack)"); written once the api answers. */
  devMerchant?: DevMerchant;
}
