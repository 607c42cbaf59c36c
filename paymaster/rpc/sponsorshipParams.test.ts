import { parseSponsorshipParams, peekRequestedChainId, readChainId, readInteger } from './sponsorshipParams';

const SENDER = '0x1111111111111111111111111111111111111111';
const ENTRY_POINT = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';
const userOp = { sender: SENDER, nonce: '0x0', callData: '0x' };

describe('sponsorship params', () => {
  it.each([
    ['0x1a', 26n],
    ['26', 26n],
    [26, 26n],
    [0, 0n],
    ['0x0', 0n],
  ])('reads %j as an integer', (value, expected) => {
    expect(readInteger(value)).toBe(expected);
  });

  it.each([
    ['0x'],
    ['-1'],
    [-1],
    [1.5],
    ['1e3'],
    [Number.MAX_SAFE_INTEGER + 1],
    [null],
    [true],
    ['0xzz'],
    [{}],
  ])('does not read %j as an integer', (value) => {
    expect(readInteger(value)).toBeUndefined();
  });

  it('reads chain ids as hex, decimal string or number, never zero', () => {
    expect([readChainId('0x14a34'), readChainId('84532'), readChainId(84532)]).toEqual([84532, 84532, 84532]);
    expect(readChainId(0)).toBeUndefined();
    expect(readChainId('0x' + 'f'.repeat(20))).toBeUndefined();
  });

  it('peeks the requested chain without judging the rest of the request', () => {
    expect(peekRequestedChainId({ jsonrpc: '1.0', params: [null, null, '0x1'] })).toBe(1);
    expect(peekRequestedChainId({ params: [] })).toBeUndefined();
    expect(peekRequestedChainId([{ params: [null, null, 1] }])).toBeUndefined();
    expect(peekRequestedChainId(undefined)).toBeUndefined();
  });

  it('normalises nonce and gas fields to hex for the signer and keeps everything else as received', () => {
    const outcome = parseSponsorshipParams([
      {
        ...userOp,
        nonce: 7,
        callGasLimit: '100000',
        maxFeePerGas: 5,
        signature: '0xdead',
        maxPriorityFeePerGas: null,
      },
      ENTRY_POINT,
      '84532',
      { token: null },
    ]);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.params.userOpForSigner).toEqual({
      ...userOp,
      nonce: '0x7',
      callGasLimit: '0x186a0',
      maxFeePerGas: '0x5',
      signature: '0xdead',
    });
    expect(outcome.params.userOp.gas).toEqual({ callGasLimit: 100000n, maxFeePerGas: 5n });
    expect(outcome.params.chainId).toBe(84532);
    expect(outcome.params.token).toBeUndefined();
  });

  it.each([
    ['userOp not an object', ['0x', ENTRY_POINT, 1], /params\[0\]/],
    ['entry point not a 0x string', [userOp, 12, 1], /params\[1\]/],
    ['chain id unreadable', [userOp, ENTRY_POINT, 'base'], /params\[2\]/],
    ['context not an object', [userOp, ENTRY_POINT, 1, 'usdc'], /params\[3\]/],
    ['sender not an address', [{ ...userOp, sender: '0x12' }, ENTRY_POINT, 1], /sender/],
    ['nonce missing', [{ ...userOp, nonce: undefined }, ENTRY_POINT, 1], /nonce/],
    ['callData odd-length hex', [{ ...userOp, callData: '0x123' }, ENTRY_POINT, 1], /callData/],
    ['gas field not an integer', [{ ...userOp, callGasLimit: 'lots' }, ENTRY_POINT, 1], /callGasLimit/],
    [
      'gas field above uint128',
      [{ ...userOp, maxFeePerGas: `0x1${'0'.repeat(32)}` }, ENTRY_POINT, 1],
      /maxFeePerGas/,
    ],
  ])('refuses %s', (_case, params, detail) => {
    const outcome = parseSponsorshipParams(params as unknown[]);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.detail).toMatch(detail);
  });
});
