export function Paymaster() { return <p>Coming soon</p>; }
