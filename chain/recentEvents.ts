import type {
  Abi,
  Address,
  Client,
  ContractEventArgs,
  ContractEventName,
  GetContractEventsReturnType,
} from 'viem';
import { getBlockNumber, getContractEvents } from 'viem/actions';

/**
 * The newest matching event of a contract, scanning back from the head in windows of `window` blocks (stopping
 * at block 0): for something known to have happened recently (a delivery just seen as done), this costs a
 * request or two, and no window is wider than providers accept.
 */
export async function findRecentEvent<const abi extends Abi, eventName extends ContractEventName<abi>>(
  client: Client,
  {
    address,
    abi,
    eventName,
    args,
    match = () => true,
    window = 2_000n,
  }: {
    address: Address;
    abi: abi;
    eventName: eventName;
    args?: ContractEventArgs<abi, eventName>;
    match?: (log: GetContractEventsReturnType<abi, eventName>[number]) => boolean;
    window?: bigint;
  },
): Promise<GetContractEventsReturnType<abi, eventName>[number] | undefined> {
  let toBlock = await getBlockNumber(client);
  for (;;) {
    const fromBlock = toBlock >= window ? toBlock - window + 1n : 0n;
    const logs = (await getContractEvents(client, {
      address,
      abi,
      eventName,
      args,
      fromBlock,
      toBlock,
    } as never)) as GetContractEventsReturnType<abi, eventName>;
    const found = logs.filter(match).at(-1);
    if (found || fromBlock === 0n) return found;
    toBlock = fromBlock - 1n;
  }
}
