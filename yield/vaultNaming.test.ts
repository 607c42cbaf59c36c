import { vaultNaming } from './vaultNaming';

describe('vaultNaming', () => {
  it('names a vault after the display name, its share symbol after the first four letters of it', () => {
    expect(vaultNaming({ name: 'Internal', branding: { displayName: 'Acme Savings' } }, 'USDe')).toEqual({
      name: 'Acme Savings USDe Vault',
      shareSymbol: 'ACMEUSDe',
    });
  });

  it('falls back to the deployment name, and to Y when the brand has no letter or digit', () => {
    expect(vaultNaming({ name: 'Zo', branding: {} }, 'USDe')).toEqual({
      name: 'Zo USDe Vault',
      shareSymbol: 'ZOUSDe',
    });
    expect(vaultNaming({ name: '€ € €', branding: {} }, 'USDe').shareSymbol).toBe('YUSDe');
  });
});
