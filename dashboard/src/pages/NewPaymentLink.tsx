export function NewPaymentLink() { return <p>Coming soon</p>; }
