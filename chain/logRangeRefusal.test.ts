import {
  HttpRequestError,
  InvalidParamsRpcError,
  LimitExceededRpcError,
  ResponseBodyTooLargeError,
  RpcRequestError,
} from 'viem';
import { isLogRangeRefusal } from './logRangeRefusal';

const rpcError = (code: number, message: string) =>
  new RpcRequestError({ body: { method: 'eth_getLogs' }, error: { code, message }, url: 'http://rpc.test' });

describe('isLogRangeRefusal', () => {
  it.each([
    [
      'Alchemy',
      rpcError(
        -32602,
        'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x1, 0x7cf]',
      ),
    ],
    ['Infura / geth', rpcError(-32005, 'query returned more than 10000 results')],
    ['QuickNode', rpcError(-32614, 'eth_getLogs and eth_newFilter are limited to a 10,000 blocks range')],
    ['Ankr', rpcError(-32600, 'block range is too wide')],
    ['BNB-style', rpcError(-32000, 'exceed maximum block range: 5000')],
    ['Cloudflare', rpcError(-32047, 'block range too large')],
    ['any -32005', new LimitExceededRpcError(rpcError(-32005, 'rate or size limited'))],
    ['viem’s own answer-size cap', new ResponseBodyTooLargeError({ maxSize: 10485760, size: 121022696 })],
    [
      'wrapped by viem',
      new InvalidParamsRpcError(rpcError(-32602, 'query returned more than 10000 results')),
    ],
  ])('recognises a size refusal from %s', (_provider, error) => {
    expect(isLogRangeRefusal(error)).toBe(true);
  });

  it.each([
    [
      'an outage',
      new HttpRequestError({ url: 'http://rpc.test', status: 503, details: 'Service Unavailable' }),
    ],
    ['a bad filter', rpcError(-32602, 'invalid argument 0: hex string without 0x prefix')],
    ['a plain error', new Error('socket hang up')],
  ])('does not take %s for a size refusal', (_what, error) => {
    expect(isLogRangeRefusal(error)).toBe(false);
  });
});
