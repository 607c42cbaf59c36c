import QRCode from 'qrcode';

/** Error correction M and a two-module quiet zone: scans well from a phone screen at ~200 px. */
export const PAYMENT_QR_OPTIONS = { type: 'svg', errorCorrectionLevel: 'M', margin: 2 } as const;

/** The SVG markup of a QR code encoding `paymentUri` (an EIP-681 transfer request) for a wallet to scan. */
export function paymentQrSvg(paymentUri: string): Promise<string> {
  return QRCode.toString(paymentUri, PAYMENT_QR_OPTIONS);
}
