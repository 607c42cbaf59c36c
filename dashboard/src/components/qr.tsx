import QRCode from 'qrcode';
import { useEffect, useState } from 'preact/hooks';

/** A QR code of `text` as an SVG data URL (the CSP allows data: images, nothing inline). */
export function QrCode({ text, label }: { text: string; label: string }) {
  const [src, setSrc] = useState<string>();
  useEffect(() => {
    let current = true;
    QRCode.toString(text, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' }).then((svg) => {
      if (current) setSrc(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`);
    });
    return () => {
      current = false;
    };
  }, [text]);
  return (
    <div class="qr">
      {src ? <img src={src} alt={label} /> : <span role="status">Drawing the QR code…</span>}
    </div>
  );
}
